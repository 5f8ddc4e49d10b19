import { z } from 'zod';
import { type Board, DEFAULT_CLOSE_GRACE_SECONDS, MAX_CLOSE_GRACE_SECONDS, MAX_INACTIVE_AFTER_DAYS, type RegionTimeZone } from '../model/board.js';
import { MAX_BOARD_SCORE, MAX_REGIONS, MAX_SHARDS } from '../model/contract.js';
import * as boards from '../resolvers/boards.js';
import * as reads from '../resolvers/reads.js';
import { builder } from './builder.js';
import { bucketArgs, bucketArgsSchema } from './bucket-args.js';
import { RetentionInput, RetentionRef } from './retention.js';
import { LeagueInput, LeagueRef } from './league.js';
import { RewardBandInput, RewardBandRef, rewardBandsSchema } from './reward.js';
import { ResultRateInput, ResultRateRef, TieBreakInput, TieBreakRef, tieBreaksSchema } from './tie-break.js';
import { AggregateEnum, PeriodEnum, RankStyleEnum, ScoreOrderEnum } from './enums.js';
import { boardIdSchema, idSchema, intRange, regionSchema, textSchema } from './validation.js';

const TITLE = textSchema(200);
const INACTIVE_AFTER_DAYS = intRange(1, MAX_INACTIVE_AFTER_DAYS, 'inactiveAfterDays').nullish();
const INACTIVE_AFTER_DAYS_INPUT =
  'Days without a result on the board after which a player leaves its ALL_TIME and SEASON rankings (every region too) until their next result or a rebuild; their scores stay recorded. 1 to 36,500; null: never.';

const CLOSE_GRACE_SECONDS = intRange(0, MAX_CLOSE_GRACE_SECONDS, 'closeGraceSeconds');

const MIN_SCORE = z.number().int('must be a whole number').min(0, 'must be at least 0').max(MAX_BOARD_SCORE, `must be at most ${MAX_BOARD_SCORE}`);
const SUSPECT_ABOVE = z.number().min(0, 'must be at least 0').max(Number.MAX_SAFE_INTEGER, `must be at most ${Number.MAX_SAFE_INTEGER}`);
const SUSPECT_JUMP = z.number().gt(1, 'must be above 1 (a result this many times the previous best)').max(1e9, 'must be at most 1,000,000,000');

const MAX_SCORE = z
  .number()
  .int('must be a whole number')
  .positive('must be positive')
  .max(MAX_BOARD_SCORE, `must be at most ${MAX_BOARD_SCORE}, the largest score the ranking packs exactly with its tie-break time`);

export const BoardRef = builder.objectRef<Board>('Board');

const RegionTimeZoneRef = builder.objectRef<RegionTimeZone>('RegionTimeZone');
RegionTimeZoneRef.implement({
  fields: (t) => ({
    region: t.exposeString('region'),
    timeZone: t.exposeString('timeZone'),
  }),
});

const RegionTimeZoneInput = builder.inputType('RegionTimeZoneInput', {
  fields: (t) => ({
    region: t.string({ required: true, validate: regionSchema }),
    timeZone: t.string({ required: true }),
  }),
});

