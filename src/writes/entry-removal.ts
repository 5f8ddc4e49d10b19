import type { EntryRemoval, EntryRemovalFilter } from '../db/entry-removals.js';
import type { Storage } from '../db/storage.js';
import { IndexBehindError } from '../db/entry-removals.js';
import { notFound, unavailable } from '../errors.js';
import { type PlayerIndexDeps, warmBoards } from '../services/player-buckets.js';
import { type TakenOut, announceTakenOut, takeOutOfIndex } from './flags.js';

/** What removing an entry takes (7 members). */
export interface EntryRemovalDeps extends PlayerIndexDeps {
  storage: Pick<Storage, 'players' | 'entryRemovals'>;
}

/** removeEntry's arguments: the board, the player, why, and the id of the API key that asked. */
export interface EntryRemovalInput {
  board: string;
  playerId: string;
  reason: string;
  by: string;
}

/**
 * Removes one player's entry from one board, for a moderator: their results and board scores on
 * it, and their place in every open bucket of it (every period, season, region and shard, a wide
 * tie-break board's member hash, a DENSE board's distinct-score counts), recorded in entry_removals
 * with who asked, when and why. The player, their profile, friends, flag and other boards are left
 * alone, and so are the frozen standings of closed buckets. Their next result on the board counts
 * from scratch. The index entries are taken out inside the database transaction, just before it
 * commits (as an erasure's): when Redis fails nothing is removed, and when the commit fails the
 * player is only missing from the index until their next result or a rebuild; either way a retry
 * finishes the job. How a result racing the removal is settled: db/entry-removals.ts.
 * Answers whether anything was removed (false: nothing recorded). NOT_FOUND for an unknown board.
 * O(B log N) for the B board scores removed.
 */
export async function removeEntry(deps: EntryRemovalDeps, { board, playerId, reason, by }: EntryRemovalInput): Promise<boolean> {
  if (!(await deps.boards.find(board))) throw notFound(`No board "${board}".`);
  await warmBoards(deps);
  let taken: TakenOut = { held: [], changedTops: [] };
  let removal: EntryRemoval | null;
  try {
    removal = await deps.storage.entryRemovals.remove({ boardId: board, playerId, reason, removedBy: by, removedAt: deps.now() }, async (scores) => {
      taken = await takeOutOfIndex(deps, playerId, scores);
    });
  } catch (error) {
    if (error instanceof IndexBehindError) throw unavailable(error.message);
    throw error;
  }
  if (!removal) return false;
  // After the commit: this process's cached tops dropped, and every process's topChanged watchers
  // of the tops the player was in (and cohortChanged's of their rounds) told.
  await announceTakenOut(deps, playerId, taken);
  return true;
}

/** The recorded removals, newest first (Query.entryRemovals). O(log N + first). */
export async function listEntryRemovals(deps: { storage: Pick<Storage, 'entryRemovals'> }, filter: EntryRemovalFilter): Promise<EntryRemoval[]> {
  return deps.storage.entryRemovals.list(filter);
}
