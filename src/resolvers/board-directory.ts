import type { Db } from '../db/client.js';
import { findBoard, listBoards } from '../db/boards.js';
import type { Board } from '../model/board.js';

/**
 * Board definitions, cached in the process. A definition never changes once created, so a cached
 * one is never stale; a miss is not cached, so a board created by another process is found on the
 * next request.
 */
export function createBoardDirectory(db: Db) {
  const cache = new Map<string, Board>();
  const remember = (board: Board) => {
    cache.set(board.id, board);
    return board;
  };
  return {
    /** The board, or null when there is none. O(1) once cached. */
    async find(id: string): Promise<Board | null> {
      const cached = cache.get(id);
      if (cached) return cached;
      const board = await findBoard(db, id);
      return board ? remember(board) : null;
    },
    async list(): Promise<Board[]> {
      return (await listBoards(db)).map(remember);
    },
    remember,
  };
}

export type BoardDirectory = ReturnType<typeof createBoardDirectory>;
