import { insertBoard } from '../db/boards.js';
import { type Aggregate, type Board, DEFAULT_RETENTION, type Period, type ScoreOrder } from '../model/board.js';
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
}

/** Creates a board; the input type has already checked each field. ALL_TIME is always kept. */
export async function createBoard(ctx: Context, input: CreateBoardInput): Promise<Board> {
  const periods = [...new Set<Period>(['ALL_TIME', ...input.periods])];
  const board = await insertBoard(ctx.services.database.db, {
    ...input,
    periods,
    regions: [...new Set(input.regions)],
    retention: DEFAULT_RETENTION,
  });
  if (!board) throw badInput(`A board "${input.id}" exists already.`);
  return ctx.services.boards.remember(board);
}
