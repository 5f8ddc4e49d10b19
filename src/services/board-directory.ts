import type { Storage } from '../db/storage.js';
import type { Board } from '../model/board.js';

/**
 * How old a kept board definition may be before a lookup asks PostgreSQL again (in the
 * background: the lookup answers with what it kept). Bounds how long another process's
 * updateBoard goes unseen here: this plus one query. One query per board in use per half second.
 */
export const BOARD_REFRESH_MS = 500;

/** Whether two reads of a board hold the same definition: every field alike (both are rows mapped the same way). O(fields). */
const sameDefinition = (a: Board, b: Board) => JSON.stringify(a) === JSON.stringify(b);

interface Kept {
  board: Board;
  readAt: number;
  refreshing: boolean;
}

/**
 * Board definitions, kept in the process. A lookup never waits for PostgreSQL once the board is
 * known: a definition older than {@link BOARD_REFRESH_MS} is read again in the background, so a
 * change made by updateBoard in any process is served everywhere within a second, and while
 * PostgreSQL does not answer the last definition read is served (reads go on from Redis). A miss
 * is not kept, so a board created by another process is found on the next request. A definition
 * read or written unchanged (a refresh, a listing of the boards) keeps the object it had, so the
 * object changes exactly when the definition does: what is built from a board (a shared answer,
 * http/response-cache.ts) stays current for as long as its board is the same object.
 */
export function createBoardDirectory(boards: Storage['boards'], clock: () => number = () => performance.now()) {
  const kept = new Map<string, Kept>();
  /**
   * Bumped by {@link forget}: a read of PostgreSQL sent before a board was deleted may answer
   * after it, with the board; what it answers is then not kept (nor served, by `find`).
   */
  let forgets = 0;
  const remember = (read: Board) => {
    const held = kept.get(read.id)?.board;
    const board = held && sameDefinition(held, read) ? held : read;
    kept.set(board.id, { board, readAt: clock(), refreshing: false });
    return board;
  };
  const refresh = (entry: Kept) => {
    entry.refreshing = true;
    const id = entry.board.id;
    boards.find(id).then(
      (board) => {
        // A definition written here meanwhile (updateBoard) is newer than this read: keep it.
        if (kept.get(id) !== entry) return;
        if (board) remember(board);
        else kept.delete(id);
      },
      // Still the last one read; the next lookup tries again.
      () => (entry.refreshing = false),
    );
  };
  /**
   * The board when this process knows it, at once (the hot reads' way: no promise); undefined
   * when only `find` can tell. Starts a refresh as find does. O(1).
   */
  const known = (id: string): Board | undefined => {
    const entry = kept.get(id);
    if (entry && !entry.refreshing && clock() - entry.readAt >= BOARD_REFRESH_MS) refresh(entry);
    return entry?.board;
  };
  return {
    known,
    /** The board, or null when there is none. O(1) once known. */
    async find(id: string): Promise<Board | null> {
      const held = known(id);
      if (held) return held;
      const asked = forgets;
      const board = await boards.find(id);
      if (asked !== forgets) return kept.get(id)?.board ?? null;
      return board ? remember(board) : null;
    },
    async list(): Promise<Board[]> {
      const asked = forgets;
      const read = await boards.list();
      return asked === forgets ? read.map(remember) : read;
    },
    /**
     * Forgets a board deleted (by deleteBoard, in this process or another, see
     * writes/board-deletion.ts): the next lookup asks PostgreSQL, and a read sent before now that
     * answers later is not kept. `createdAt`: when the board deleted had been made (a definition
     * made later is another board, kept). O(1).
     */
    forget(id: string, createdAt?: Date): void {
      forgets += 1;
      // A board made again since under the same id (told late of the old one's deletion) stays.
      const held = kept.get(id)?.board;
      if (held && createdAt && held.createdAt.getTime() > createdAt.getTime()) return;
      kept.delete(id);
    },
    /** The boards kept, with when each was made: what a check for boards deleted meanwhile asks about. O(boards). */
    kept(): { id: string; createdAt: Date }[] {
      return [...kept.values()].map(({ board }) => ({ id: board.id, createdAt: board.createdAt }));
    },
    /** Keeps a definition just read or written (by createBoard or updateBoard in this process), and answers the object kept for it. */
    remember,
  };
}

export type BoardDirectory = ReturnType<typeof createBoardDirectory>;
