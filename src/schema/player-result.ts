import * as players from '../resolvers/players.js';
import type { LoggedResult } from '../resolvers/players.js';
import { BoardRef } from './board.js';
import { builder } from './builder.js';
import { PlayerRef } from './player.js';
import { intRange } from './validation.js';

export const PlayerResultRef = builder.objectRef<LoggedResult>('PlayerResult');

PlayerResultRef.implement({
  description: 'One accepted result of the score log.',
  fields: (t) => ({
    board: t.field({ type: BoardRef, resolve: (result, _args, ctx) => players.boardOf(result, ctx) }),
    matchId: t.exposeID('matchId'),
    score: t.exposeFloat('score'),
    region: t.exposeString('region', { nullable: true }),
    achievedAt: t.expose('achievedAt', { type: 'DateTime' }),
    recordedAt: t.expose('recordedAt', { type: 'DateTime', description: 'When the service accepted it.' }),
  }),
});

builder.objectFields(PlayerRef, (t) => ({
  recentResults: t.field({
    type: [PlayerResultRef],
    description:
      "Admin. The player's latest accepted results on every board, newest achievedAt first (first: 1 to 100). Months detached for archiving are not read.",
    authScopes: { admin: true },
    args: { first: t.arg.int({ required: true, defaultValue: 20, validate: intRange(1, 100, 'first') }) },
    resolve: (player, args, ctx) => players.recentResults(player, args, ctx),
  }),
}));
