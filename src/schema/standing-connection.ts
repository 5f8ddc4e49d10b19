import { MAX_PAGE } from '../model/contract.js';
import type { PageInfo, StandingConnection, StandingEdge } from '../resolvers/views.js';
import * as reads from '../resolvers/reads.js';
import { builder } from './builder.js';
import { RANK_STYLE_ARG } from './enums.js';
import { bucketArgs, bucketArgsSchema } from './bucket-args.js';
import { StandingRef } from './standing.js';
import { intRange } from './validation.js';

export const StandingEdgeRef = builder.objectRef<StandingEdge>('StandingEdge');

StandingEdgeRef.implement({
  fields: (t) => ({
    cursor: t.exposeString('cursor', { description: "Opaque. Built from the entry's score and player, never from an offset." }),
    node: t.expose('node', { type: StandingRef }),
  }),
});

export const PageInfoRef = builder.objectRef<PageInfo>('PageInfo');

PageInfoRef.implement({
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage'),
    endCursor: t.exposeString('endCursor', { nullable: true }),
  }),
});

export const StandingConnectionRef = builder.objectRef<StandingConnection>('StandingConnection');

StandingConnectionRef.implement({
  fields: (t) => ({
    edges: t.field({ type: [StandingEdgeRef], resolve: (connection) => reads.chunked(connection.edges) }),
    pageInfo: t.expose('pageInfo', { type: PageInfoRef }),
  }),
});

builder.queryFields((t) => ({
  standings: t.field({
    type: StandingConnectionRef,
    description:
      'The whole board page by page (first: 1 to 1,000). Rows whose scores do not change are never skipped or repeated between pages, however other rows move.',
    args: {
      ...bucketArgs(t.arg),
      first: t.arg.int({ required: true, defaultValue: 50 }),
      after: t.arg.string(),
      rankStyle: t.arg(RANK_STYLE_ARG),
    },
    validate: bucketArgsSchema.extend({ first: intRange(1, MAX_PAGE, 'first') }),
    resolve: (_root, args, ctx, info) => reads.standings(args, ctx, info),
  }),
}));