BoardRef.implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    title: t.exposeString('title'),
    order: t.expose('order', { type: ScoreOrderEnum }),
    aggregate: t.expose('aggregate', { type: AggregateEnum }),
    maxScore: t.exposeFloat('maxScore', {
      description: 'The largest score (and, for SUM, the largest total) accepted; anything above is rejected at write time.',
    }),
    periods: t.expose('periods', { type: [PeriodEnum], description: 'The periods this board keeps. ALL_TIME is always among them.' }),
    regions: t.exposeStringList('regions', {
      description: 'Regional boards kept beside the global one; a submission with a region is written to both.',
    }),
    topSize: t.exposeInt('topSize', { description: 'How many entries topChanged watches at most.' }),
    retention: t.expose('retention', { type: RetentionRef }),
    shards: t.exposeInt('shards', {
      description: "How many sorted sets each of this board's buckets is split into, by a stable hash of the player id. Fixed at creation.",
    }),
    rankStyle: t.expose('rankStyle', { type: RankStyleEnum, description: 'How ranks are served when a read does not say.' }),
    timeZone: t.exposeString('timeZone', { description: 'An IANA time zone name (e.g. Europe/Paris). DAILY, WEEKLY and MONTHLY buckets follow its calendar.' }),
    regionTimeZones: t.expose('regionTimeZones', {
      type: [RegionTimeZoneRef],
      description: "Regions whose buckets follow a zone of their own; the others follow the board's.",
    }),
    inactiveAfterDays: t.exposeInt('inactiveAfterDays', {
      nullable: true,
      description:
        'Days without a result on the board after which a player leaves its ALL_TIME and SEASON rankings until their next result or a rebuild; null: never.',
    }),
    size: t.int({
      description: 'How many players are ranked in that bucket.',
      args: (() => {
        const { period, bucket, region } = bucketArgs(t.arg);
        return { period, bucket, region };
      })(),
      validate: bucketArgsSchema.pick({ region: true }),
      resolve: (board, args, ctx) => reads.size({ ...args, board: board.id }, ctx),
    }),
    closeGraceSeconds: t.int({
      description: 'Added (issue 21): how long after a bucket ends results achieved in it still count; then it closes and its standings are final.',
      resolve: (board) => board.closeGraceSeconds ?? DEFAULT_CLOSE_GRACE_SECONDS,
    }),
    league: t.field({ type: LeagueRef, nullable: true, description: 'Added (issue 22).', resolve: (board) => board.league ?? null }),
    joinRequired: t.boolean({
      description: 'Added (issue 22): tournaments. Only players who joined may have results (joinBoard).',
      resolve: (board) => board.joinRequired ?? false,
    }),
    maxPlayers: t.int({
      nullable: true,
      description: 'Added (issue 22): at most this many players may join, first come first served; null: no limit.',
      resolve: (board) => board.maxPlayers ?? null,
    }),
    maxAttempts: t.int({
      nullable: true,
      description: "Added (issue 22): at most this many results per player per bucket of the board's shortest period; null: no limit.",
      resolve: (board) => board.maxAttempts ?? null,
    }),
    rewards: t.field({
      type: [RewardBandRef],
      description: "Added (issue 23): the prize bands computed at every close of one of the board's buckets (see awards).",
      resolve: (board) => board.rewards ?? [],
    }),
    tieBreaks: t.field({ type: [TieBreakRef], resolve: (board) => board.tieBreaks ?? [] }),
    minScore: t.float({ description: 'The smallest score accepted (default 0).', resolve: (board) => board.minScore ?? 0 }),
    suspectAbove: t.float({
      nullable: true,
      description: "Results above this are recorded, and the player is flagged at once, reason 'suspect: …'; null: never.",
      resolve: (board) => board.suspectAbove ?? null,
    }),
    suspectJump: t.float({
      nullable: true,
      description:
        "A result more than this many times the player's previous best on the board (HIGH_FIRST; fewer times on LOW_FIRST) is recorded and flags the player; null: never.",
      resolve: (board) => board.suspectJump ?? null,
    }),
    resultRate: t.field({ type: ResultRateRef, nullable: true, resolve: (board) => board.resultRate ?? null }),
  }),
});

builder.queryFields((t) => ({
  boards: t.field({ type: [BoardRef], resolve: (_root, _args, ctx) => boards.boards(ctx) }),
  board: t.field({
    type: BoardRef,
    nullable: true,
    args: { id: t.arg.id({ required: true, validate: idSchema }) },
    resolve: (_root, args, ctx) => boards.board(args, ctx),
  }),
}));

const CreateBoardInput = builder.inputType('CreateBoardInput', {
  fields: (t) => ({
    id: t.id({ required: true, validate: boardIdSchema }),
    title: t.string({ required: true, validate: TITLE }),
    order: t.field({ type: ScoreOrderEnum, required: true, defaultValue: 'HIGH_FIRST' }),
    aggregate: t.field({ type: AggregateEnum, required: true, defaultValue: 'BEST' }),
    maxScore: t.float({ required: true, validate: MAX_SCORE }),
    periods: t.field({ type: [PeriodEnum], required: true, defaultValue: ['ALL_TIME'] }),
    regions: t.stringList({ required: true, defaultValue: [], validate: z.array(regionSchema).max(MAX_REGIONS, `at most ${MAX_REGIONS} regions`) }),
    topSize: t.int({ required: true, defaultValue: 10, validate: intRange(1, 100, 'topSize') }),
    retention: t.field({ type: RetentionInput, description: 'How long calendar buckets stay readable; the defaults where left out.' }),
    shards: t.int({
      description: `How many sorted sets each bucket is split into (1 to ${MAX_SHARDS}; default 1), by a stable hash of the player id, so that a bucket too big or too busy for one Redis node spreads over a cluster. Every read answers exactly as one sorted set would; reads cost about one command per shard. Fixed once created.`,
      validate: intRange(1, MAX_SHARDS, 'shards').nullish(),
    }),
    rankStyle: t.field({ type: RankStyleEnum, required: true, defaultValue: 'ORDINAL' }),
    timeZone: t.string({ required: true, defaultValue: 'UTC' }),
    regionTimeZones: t.field({ type: [RegionTimeZoneInput], required: true, defaultValue: [] }),
    inactiveAfterDays: t.int({ description: `${INACTIVE_AFTER_DAYS_INPUT} Default null.`, validate: INACTIVE_AFTER_DAYS }),
    closeGraceSeconds: t.int({
      required: true,
      defaultValue: DEFAULT_CLOSE_GRACE_SECONDS,
      description: 'Added (issue 21): 0 to 31,622,400 (366 days); default 300.',
      validate: CLOSE_GRACE_SECONDS,
    }),
    league: t.field({ type: LeagueInput, description: 'Added (issue 22): fixed at creation.' }),
    joinRequired: t.boolean({ required: true, defaultValue: false, description: 'Added (issue 22): fixed at creation.' }),
    maxPlayers: t.int({ description: 'Added (issue 22): null: no limit.', validate: intRange(1, 2_147_483_647, 'maxPlayers').nullish() }),
    maxAttempts: t.int({ description: 'Added (issue 22): null: no limit.', validate: intRange(1, 2_147_483_647, 'maxAttempts').nullish() }),
    rewards: t.field({ type: [RewardBandInput], description: 'Added (issue 23): at most 20 bands; default none.', validate: rewardBandsSchema.nullish() }),
    tieBreaks: t.field({
      type: [TieBreakInput],
      required: true,
      defaultValue: [],
      description: '0 to 4 columns, on BEST boards only; fixed at creation.',
      validate: tieBreaksSchema,
    }),
    minScore: t.float({ required: true, defaultValue: 0, validate: MIN_SCORE }),
    suspectAbove: t.float({ validate: SUSPECT_ABOVE.nullish() }),
    suspectJump: t.float({ validate: SUSPECT_JUMP.nullish() }),
    resultRate: t.field({ type: ResultRateInput }),
  }),
});

