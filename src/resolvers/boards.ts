import { type NewBoard, insertBoard } from '../db/boards.js';
import { type Board, PERIODS } from '../model/board.js';
import type { Context } from './context.js';
import { badInput } from './errors.js';

/** A board as createBoard receives it: everything but what the service sets (its epoch, its creation time). */
export type CreateBoardInput = NewBoard;

/** Creates a board; the input type has already checked each field. ALL_TIME is always kept. */
export async function createBoard(ctx: Context, input: CreateBoardInput): Promise<Board> {
  // Kept in the contract's order (ALL_TIME, SEASON, MONTHLY, WEEKLY, DAILY), whatever the input's.
  const periods = PERIODS.filter((period) => period === 'ALL_TIME' || input.periods.includes(period));
  const board = await insertBoard(ctx.services.database.db, {
    ...input,
    periods,
    regions: [...new Set(input.regions)],
  });
  if (!board) throw badInput(`A board "${input.id}" exists already.`);
  return ctx.services.boards.remember(board);
}
