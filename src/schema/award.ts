import { MAX_PAGE } from '../model/contract.js';
import * as buckets from '../resolvers/buckets.js';
import type { Award, AwardConnection } from '../resolvers/buckets.js';
import { bucketArgsSchema } from './bucket-args.js';
import { builder } from './builder.js';
import { PeriodEnum } from './enums.js';
import { StandingRef } from './standing.js';
import { PageInfoRef } from './standing-connection.js';
import { intRange } from './validation.js';

/** A closed bucket's awards (issue 58): Award, AwardEdge, AwardConnection and Query.awards. */

export const AwardRef = builder.objectRef<Award>('Award');

AwardRef.implement({
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Stable: the board, bucket, region, band and player; grant each once.' }),
    band: t.exposeString('band'),
    standing: t.expose('standing', { type: StandingRef }),
  }),
});

const AwardEdgeRef = builder.objectRef<AwardConnection['edges'][number]>('AwardEdge');

AwardEdgeRef.implement({
  fields: (t) => ({
    cursor: t.exposeString('cursor'),
    node: t.expose('node', { type: AwardRef }),
  }),
});

const AwardConnectionRef = builder.objectRef<AwardConnection>('AwardConnection');

AwardConnectionRef.implement({
  fields: (t) => ({
    edges: t.expose('edges', { type: [AwardEdgeRef] }),
    pageInfo: t.expose('pageInfo', { type: PageInfoRef }),
  }),
});

builder.queryFields((t) => ({
  awards: t.field({
    type: AwardConnectionRef,
    description: 'The awards of a closed bucket, band by band in rank order; BAD_USER_INPUT while it is open.',
    args: {
      board: t.arg.id({ required: true }),
      period: t.arg({ type: PeriodEnum, required: true }),
      bucket: t.arg.string({ required: true }),
      region: t.arg.string(),
      first: t.arg.int({ required: true, defaultValue: 100 }),
      after: t.arg.string(),
    },
    validate: bucketArgsSchema.extend({ first: intRange(1, MAX_PAGE, 'first') }),
    resolve: (_root, args, ctx, info) => buckets.awards(args, ctx, info),
  }),
}));
