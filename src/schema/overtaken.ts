import type { OvertakenView } from '../resolvers/overtaken.js';
import * as overtaken from '../resolvers/overtaken.js';
import { builder } from './builder.js';
import { bucketArgsSchema } from './bucket-args.js';
import { PeriodEnum } from './enums.js';
import { StandingRef } from './standing.js';
import { idSchema } from './validation.js';

/** Overtaken and Subscription.friendOvertook (issue 58): a friend passing a player, live (src/pubsub/friend-overtook.ts). */
const OvertakenRef = builder.objectRef<OvertakenView>('Overtaken');

OvertakenRef.implement({
  fields: (t) => ({
    boardId: t.exposeID('boardId'),
    period: t.field({ type: PeriodEnum, resolve: (view) => view.period }),
    bucket: t.exposeString('bucket'),
    by: t.field({ type: StandingRef, description: 'The friend who passed, as they stand now.', resolve: (view) => view.by }),
    you: t.field({ type: StandingRef, description: 'The player who was passed, as they stand now.', resolve: (view) => view.you }),
    at: t.field({ type: 'DateTime', resolve: (view) => view.at }),
  }),
});

builder.subscriptionFields((t) => ({
  friendOvertook: t.field({
    type: OvertakenRef,
    description: "Each time one of the player's friends passes them on the board (ALL_TIME and the board's shortest period).",
    args: { board: t.arg.id({ required: true }), playerId: t.arg.id({ required: true }) },
    validate: bucketArgsSchema.extend({ playerId: idSchema }),
    subscribe: (_root, args, ctx) => overtaken.watchFriendOvertook(args, ctx),
    resolve: (view: OvertakenView) => view,
  }),
}));
