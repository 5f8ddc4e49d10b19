import * as boards from '../resolvers/boards.js';
import type { BucketStatus } from '../resolvers/boards.js';
import { BoardRef } from './board.js';
import { builder } from './builder.js';
import { PeriodEnum } from './enums.js';

export const BucketStatusRef = builder.objectRef<BucketStatus>('BucketStatus');

BucketStatusRef.implement({
  description: "One of a board's buckets, as the index holds it and as PostgreSQL does.",
  fields: (t) => ({
    period: t.expose('period', { type: PeriodEnum }),
    bucket: t.exposeString('bucket', { description: 'The bucket label: all, 2026-11, 2026-W48, 2026-11-29, or a season id.' }),
    region: t.exposeString('region', { nullable: true }),
    size: t.exposeInt('size', { description: 'How many players its sorted set (every shard) in Redis ranks.' }),
    stored: t.exposeInt('stored', { description: "How many unflagged players' board scores PostgreSQL holds for it: what the sorted set should rank." }),
    drift: t.exposeInt('drift', {
      description:
        'stored - size, as the leaderboard_index_drift gauge reports it: 0 when the index agrees with PostgreSQL, positive when it misses players (rebuild the bucket), negative when it ranks extra ones.',
    }),
  }),
});

builder.objectFields(BoardRef, (t) => ({
  buckets: t.field({
    type: [BucketStatusRef],
    description:
      "Admin. The board's buckets that can be read now: each kept period's current bucket and the open season (globally and per region), then older buckets still kept, newest first; at most 100. Each is counted in Redis and in PostgreSQL.",
    authScopes: { admin: true },
    resolve: (board, _args, ctx) => boards.buckets(board, ctx),
  }),
}));