const UpdateBoardInput = builder.inputType('UpdateBoardInput', {
  fields: (t) => ({
    id: t.id({ required: true, validate: idSchema }),
    title: t.string({ validate: TITLE.nullish() }),
    topSize: t.int({ validate: intRange(1, 100, 'topSize').nullish() }),
    rankStyle: t.field({ type: RankStyleEnum, description: 'ORDINAL and COMPETITION may be swapped; to or from DENSE is refused.' }),
    addRegions: t.stringList({
      description: 'Regions to add; existing ones stay.',
      validate: z.array(regionSchema).max(MAX_REGIONS, `at most ${MAX_REGIONS} regions`).nullish(),
    }),
    maxScore: t.float({
      description: "Only upwards, and only while every existing bucket's packing stays exact; refused otherwise, saying so.",
      validate: MAX_SCORE.nullish(),
    }),
    inactiveAfterDays: t.int({
      description: `${INACTIVE_AFTER_DAYS_INPUT} Left out: unchanged. Set later, players already inactive leave at the job's next pass; cleared, those out return with their next result or a rebuild.`,
      validate: INACTIVE_AFTER_DAYS,
    }),
    closeGraceSeconds: t.int({ validate: CLOSE_GRACE_SECONDS.nullish() }),
    rewards: t.field({
      type: [RewardBandInput],
      description: 'Added (issue 23): replaces the bands whole ([]: none), from the next close on; left out: unchanged.',
      validate: rewardBandsSchema.nullish(),
    }),
    minScore: t.float({ description: 'Added (issue 24): only downwards.', validate: MIN_SCORE.nullish() }),
    suspectAbove: t.float({ description: 'Added (issue 24): null: never; left out: unchanged.', validate: SUSPECT_ABOVE.nullish() }),
    suspectJump: t.float({ description: 'Added (issue 24): null: never; left out: unchanged.', validate: SUSPECT_JUMP.nullish() }),
    resultRate: t.field({ type: ResultRateInput, description: 'Added (issue 24): null: no limit; left out: unchanged.' }),
  }),
});

builder.mutationFields((t) => ({
  updateBoard: t.field({
    type: BoardRef,
    description: "Admin. Changes a board's settings; every API process serves the change within a second.",
    authScopes: { admin: true },
    args: { input: t.arg({ type: UpdateBoardInput, required: true }) },
    resolve: (_root, args, ctx) => boards.updateBoard(args, ctx),
  }),
  createBoard: t.field({
    type: BoardRef,
    description: 'Admin.',
    authScopes: { admin: true },
    args: { input: t.arg({ type: CreateBoardInput, required: true }) },
    resolve: (_root, args, ctx) => boards.createBoard(args, ctx),
  }),
  deleteBoard: t.boolean({
    description:
      'Added (issue 25): deletes a board: its settings, results, board scores, seasons and index keys. Refused while any API key is scoped to it. Answers whether it existed.',
    authScopes: { admin: true },
    args: { id: t.arg.id({ required: true, validate: idSchema }) },
    resolve: (_root, args, ctx) => boards.deleteBoard(args, ctx),
  }),
  rebuildBoard: t.int({
    description: "Admin. Rebuilds one bucket's ranking index from the durable store and swaps it in atomically; answers the number of ranked players.",
    authScopes: { admin: true },
    args: bucketArgs(t.arg),
    validate: bucketArgsSchema,
    resolve: (_root, args, ctx) => boards.rebuildBoard(args, ctx),
  }),
}));
