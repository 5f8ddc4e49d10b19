import type { Board } from '../model/board.js';
import type { Context } from './context.js';

/** What answers the tournament fields (issue 57): the arguments in, one call of the write side (or its records) out. */

/** Mutation.joinBoard: a key scoped to boards joins players to those only. */
export const joinBoard = (args: { board: string; playerId: string }, ctx: Context): Promise<boolean> =>
  ctx.writes.joinBoard(args.board, args.playerId, ctx.caller?.boards);

/** Board.joined. */
export const joined = (board: Board, ctx: Context): Promise<number> => ctx.records.joined(board);

/** Query.attemptsUsed. */
export const attemptsUsed = (args: { board: string; playerId: string }, ctx: Context): Promise<number> => ctx.records.attemptsUsed(args.board, args.playerId);
