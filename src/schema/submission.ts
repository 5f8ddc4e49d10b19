import { z } from 'zod';
import type { PeriodStanding } from '../resolvers/views.js';
import { MAX_BATCH } from '../model/contract.js';
import * as submissions from '../resolvers/submissions.js';
import type { SubmitScorePayload } from '../resolvers/submissions.js';
import { builder } from './builder.js';
import { PeriodEnum } from './enums.js';
import { StandingRef } from './standing.js';
import { idSchema, metadataSchema, regionSchema } from './validation.js';

/**
 * The rules of a SubmitScoreInput, checked as one object by the fields that take one (as
 * bucket-args.ts says why): a batch of 100 results is 100 objects to check, where a rule on each
 * input field costs the validation plugin's mapping of each. Loose: achievedAt is its scalar's to
 * check; metadata's shape is checked here, its type and size on the write path (writes/submit.ts).
 */
const submitScoreInputSchema = z.looseObject({
  board: idSchema,
  playerId: idSchema,
  score: z.number().finite('must be finite').int('must be a whole number').min(0, 'must not be negative'),
  matchId: idSchema,
  region: regionSchema.nullish(),
  metadata: metadataSchema.optional(),
  // Bounded here, before anything walks it; each value against its column on the write path.
  tieBreakValues: z.array(z.number()).max(4, 'at most 4 values, one per tie-break column').nullish(),
});

const SubmitScoreInputType = builder.inputType('SubmitScoreInput', {
  fields: (t) => ({
    board: t.id({ required: true }),
    playerId: t.id({ required: true }),
    score: t.float({ required: true, description: 'A whole number, 0 <= score <= board.maxScore.' }),
    matchId: t.id({
      required: true,
      description: '(board, matchId, playerId) is the idempotency key: a replay changes nothing and answers duplicate: true.',
    }),
    region: t.string({ description: 'One of board.regions; the score then also goes to that regional board.' }),
    achievedAt: t.field({
      type: 'DateTime',
      description:
        'When the score was achieved; defaults to when the server received it. It decides the bucket and breaks ties. At most 5 minutes in the future.',
    }),
    metadata: t.field({
      type: 'JSON',
      description:
        'What the game attaches to the result (the car, the deck, the replay id): a JSON object of at most 1,024 bytes as UTF-8. Served as Standing.metadata while this result sets the score; a replay keeps the first.',
    }),
    tieBreakValues: t.floatList({
      description: "One value per column of the board's tieBreaks, in order; required when the board has tieBreaks, refused when it has none.",
    }),
  }),
});

const PeriodStandingRef = builder.objectRef<PeriodStanding>('PeriodStanding');
PeriodStandingRef.implement({
  fields: (t) => ({
    period: t.expose('period', { type: PeriodEnum }),
    bucket: t.exposeString('bucket'),
    region: t.exposeString('region', { nullable: true }),
    startsAt: t.expose('startsAt', { type: 'DateTime', nullable: true }),
    endsAt: t.expose('endsAt', { type: 'DateTime', nullable: true }),
    standing: t.expose('standing', { type: StandingRef }),
    previousRank: t.exposeInt('previousRank', {
      nullable: true,
      description:
        "Added (issue 25): the player's rank in this bucket before this result (null when they had none): what the end-of-match screen shows as the change.",
    }),
  }),
});

const SubmitScorePayloadRef = builder.objectRef<SubmitScorePayload>('SubmitScorePayload');
SubmitScorePayloadRef.implement({
  fields: (t) => ({
    duplicate: t.exposeBoolean('duplicate', { description: 'True when this (board, matchId, playerId) had been recorded before; nothing changed.' }),
    improved: t.exposeBoolean('improved', { description: "True when the player's ALL_TIME board score changed." }),
    standings: t.expose('standings', {
      type: [PeriodStandingRef],
      description: "The player's standing in every bucket the score was written to, read after the write.",
    }),
  }),
});

builder.mutationFields((t) => ({
  submitScore: t.field({
    type: SubmitScorePayloadRef,
    description: 'Game servers. Recorded durably before it answers.',
    authScopes: { server: true },
    args: { input: t.arg({ type: SubmitScoreInputType, required: true }) },
    validate: z.looseObject({ input: submitScoreInputSchema }),
    resolve: (_root, args, ctx, info) => submissions.submitScore(args, ctx, info),
  }),
  submitScores: t.field({
    type: [SubmitScorePayloadRef],
    description:
      'Game servers. Up to 1,000 results at once (every player of a match), each handled as submitScore would be, in order; the answer lists them in the same order.',
    authScopes: { server: true },
    args: {
      inputs: t.arg({ type: [SubmitScoreInputType], required: true }),
    },
    validate: z.looseObject({ inputs: z.array(submitScoreInputSchema).max(MAX_BATCH, `at most ${MAX_BATCH} inputs`) }),
    resolve: (_root, args, ctx, info) => submissions.submitScores(args, ctx, info),
  }),
}));
