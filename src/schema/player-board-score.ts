import * as players from '../resolvers/players.js';
import type { PlayerBucketScore } from '../resolvers/players.js';
import { BoardRef } from './board.js';
import { builder } from './builder.js';
import { PeriodEnum } from './enums.js';
import { PlayerRef } from './player.js';
import { StandingRef } from './standing.js';

export const PlayerBoardScoreRef = builder.objectRef<PlayerBucketScore>('PlayerBoardScore');

PlayerBoardScoreRef.implement({
  description: "A player's board score in one bucket, as PostgreSQL keeps it, and their standing there in the index.",
  fields: (t) => ({
    board: t.field({ type: BoardRef, resolve: (row) => row.board }),
    period: t.expose('period', { type: PeriodEnum }),
    bucket: t.exposeString('bucket'),
    region: t.exposeString('region', { nullable: true }),
    score: t.exposeFloat('score'),
    achievedAt: t.expose('reachedAt', { type: 'DateTime', description: 'When the player reached this score.' }),
    standing: t.field({
      type: StandingRef,
      nullable: true,
      description: 'Null while the player is not ranked there: flagged, or missing from the index (see BucketStatus.drift).',
      resolve: (row) => row.standing,
    }),
  }),
});

builder.objectFields(PlayerRef, (t) => ({
  boardScores: t.field({
    type: [PlayerBoardScoreRef],
    description:
      'Admin. Every bucket that can be read now where the player has a board score (ALL_TIME, the open season, calendar buckets still kept; globally and per region), by board, then period, newest bucket first.',
    authScopes: { admin: true },
    resolve: (player, _args, ctx) => players.boardScores(player, ctx),
  }),
}));
