import * as admin from '../resolvers/admin.js';
import type { RebuildJob } from '../resolvers/admin.js';
import { BoardRef } from './board.js';
import { builder } from './builder.js';
import { bucketArgs, bucketArgsSchema } from './bucket-args.js';
import { PeriodEnum } from './enums.js';
import { idSchema } from './validation.js';

const RebuildStateEnum = builder.enumType('RebuildState', {
  values: {
    RUNNING: { description: 'Reading board scores from PostgreSQL into a new sorted set; readers still see the old one.' },
    DONE: { description: 'The new sorted set was swapped in; size says how many players it ranks.' },
    FAILED: { description: 'Stopped before the swap; the bucket is as it was. error says why.' },
  } as const,
});

export const RebuildRef = builder.objectRef<RebuildJob>('Rebuild');

RebuildRef.implement({
  description: "A rebuild of one bucket's ranking index from PostgreSQL, run in the background (see startRebuild).",
  fields: (t) => ({
    id: t.exposeID('id'),
    board: t.field({ type: BoardRef, resolve: (job, _args, ctx) => admin.rebuildBoard(job, ctx) }),
    period: t.expose('period', { type: PeriodEnum }),
    bucket: t.exposeString('bucket'),
    region: t.exposeString('region', { nullable: true }),
    state: t.expose('state', { type: RebuildStateEnum }),
    rowsRead: t.exposeInt('rowsRead', { description: 'Board scores read from PostgreSQL so far.' }),
    rowsTotal: t.exposeInt('rowsTotal', {
      description:
        'The rankable board scores the bucket holds as the rebuild starts: what rowsRead counts towards. 0 until counted (in the background, beside the rebuild); known once DONE.',
    }),
    size: t.exposeInt('size', { nullable: true, description: 'Players ranked after the swap; set once DONE.' }),
    error: t.exposeString('error', { nullable: true, description: 'Why it FAILED.' }),
    startedAt: t.expose('startedAt', { type: 'DateTime' }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
  }),
});

builder.queryFields((t) => ({
  rebuild: t.field({
    type: RebuildRef,
    nullable: true,
    description: 'Admin. A rebuild started with startRebuild (kept for a day), from any process of the deployment; null when unknown.',
    authScopes: { admin: true },
    args: { id: t.arg.id({ required: true, validate: idSchema }) },
    resolve: (_root, args, ctx) => admin.rebuild(args, ctx),
  }),
}));

builder.mutationFields((t) => ({
  startRebuild: t.field({
    type: RebuildRef,
    description:
      "Admin. Starts rebuilding one bucket's ranking index from PostgreSQL in the background, as rebuildBoard does, and answers at once; poll rebuild(id) for its progress. RATE_LIMITED while another rebuild of the bucket runs.",
    authScopes: { admin: true },
    args: bucketArgs(t.arg),
    validate: bucketArgsSchema,
    resolve: (_root, args, ctx) => admin.startRebuild(args, ctx),
  }),
}));
