import { announceTops } from '../pubsub/announce.js';
import type { Logger } from 'pino';
import type { Storage } from '../db/storage.js';
import type { BoardBucket, RankingIndex } from '../ranking/index.js';
import type { TopCache } from '../ranking/top-cache.js';
import type { FlagChanges } from '../services/flag-changes.js';

/** What the flag check after an index write takes. */
export interface FlagRecheckDeps {
  storage: Pick<Storage, 'players'>;
  index: Pick<RankingIndex, 'removePlayer' | 'announceTopChanged' | 'announceLeague'>;
  flagChanges: Pick<FlagChanges, 'read'>;
  topCache: Pick<TopCache, 'invalidate'>;
  log?: Pick<Logger, 'warn'> | undefined;
}

/** The flag tokens at the ends of a writer's span (services/flag-changes.ts). */
export interface FlagSpan {
  /** Read before the writer read the flags. Default: none, so the flags are queried. */
  before?: string | undefined;
}

/**
 * Closes the race between writing board scores into the index and a flag that lands meanwhile,
 * for every writer of the index (the write path, the index catch-up): the writer read the flags
 * before its write, so a player flagged since may have been written back just after flagPlayer took
 * them out. flagPlayer commits the flag before it reads the player's board scores and removes them,
 * so reading the flags again after the write settles it: a flag seen now means we take out what we
 * wrote (under the player's lock, so an unflag cannot interleave), drop this process's cached tops
 * of those buckets and tell every process's topChanged watchers (the write may have announced the
 * player entering a top they are now out of); a flag not seen now committed after this read, so
 * after the write, and flagPlayer's removal, which reads the committed board scores, comes later
 * still. Either way the index converges.
 *
 * The query is skipped when `flags.before`, a flag token (services/flag-changes.ts) read before the
 * writer read the flags, is still the token after the write (read here, once the writer's write was answered, so
 * Redis reads it after it applied the write, on one node or a Cluster): flagPlayer rewrites it after its commit and before its removal, so a flag
 * that committed after the writer's read, and whose removal came before the write, rewrote it
 * before this second read. (Same token: any flag committed since the writer's read has its removal
 * still to come, after the write.)
 *
 * `written`: the buckets each player was just written into. Answers the players taken out. One
 * Redis read, and one query when a flag was raised meanwhile (or
 * without `flags.before`); the lock and a removal only for a player flagged meanwhile. Throws when
 * a store does not answer (the caller logs it: a rebuild or the next flag corrects the index).
 */
export async function takeOutFlaggedMeanwhile(deps: FlagRecheckDeps, written: ReadonlyMap<string, BoardBucket[]>, flags: FlagSpan = {}): Promise<Set<string>> {
  const { storage, index } = deps;
  // Read even without `before`: it is the start of this process's next groups (lastRead).
  const after = await deps.flagChanges.read();
  if (flags.before !== undefined && after === flags.before) return new Set();
  const flagged = await storage.players.flaggedAmong([...written.keys()]);
  for (const playerId of flagged) {
    const buckets = written.get(playerId) ?? [];
    await storage.players.whileLocked(playerId, async (locked) => {
      if (await locked.isFlagged()) await index.removePlayer(buckets, playerId);
    });
    for (const at of buckets) deps.topCache.invalidate(at);
    await announceTops(deps, buckets);
  }
  return flagged;
}
