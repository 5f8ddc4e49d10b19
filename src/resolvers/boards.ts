import { insertBoard } from '../db/boards.js';
import { type Aggregate, type Board, PERIODS, type Period, type Retention, type ScoreOrder } from '../model/board.js';
import type { Context } from './context.js';
import { badInput } from './errors.js';

export interface CreateBoardInput {
  id: string;
  title: string;
  order: ScoreOrder;
  aggregate: Aggregate;
  maxScore: number;
  periods: Period[];
  regions: string[];
  topSize: number;
  retention: Retention;
}

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
