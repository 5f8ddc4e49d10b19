import * as players from '../resolvers/players.js';
import type { PlayerFlag } from '../resolvers/players.js';
import { builder } from './builder.js';
import { PlayerRef } from './player.js';
import { intRange } from './validation.js';

export const PlayerFlagRef = builder.objectRef<PlayerFlag>('PlayerFlag');

const FlagResultRef = builder.objectRef<NonNullable<PlayerFlag['result']>>('FlagResult');

FlagResultRef.implement({
  description: "Added (issue 59): the result that flagged a player automatically, tripping its board's suspectAbove or suspectJump.",
  fields: (t) => ({
    boardId: t.exposeID('boardId'),
    matchId: t.exposeString('matchId'),
    score: t.exposeFloat('score'),
    tieBreakValues: t.exposeFloatList('tieBreakValues'),
    achievedAt: t.field({ type: 'DateTime', resolve: (result) => new Date(result.achievedAt) }),
  }),
});

PlayerFlagRef.implement({
  description: 'Why and since when a player is hidden from every board (see flagPlayer).',
  fields: (t) => ({
    player: t.field({ type: PlayerRef, resolve: (flag) => flag.player }),
    reason: t.exposeString('reason'),
    flaggedAt: t.expose('flaggedAt', { type: 'DateTime', description: 'When the player was first flagged; flagging again keeps it and replaces the reason.' }),
    result: t.field({
      type: FlagResultRef,
      nullable: true,
      description: "Added (issue 59): the result that tripped a board's suspectAbove or suspectJump (reason 'suspect: …'); null when flagged by hand.",
      resolve: (flag) => flag.result,
    }),
  }),
});

builder.objectFields(PlayerRef, (t) => ({
  flag: t.field({
    type: PlayerFlagRef,
    nullable: true,
    description: 'Admin. Set while the player is flagged.',
    authScopes: { admin: true },
    resolve: (player, _args, ctx) => players.flag(player, ctx),
  }),
}));

builder.queryFields((t) => ({
  flaggedPlayers: t.field({
    type: [PlayerFlagRef],
    description: 'Admin. The flagged players, most recently flagged first (first: 1 to 1,000).',
    authScopes: { admin: true },
    args: { first: t.arg.int({ required: true, defaultValue: 100, validate: intRange(1, 1_000, 'first') }) },
    resolve: (_root, args, ctx) => players.flaggedPlayers(args, ctx),
  }),
}));
