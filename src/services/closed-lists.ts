import type { BoardBucket } from '../ranking/index.js';

/**
 * The calendar lists this process knows are frozen (kept by the bucket closer, which reads every
 * board's frozen lists once and adds each it closes): what keeps a closed list closed when its
 * board's grace is raised afterwards. The write path's bucketsOfResult decides from the clock and
 * the board's grace alone; a list frozen under a shorter grace stays out of a result's buckets
 * here, so a raised grace reopens none (docs/closing.md). O(1) a lookup; one entry per frozen list
 * within retention.
 */
export interface ClosedLists {
  has(at: BoardBucket): boolean;
  add(at: BoardBucket): void;
  delete(at: BoardBucket): void;
  /** Forgets every list of a board (deleted: one made again under its id has frozen none). O(lists). */
  forgetBoard(boardId: string): void;
}

const keyOf = (at: BoardBucket) => `${at.board.id}\u0000${at.bucket.period}\u0000${at.bucket.label}\u0000${at.region ?? ''}`;

export function createClosedLists(): ClosedLists {
  const closed = new Set<string>();
  return {
    has: (at) => closed.size > 0 && closed.has(keyOf(at)),
    add: (at) => void closed.add(keyOf(at)),
    delete: (at) => void closed.delete(keyOf(at)),
    forgetBoard(boardId) {
      const start = `${boardId}\u0000`;
      for (const key of [...closed]) if (key.startsWith(start)) closed.delete(key);
    },
  };
}
