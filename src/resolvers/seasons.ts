import type { Season } from '../db/seasons.js';
import type { Board } from '../model/board.js';
import type { Context } from './context.js';

export type { Season };

/** What answers the season fields (seasonResults is a read: resolvers/reads.ts). */

/** Board.seasons. */
export const seasons = (board: Board, ctx: Context): Promise<Season[]> => ctx.records.seasons(board);

/** Board.currentSeason. */
export const currentSeason = (board: Board, ctx: Context): Promise<Season | null> => ctx.records.currentSeason(board);

/** Mutation.startSeason. */
export const startSeason = (
  args: { board: string; name: string; startsAt?: Date | null | undefined; endsAt?: Date | null | undefined },
  ctx: Context,
): Promise<Season> => ctx.writes.startSeason({ ...args, name: args.name.trim() });

/** Mutation.closeSeason. */
export const closeSeason = (args: { board: string }, ctx: Context): Promise<Season> => ctx.writes.closeSeason(args.board);
