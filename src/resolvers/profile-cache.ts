import type { Database } from '../db/client.js';
import { type Player, findPlayers } from '../db/players.js';
import type { RedisClient } from '../redis.js';
import { createVersionTokens } from './version-tokens.js';

/**
 * A Redis hash of version tokens: `epoch`, set once (again after Redis lost it), and one field per
 * slot of players, rewritten with a fresh random token after every change to a profile in the slot.
 */
export const PROFILE_VERSIONS_KEY = 'lb:{profiles}:versions';

export interface ProfileCacheOptions {
  /** Profiles kept in this process at most; the oldest kept go first. Default 100,000. */
  maxProfiles?: number;
  /**
   * How many slots players are spread over: a change to one profile makes every process read the
   * profiles of its slot again. Default 1,024.
   */
  slots?: number;
  /**
   * How long a kept profile is used at most, whatever the tokens say: bounds how long a change made
   * outside the service (SQL by hand, which writes no token) can go unseen. Default 60,000 ms.
   */
  maxAgeMs?: number;
  /** The clock. Default: the system's. */
  now?: () => number;
}

interface Entry {
  player: Player;
  /** The epoch and slot token read before the profile was: it stays good while they do not change. */
  token: string;
  /** When it was read. */
  at: number;
}

/** FNV-1a: a fast, even spread of ids over slots. */
function slotOf(id: string, slots: number): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return String((hash >>> 0) % slots);
}

/**
 * Player profiles (names, avatars) kept in this process for the reads that name players (top,
 * around, friends), so that a hot read asks Redis for one small hash read instead of PostgreSQL for
 * the names. It never shows a profile older than the last rename or erasure answered anywhere: a
 * change rewrites the version token of the player's slot before it answers, and a kept profile is
 * used only under the token it was read under (see version-tokens.ts); a change whose token could
 * not be written answers an error, and its retry writes it. When Redis does not answer, profiles
 * are read from PostgreSQL and nothing is kept.
 */
export function createProfileCache(redis: RedisClient, database: Database, options: ProfileCacheOptions = {}) {
  const maxProfiles = options.maxProfiles ?? 100_000;
  const slots = options.slots ?? 1_024;
  const maxAgeMs = options.maxAgeMs ?? 60_000;
  const now = options.now ?? Date.now;
  const kept = new Map<string, Entry>();

  function keep(player: Player, token: string, at: number): void {
    kept.delete(player.id);
    kept.set(player.id, { player, token, at });
    if (kept.size > maxProfiles) kept.delete(kept.keys().next().value!);
  }

  const versions = createVersionTokens(redis, PROFILE_VERSIONS_KEY);

  /** The tokens of these ids' slots, by id; undefined when they cannot be trusted (Redis away, no epoch yet). */
  async function tokensOf(ids: readonly string[]): Promise<Map<string, string> | undefined> {
    const slotOfId = ids.map((id) => slotOf(id, slots));
    const distinct = [...new Set(slotOfId)];
    const tokens = await versions.read(distinct);
    if (!tokens) return undefined;
    const bySlot = new Map(distinct.map((slot, i) => [slot, tokens[i]!]));
    return new Map(ids.map((id, i) => [id, bySlot.get(slotOfId[i]!)!]));
  }

  return {
    /**
     * The profiles of these ids, in their order; a player without a profile has nulls. One Redis
     * HMGET, plus one PostgreSQL query for those not kept. Throws what PostgreSQL throws.
     */
    async load(ids: readonly string[]): Promise<Player[]> {
      const tokens = await tokensOf(ids);
      const t = now();
      const found = new Map<string, Player>();
      const missing: string[] = [];
      for (const id of ids) {
        const entry = kept.get(id);
        if (tokens && entry && entry.token === tokens.get(id) && t - entry.at <= maxAgeMs) found.set(id, entry.player);
        else missing.push(id);
      }
      if (missing.length > 0) {
        for (const player of await findPlayers(database.db, missing)) found.set(player.id, player);
        for (const id of missing) {
          const player = found.get(id) ?? { id, displayName: null, avatarUrl: null };
          found.set(id, player);
          if (tokens) keep(player, tokens.get(id)!, t);
        }
      }
      return ids.map((id) => found.get(id)!);
    },

    /**
     * Marks these players' profiles changed (renamed, erased) in every process: call it after the
     * change committed and before answering. Throws when Redis does not take it: the change must
     * then answer an error, so that it is retried. O(players).
     */
    async changed(ids: readonly string[]): Promise<void> {
      for (const id of ids) kept.delete(id);
      await versions.changed(ids.map((id) => slotOf(id, slots)));
    },
  };
}

export type ProfileCache = ReturnType<typeof createProfileCache>;
