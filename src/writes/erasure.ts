import type { BoardBucket } from '../ranking/index.js';
import type { ProfileCache } from '../services/profile-cache.js';
import type { PlayerIndexDeps } from '../services/player-buckets.js';
import { warmBoards } from '../services/player-buckets.js';
import { type TakenOut, announceTakenOut, takeOutOfIndex } from './flags.js';

/** What an erasure did. */
export interface ErasureOutcome {
  /** False when there was nothing left to erase (a second call, or a player never seen). */
  erased: boolean;
  /** The buckets whose watched top the erasure touched. */
  changedTops: BoardBucket[];
}

/** What an erasure takes (7 members). */
export interface ErasureDeps extends PlayerIndexDeps {
  profiles: Pick<ProfileCache, 'change'>;
}

/**
 * Erases a player everywhere, for a privacy request: profile, friendships both ways, results,
 * board scores, and their entries in every index bucket; frozen season results keep the rank but
 * no longer name them. The index entries are removed inside the database transaction, just before
 * it commits: when Redis fails nothing is erased, and when the commit fails the player is only
 * missing from the index; either way a retry finishes the job. O(rows erased · log N).
 */
export async function deletePlayer(deps: ErasureDeps, playerId: string): Promise<ErasureOutcome> {
  let taken: TakenOut = { held: [], changedTops: [] };
  await warmBoards(deps);
  // Committed (or nothing was left to erase): no process shows the profile once this answers.
  const erased = await deps.profiles.change(
    [playerId],
    () =>
      deps.storage.players.erase(playerId, async (scores) => {
        taken = await takeOutOfIndex(deps, playerId, scores);
      }),
    () => [],
  );
  // Gone from their tops and their cohorts too (cohortChanged's watchers read again those that held them).
  await announceTakenOut(deps, playerId, taken);
  return { erased, changedTops: taken.changedTops };
}
