import { z } from 'zod';
import type { RewardBand } from '../model/board.js';
import { MAX_BAND_NAME_LENGTH, MAX_BAND_RANK, MAX_REWARD_BANDS } from '../model/rewards.js';
import { builder } from './builder.js';
import { intRange, textSchema } from './validation.js';

/** A board's prize bands (issue 58): the object Board.rewards answers and the input createBoard and updateBoard take. */

export const RewardBandRef = builder.objectRef<RewardBand>('RewardBand');

RewardBandRef.implement({
  description: 'Added (issue 23): a prize band. Exactly one of (fromRank and toRank) or topPercent.',
  fields: (t) => ({
    name: t.exposeString('name'),
    fromRank: t.exposeInt('fromRank', { nullable: true }),
    toRank: t.exposeInt('toRank', { nullable: true }),
    topPercent: t.exposeFloat('topPercent', { nullable: true }),
  }),
});

export const RewardBandInput = builder.inputType('RewardBandInput', {
  description: 'Added (issue 23): a prize band. Exactly one of (fromRank and toRank) or topPercent.',
  // Each field's form here; the band as a whole (exactly one kind, distinct names) by createBoard and updateBoard.
  fields: (t) => ({
    name: t.string({ required: true, validate: textSchema(MAX_BAND_NAME_LENGTH) }),
    fromRank: t.int({ validate: intRange(1, MAX_BAND_RANK, 'fromRank').nullish() }),
    toRank: t.int({ validate: intRange(1, MAX_BAND_RANK, 'toRank').nullish() }),
    topPercent: t.float({ validate: z.number().gt(0, 'topPercent must be above 0').max(100, 'topPercent must be at most 100').nullish() }),
  }),
});

/** A board's bands: bounded before anything walks them. */
export const rewardBandsSchema = z.array(z.unknown()).max(MAX_REWARD_BANDS, `at most ${MAX_REWARD_BANDS} reward bands`);
