import { z } from 'zod';
import type { League } from '../model/board.js';
import { MAX_COHORT_SIZE, MAX_TIERS, MAX_TIER_NAME_LENGTH, MIN_COHORT_SIZE } from '../model/league.js';
import { builder } from './builder.js';
import { PeriodEnum } from './enums.js';
import { intRange, textSchema } from './validation.js';

/** A board's league settings (issue 57): the object Board.league answers and the input createBoard takes. */

export const LeagueRef = builder.objectRef<League>('League');

LeagueRef.implement({
  description: "Added (issue 22): a board's league: tiers of small cohorts, re-formed every round, with promotion and demotion at each round's close.",
  fields: (t) => ({
    tiers: t.exposeStringList('tiers', { description: "Tier names, best first, 2 to 20 of them. A player's first round is in the last tier." }),
    cohortSize: t.exposeInt('cohortSize', { description: 'Players per cohort, 5 to 1,000.' }),
    promote: t.exposeInt('promote', { description: "How many of each cohort's top move up a tier at the round's close (none from the first tier)." }),
    demote: t.exposeInt('demote', { description: "How many of each cohort's bottom move down a tier (none from the last tier)." }),
    period: t.expose('period', {
      type: PeriodEnum,
      description: "The period whose buckets are the rounds: DAILY, WEEKLY, MONTHLY or SEASON; it must be one of the board's periods.",
    }),
  }),
});

export const LeagueInput = builder.inputType('LeagueInput', {
  fields: (t) => ({
    // Bounded before anything walks them: 20 names of 40 characters. The rest (distinct names, the period) is checked by createBoard.
    tiers: t.stringList({ required: true, validate: z.array(textSchema(MAX_TIER_NAME_LENGTH)).max(MAX_TIERS, `at most ${MAX_TIERS} tiers`) }),
    cohortSize: t.int({ required: true, defaultValue: 50, validate: intRange(MIN_COHORT_SIZE, MAX_COHORT_SIZE, 'cohortSize') }),
    promote: t.int({ required: true, defaultValue: 5, validate: intRange(0, MAX_COHORT_SIZE, 'promote') }),
    demote: t.int({ required: true, defaultValue: 5, validate: intRange(0, MAX_COHORT_SIZE, 'demote') }),
    period: t.field({ type: PeriodEnum, required: true, defaultValue: 'WEEKLY' }),
  }),
});

export const LeagueOutcomeEnum = builder.enumType('LeagueOutcome', {
  values: { PROMOTED: {}, STAYED: {}, DEMOTED: {} } as const,
});
