import type { OvertakenView } from '../pubsub/friend-overtook.js';
import type { Context } from './context.js';

export type { OvertakenView };

/** Subscription.friendOvertook: each overtaking of the player from now on (src/pubsub/friend-overtook.ts). */
export const watchFriendOvertook = (args: { board: string; playerId: string }, ctx: Context) => ctx.live.overtaken(args, ctx.signal);
