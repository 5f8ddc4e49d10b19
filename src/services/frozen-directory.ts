import type { FrozenBucket, FrozenKey } from '../db/frozen.js';
import type { BoardBucket } from '../ranking/index.js';

/**
 * Which lists this process knows are closed, and their close markers (frozen_buckets rows): the
 * one lookup a read of a closed bucket takes before its frozen standings (see
 * services/buckets.ts resolveReadBucket, which asks only once a bucket may have closed).
 *
 * A closed list never reopens, so a marker found is remembered for good (up to
 * FROZEN_MARKERS_REMEMBERED; past that the least recently used is forgotten, and found again by
 * one primary-key probe). A list found open is never remembered: it may close at any moment once
 * its close time has passed, so each lookup until then asks again; lookups of one list made while
 * one is out share it. Its size does not change either: an erased player's row keeps its rank and
 * still counts.
 */
export interface FrozenDirectory {
  /** The list's close marker, or null while it is not closed (not frozen yet). */
  find(at: BoardBucket): FrozenBucket | Promise<FrozenBucket | null>;
  /**
   * Whether the list is known to be closed without asking: its marker was found before, or the
   * bucket closer knows it frozen (`knownClosed`). A list frozen under a shorter grace than its
   * board has now is closed all the same: raising the grace reopens nothing. O(1).
   */
  knownClosed(at: BoardBucket): boolean;
  /** Forgets every close marker of a board (deleted: one made again under its id has closed nothing). O(markers kept). */
  forgetBoard(boardId: string): void;
}

/** How many close markers a process keeps: a few hundred bytes each. */
export const FROZEN_MARKERS_REMEMBERED = 10_000;

/** A list's key as frozen_buckets keys it. */
export const frozenKeyOf = (at: BoardBucket): FrozenKey => ({
  boardId: at.board.id,
  period: at.bucket.period,
  bucket: at.bucket.label,
  region: at.region ?? '',
});

/** A list's name in the directory. */
const nameOf = (key: FrozenKey) => `${key.boardId}\n${key.period}\n${key.bucket}\n${key.region}`;

/**
 * The process's frozen directory over `find` (Storage.frozen.find); `knownClosed`, the lists the
 * bucket closer knows frozen (services/closed-lists.ts), when it has them.
 */
export function createFrozenDirectory(
  find: (key: FrozenKey) => Promise<FrozenBucket | null>,
  options: { knownClosed?: ((at: BoardBucket) => boolean) | undefined; remembered?: number | undefined } = {},
): FrozenDirectory {
  const remembered = options.remembered ?? FROZEN_MARKERS_REMEMBERED;
  const closed = new Map<string, FrozenBucket>();
  const asking = new Map<string, Promise<FrozenBucket | null>>();
  return {
    knownClosed: (at) => closed.has(nameOf(frozenKeyOf(at))) || (options.knownClosed?.(at) ?? false),
    forgetBoard(boardId) {
      const start = `${boardId}\n`;
      for (const name of [...closed.keys()]) if (name.startsWith(start)) closed.delete(name);
      for (const name of [...asking.keys()]) if (name.startsWith(start)) asking.delete(name);
    },
    find(at) {
      const key = frozenKeyOf(at);
      const name = nameOf(key);
      const known = closed.get(name);
      if (known) {
        // Most recently used last: the first of the map is the one forgotten.
        closed.delete(name);
        closed.set(name, known);
        return known;
      }
      let pending = asking.get(name);
      if (!pending) {
        const asked: Promise<FrozenBucket | null> = find(key).then(
          (marker) => {
            // Forgotten meanwhile (its board deleted): answered, not remembered.
            if (asking.get(name) !== asked) return marker;
            asking.delete(name);
            if (marker) {
              closed.set(name, marker);
              if (closed.size > remembered) closed.delete(closed.keys().next().value!);
            }
            return marker;
          },
          (error: unknown) => {
            if (asking.get(name) === asked) asking.delete(name);
            throw error;
          },
        );
        pending = asked;
        asking.set(name, pending);
      }
      return pending;
    },
  };
}
