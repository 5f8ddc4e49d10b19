import type { Profile } from '../profiles/store.js';

export interface RememberedProfilesOptions {
  /** How many profiles are remembered at most; those seen longest ago go first. Default 100,000. */
  maxProfiles?: number;
  /**
   * How long a profile is remembered after it was last seen in Redis, however often the changes
   * token is seen unchanged: bounds, as the profile hashes' own lifetime does, how long a change
   * made outside the service (which rewrites no token) can go unseen. Default 60,000 ms.
   */
  maxAgeMs?: number;
  /** The clock, in milliseconds: token reads and profile reads are ordered by it. Default performance.now. */
  now?: () => number;
}

/** A profile as last seen in Redis, and when (on this memory's clock). */
interface Seen {
  profile: Profile;
  seenAt: number;
}

/** The latest read of the changes token: when it was sent, and what it answered. */
interface TokenRead {
  sentAt: number;
  token: string | null;
}

/**
 * The profiles this process has seen in Redis, each with the changes token read in the same
 * script step, so that a read can name players without asking Redis again.
 *
 * Why it is exact: every change of a profile rewrites the changes token (a fresh random one) when
 * it marks its players, before it commits, and again when it settles. A profile seen under token T
 * is therefore still the profile whenever T is read again later: no change began in between. A
 * read that came in at `since` may take a remembered profile when a Redis read sent at or after
 * `since` (any request's: under load, one is sent every turn) answered the token it was seen
 * under; the answer is then what Redis held at a moment inside the read, as if it had asked. A
 * profile pending a change is never remembered, and a token Redis no longer holds (emptied)
 * answers none: nothing is taken until the next token.
 */
export function createRememberedProfiles(options: RememberedProfilesOptions = {}) {
  const maxProfiles = options.maxProfiles ?? 100_000;
  const maxAgeMs = options.maxAgeMs ?? 60_000;
  const now = options.now ?? (() => performance.now());
  let latest: TokenRead = { sentAt: -Infinity, token: null };
  /**
   * The profiles seen under latest.token, in two generations: once the newer holds half of
   * maxProfiles, it becomes the older and the older is dropped. Why not one map in the order last
   * seen: evicting its oldest means walking from its start past every entry deleted since V8 last
   * compacted it, which under a steady churn cost more than the reads it saves (measured).
   */
  let newer = new Map<string, Seen>();
  let older = new Map<string, Seen>();
  const forgetProfiles = () => {
    newer = new Map();
    older = new Map();
  };

  return {
    /** The clock reads are ordered by: what `saw` takes as `sentAt`, and `known` as `since`. O(1). */
    now,

    /**
     * A Redis read sent at `sentAt` answered the changes token `token` (null: none) and, in the
     * same step, these settled profiles. The latest read's token is the one profiles are taken
     * under; a different token forgets every profile seen before it. An earlier read answering
     * later (another connection's) adds its profiles only under the latest token. O(profiles).
     */
    saw(sentAt: number, token: string | null, profiles: readonly Profile[]): void {
      if (sentAt >= latest.sentAt) {
        if (token !== latest.token) forgetProfiles();
        latest = { sentAt, token };
      }
      if (token === null || token !== latest.token) return;
      const seenAt = now();
      for (const profile of profiles) {
        newer.set(profile.id, { profile, seenAt });
        if (newer.size < maxProfiles / 2) continue;
        older = newer;
        newer = new Map();
      }
    },

    /**
     * Forgets every profile and token seen so far, and any read sent before now: for a process
     * that has just changed profiles, whose later reads (the same request's, after a mutation)
     * must not take a token read before the change as current. O(1).
     */
    forget(): void {
      latest = { sentAt: now(), token: null };
      forgetProfiles();
    },

    /**
     * The profile of each id that may be taken without asking Redis by a read that came in at
     * `since` (see above), undefined for the others; undefined for all when no Redis read sent
     * since then has answered a token. O(k).
     */
    known(ids: readonly string[], since: number): (Profile | undefined)[] | undefined {
      if (latest.token === null || latest.sentAt < since) return undefined;
      const fresh = now() - maxAgeMs;
      return ids.map((id) => {
        const entry = newer.get(id) ?? older.get(id);
        return entry && entry.seenAt >= fresh ? entry.profile : undefined;
      });
    },
  };
}
