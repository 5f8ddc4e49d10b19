import type { Board, Retention } from '../model/board.js';
import { DEFAULT_RETENTION } from '../model/board.js';
import type { Context } from './context.js';
import type { BucketArgs } from '../services/buckets.js';
import type { BucketStatus } from '../writes/board-buckets.js';
import type { CreateBoardInput, UpdateBoardInput } from '../writes/boards.js';

export type { BucketStatus };

/** What answers the board fields: the arguments in, one call of the records, write or admin side out. */

/** Query.boards. */
export const boards = (ctx: Context): Promise<Board[]> => ctx.records.boards();

/** Query.board. */
export const board = (args: { id: string }, ctx: Context): Promise<Board | null> => ctx.records.board(args.id);

/** A board's retention as createBoard takes it: the defaults, with whatever the input sets. */
function retentionFrom(
  input: { daily?: number | null | undefined; weekly?: number | null | undefined; monthly?: number | null | undefined } | null | undefined,
): Retention {
  return {
    DAILY: input?.daily ?? DEFAULT_RETENTION.DAILY,
    WEEKLY: input?.weekly ?? DEFAULT_RETENTION.WEEKLY,
    MONTHLY: input?.monthly ?? DEFAULT_RETENTION.MONTHLY,
  };
}

/** Mutation.deleteBoard: whether the board existed. */
export const deleteBoard = (args: { id: string }, ctx: Context): Promise<boolean> => ctx.writes.deleteBoard(args.id);

/** Mutation.createBoard. */
export const createBoard = (
  args: { input: Omit<CreateBoardInput, 'retention' | 'shards'> & { retention?: Parameters<typeof retentionFrom>[0]; shards?: number | null | undefined } },
  ctx: Context,
): Promise<Board> => ctx.writes.createBoard({ ...args.input, retention: retentionFrom(args.input.retention), shards: args.input.shards ?? 1 });

/** Mutation.updateBoard. */
export const updateBoard = (args: { input: UpdateBoardInput }, ctx: Context): Promise<Board> => ctx.writes.updateBoard(args.input);

/** Mutation.rebuildBoard. */
export const rebuildBoard = (args: BucketArgs, ctx: Context): Promise<number> => ctx.admin.rebuildBoard(args);

/** Board.buckets. */
export const buckets = (board: Board, ctx: Context): Promise<BucketStatus[]> => ctx.admin.boardBuckets(board);
