import type { TopEvent } from '../resolvers/views.js';
import type { TopBoard } from '../resolvers/views.js';
import * as reads from '../resolvers/reads.js';
import { builder } from './builder.js';
import { bucketArgs, bucketArgsSchema } from './bucket-args.js';
import { PeriodEnum, RANK_STYLE_ARG } from './enums.js';
import { StandingRef } from './standing.js';
import { intRange } from './validation.js';

export const TopBoardRef = builder.objectRef<TopBoard>('TopBoard');

TopBoardRef.implement({
  fields: (t) => ({
    boardId: t.exposeID('boardId'),
    period: t.expose('period', { type: PeriodEnum }),
    bucket: t.exposeString('bucket', { description: "The bucket's label: all, 2026-11, 2026-W48, 2026-11-29, or a season id." }),
    region: t.exposeString('region', { nullable: true }),
    startsAt: t.expose('startsAt', { type: 'DateTime', nullable: true, description: "The bucket's first instant; null for ALL_TIME." }),
    endsAt: t.expose('endsAt', {
      type: 'DateTime',
      nullable: true,
      description: 'The instant the bucket ends (the next bucket begins); null for ALL_TIME and an open-ended season.',
    }),
    entries: t.field({ type: [StandingRef], resolve: (top) => reads.chunked(top.entries) }),
    size: t.exposeInt('size', { description: 'How many players are ranked in the bucket.' }),
    asOf: t.expose('asOf', { type: 'DateTime', description: 'When this view was read from the index.' }),
  }),
});

builder.queryFields((t) => ({
  top: t.field({
    type: TopBoardRef,
    description: 'The first `limit` standings (1 to 1,000). Served from a cache at most about one second old; asOf says how old.',
    args: {
      ...bucketArgs(t.arg),
      limit: t.arg.int({ required: true, defaultValue: 10 }),
      rankStyle: t.arg(RANK_STYLE_ARG),
    },
    validate: bucketArgsSchema.extend({ limit: intRange(1, 1000, 'limit') }),
    resolve: (_root, args, ctx, info) => reads.top(args, ctx, info),
  }),
}));

builder.subscriptionFields((t) => ({
  topChanged: t.field({
    type: TopBoardRef,
    description:
      'The top `limit` (1 to board.topSize) of one bucket: the current view at once, then a new view each time its entries change (who, their order, or a score). Bursts are coalesced into at most one event per 100 ms per bucket.',
    args: {
      ...bucketArgs(t.arg),
      limit: t.arg.int({ required: true, defaultValue: 10 }),
      rankStyle: t.arg(RANK_STYLE_ARG),
    },
    validate: bucketArgsSchema.extend({ limit: intRange(1, 100, 'limit') }),
    subscribe: (_root, args, ctx) => reads.watchTop(args, ctx),
    resolve: (event: TopEvent, args, ctx) => reads.topChanged(event, args, ctx),
  }),
}));
