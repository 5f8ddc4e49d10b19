import { MAX_BINS, MAX_BUCKET_PAGE } from '../model/contract.js';
import * as buckets from '../resolvers/buckets.js';
import type { ObjectRef } from '@pothos/core';
import type { BucketStanding, ListedBucket, PageInfo, ScoreBin } from '../resolvers/buckets.js';
import { BoardRef } from './board.js';
import { bucketArgsSchema } from './bucket-args.js';
import { builder } from './builder.js';
import { PeriodEnum } from './enums.js';
import { StandingRef } from './standing.js';
import { PageInfoRef } from './standing-connection.js';
import { idSchema, intRange, regionSchema } from './validation.js';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

export const BucketRef = builder.objectRef<ListedBucket>('Bucket');

BucketRef.implement({
  description: 'Added (issue 21): one bucket of a board.',
  fields: (t) => ({
    period: t.expose('period', { type: PeriodEnum }),
    bucket: t.exposeString('bucket', { description: 'The label reads take as `bucket`: all, 2026-11, 2026-W48, 2026-11-29, or a season id.' }),
    region: t.exposeString('region', { nullable: true }),
    startsAt: t.expose('startsAt', { type: 'DateTime', nullable: true }),
    endsAt: t.expose('endsAt', { type: 'DateTime', nullable: true }),
    closed: t.exposeBoolean('closed', { description: 'True once the bucket has closed: its standings are final.' }),
    size: t.exposeInt('size', { description: 'How many players are ranked in it.' }),
  }),
});

/** `${name}Edge` and `${name}Connection` of a node type: a keyset page as the contract shapes one (edges with cursors, pageInfo). */
function connectionOf<T>(name: string, nodeRef: ObjectRef<Types, T>) {
  const edgeRef = builder.objectRef<{ cursor: string; node: T }>(`${name}Edge`);
  edgeRef.implement({
    fields: (t) => ({
      cursor: t.exposeString('cursor'),
      // The node is the ref's type; Pothos's result type of a generic one is more than tsc can work out.
      node: t.field({ type: nodeRef, resolve: (edge) => edge.node as never }),
    }),
  });
  const connectionRef = builder.objectRef<{ edges: { cursor: string; node: T }[]; pageInfo: PageInfo }>(`${name}Connection`);
  connectionRef.implement({
    fields: (t) => ({
      edges: t.field({ type: [edgeRef], resolve: (connection) => connection.edges }),
      pageInfo: t.expose('pageInfo', { type: PageInfoRef }),
    }),
  });
  return connectionRef;
}

const BucketStandingRef = builder.objectRef<BucketStanding>('BucketStanding');
BucketStandingRef.implement({
  description: 'Added (issue 21).',
  fields: (t) => ({
    bucket: t.expose('bucket', { type: BucketRef }),
    standing: t.expose('standing', { type: StandingRef }),
  }),
});

const BucketConnectionRef = connectionOf('Bucket', BucketRef);
const BucketStandingConnectionRef = connectionOf('BucketStanding', BucketStandingRef);

const ScoreBinRef = builder.objectRef<ScoreBin>('ScoreBin');
ScoreBinRef.implement({
  description: "Added (issue 21): one bin of a bucket's score distribution.",
  fields: (t) => ({
    from: t.exposeFloat('from'),
    to: t.exposeFloat('to'),
    players: t.exposeInt('players'),
  }),
});

const FIRST_BUCKETS = intRange(1, MAX_BUCKET_PAGE, 'first');

builder.objectFields(BoardRef, (t) => ({
  periodBuckets: t.field({
    type: BucketConnectionRef,
    description:
      'Added (issue 21): the buckets of a period that can still be read (within retention; for SEASON every season), newest first, the open one first. (The admin-only `buckets` field stays as it is.)',
    args: {
      period: t.arg({ type: PeriodEnum, required: true }),
      region: t.arg.string({ validate: regionSchema.nullish() }),
      first: t.arg.int({ required: true, defaultValue: 20, validate: FIRST_BUCKETS }),
      after: t.arg.string(),
    },
    resolve: (board, args, ctx) => buckets.periodBuckets(board, args, ctx),
  }),
  nextReset: t.field({
    type: 'DateTime',
    nullable: true,
    description:
      "Added (issue 21): when the period's open bucket ends, i.e. its next reset; null for ALL_TIME, and for SEASON when no season is open or the open one has no endsAt.",
    args: {
      period: t.arg({ type: PeriodEnum, required: true }),
      region: t.arg.string({ validate: regionSchema.nullish() }),
    },
    resolve: (board, args, ctx) => buckets.nextReset(board, args, ctx),
  }),
}));

builder.queryFields((t) => ({
  history: t.field({
    type: BucketStandingConnectionRef,
    description: "Added (issue 21): the player's final standing in each closed bucket of a period where they had one, newest first, within retention.",
    args: {
      board: t.arg.id({ required: true }),
      playerId: t.arg.id({ required: true }),
      period: t.arg({ type: PeriodEnum, required: true }),
      region: t.arg.string(),
      first: t.arg.int({ required: true, defaultValue: 30 }),
      after: t.arg.string(),
    },
    validate: bucketArgsSchema.extend({ playerId: idSchema, first: FIRST_BUCKETS }),
    resolve: (_root, args, ctx, info) => buckets.history(args, ctx, info),
  }),
  scoreDistribution: t.field({
    type: [ScoreBinRef],
    description:
      "Added (issue 21): how a bucket's scores spread: `bins` (1 to 100) equal-width bins from its lowest to its highest score, each with how many players it holds (ZCOUNT per bin, summed over shards).",
    // As bucketArgs, without its description of `bucket`: the contract gives this field's arguments none.
    args: {
      board: t.arg.id({ required: true }),
      period: t.arg({ type: PeriodEnum, required: true, defaultValue: 'ALL_TIME' }),
      bucket: t.arg.string(),
      region: t.arg.string(),
      bins: t.arg.int({ required: true, defaultValue: 20 }),
    },
    validate: bucketArgsSchema.extend({ bins: intRange(1, MAX_BINS, 'bins') }),
    resolve: (_root, args, ctx) => buckets.scoreDistribution(args, ctx),
  }),
}));
