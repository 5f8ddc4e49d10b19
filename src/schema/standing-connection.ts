import type { ArgBuilder } from '@pothos/core';
import { z } from 'zod';
import { MAX_PAGE } from '../model/contract.js';
import type { PageInfo, StandingConnection, StandingEdge } from '../resolvers/views.js';
import * as reads from '../resolvers/reads.js';
import { builder } from './builder.js';
import { RANK_STYLE_ARG } from './enums.js';
import { bucketArgs, bucketArgsSchema } from './bucket-args.js';
import { StandingRef } from './standing.js';
import { intRange } from './validation.js';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** The arguments that place a page of standings besides `first`/`after` (issue 25): backwards, or from a rank. Their rules are pageArgsSchema's. */
export function pageArgs(arg: ArgBuilder<Types>) {
  return {
    before: arg.string({ description: 'Added (issue 25): the page ending just before this cursor, with `last`.' }),
    last: arg.int({ description: "Added (issue 25): 1 to 1,000; with before (or alone: the board's last page)." }),
    fromRank: arg.int({ description: 'Added (issue 25): start the page at this rank (1-based), in O(log N); not with after or before.' }),
  };
}

/** The rules of a page's own arguments: `first` and `last` in 1..MAX_PAGE, `fromRank` at least 1 (their mixes: pageArgsRule). */
export const pageArgsShape = {
  first: intRange(1, MAX_PAGE, 'first'),
  last: intRange(1, MAX_PAGE, 'last').nullish(),
  fromRank: z.number().int('fromRank must be a whole number').min(1, 'fromRank must be at least 1').nullish(),
};

/** Whether an optional argument was given. */
const given = (value: unknown) => value !== null && value !== undefined;

/** A page goes one way and starts at one place: `fromRank` alone (not with after, before or last), `after` not with before or last, `before` with last. */
export function pageArgsRule(args: { after?: unknown; before?: unknown; last?: unknown; fromRank?: unknown }, ctx: z.RefinementCtx): void {
  if (given(args.fromRank) && (given(args.after) || given(args.before) || given(args.last)))
    ctx.addIssue({ code: 'custom', path: ['fromRank'], message: 'fromRank starts a page on its own: not with after, before or last' });
  else if (given(args.after) && (given(args.before) || given(args.last)))
    ctx.addIssue({ code: 'custom', path: ['after'], message: 'a page goes one way: after (with first) or before (with last), not both' });
  else if (given(args.before) && !given(args.last))
    ctx.addIssue({ code: 'custom', path: ['before'], message: 'before goes with last: the page of `last` rows ending just before the cursor' });
}

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
    hasPreviousPage: t.exposeBoolean('hasPreviousPage', { description: 'Added (issue 25).' }),
    startCursor: t.exposeString('startCursor', { nullable: true, description: 'Added (issue 25).' }),
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
      ...pageArgs(t.arg),
      rankStyle: t.arg(RANK_STYLE_ARG),
    },
    validate: bucketArgsSchema.extend(pageArgsShape).superRefine(pageArgsRule),
    resolve: (_root, args, ctx, info) => reads.standings(args, ctx, info),
  }),
}));
