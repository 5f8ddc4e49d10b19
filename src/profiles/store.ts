import { randomBytes, randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import { defineProfileScripts } from './scripts.js';

/** A player's profile as the reads show it; nulls for a player without one. */
export interface Profile {
  id: string;
  displayName: string | null;
  avatarUrl: string | null;
}

export interface ProfileStoreOptions {
  /**
   * How many hashes the profiles are spread over. A hash of up to 128 short profiles is stored as
   * a listpack, about 40 bytes a profile (bench: `memory`); 65,536 hashes keep some 8 million
   * players that compact. Default 65,536.
   */
  hashes?: number;
  /**
   * How long a hash lives from when it is made; it is then read again from PostgreSQL, profile by
   * profile, as readers miss. Bounds how long a change made outside the service (SQL by hand, a
   * restored backup), which marks nothing, can go unseen. Default 3,600,000 ms (an hour).
   */
  maxAgeMs?: number;
}

/** What a read found for one id: the profile, or the epoch under which to keep one read from PostgreSQL (null: keep nothing). */
export type Held = { profile: Profile } | { epoch: string | null };

/** The pending marks of one change, for {@link ProfileStore.settle}. */
export interface Marks {
  ids: string[];
  marks: string[];
}

/** The prefix of a change's pending mark; no encoded profile starts with it (JSON never does). */
const PENDING = '~';

/** FNV-1a: a fast, even spread of ids over hashes, the same in every process and release. */
function hashOf(id: string, hashes: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % hashes;
}

/** What every profile key starts with: the hashes and the changes token. */
export const PROFILE_KEYS_PREFIX = 'lb:{profiles}:';

/** How many hashes the profiles are spread over unless {@link ProfileStoreOptions.hashes} says. */
export const DEFAULT_PROFILE_HASHES = 65_536;

/**
 * The profile hash holding an id. Every hash carries the `{profiles}` Redis Cluster hash tag, so a
 * read of any ids is one script call on one node.
 */
export const profileHashKey = (id: string, hashes: number) => `${PROFILE_KEYS_PREFIX}${hashOf(id, hashes)}`;

/** The token every change of a profile rewrites (see markProfilesLua). */
export const PROFILE_CHANGES_KEY = `${PROFILE_KEYS_PREFIX}changes`;

/** The profile as stored: the name as a JSON string, [name, avatar] when there is an avatar, `null` for no profile. */
export function encodeProfile({ displayName, avatarUrl }: Profile): string {
  return JSON.stringify(avatarUrl === null ? displayName : [displayName, avatarUrl]);
}

function decodeProfile(id: string, value: string): Profile {
  const decoded = JSON.parse(value) as string | null | [string | null, string];
  return Array.isArray(decoded) ? { id, displayName: decoded[0], avatarUrl: decoded[1] } : { id, displayName: decoded, avatarUrl: null };
}

/**
 * Player profiles held in Redis beside the index, shared by every process of a deployment: a
 * cache of PostgreSQL's `players`, filled when a profile is written and when a read misses, and
 * never behind a change the service answered (see profile-cache.ts for the protocol). Knows no
 * database: its callers read PostgreSQL and hand it what they read.
 */
export function createProfileStore(redis: RedisClient, options: ProfileStoreOptions = {}) {
  const hashes = options.hashes ?? DEFAULT_PROFILE_HASHES;
  const ttl = String(options.maxAgeMs ?? 3_600_000);
  defineProfileScripts(redis);
  const keysOf = (ids: readonly string[]) => ids.map((id) => profileHashKey(id, hashes));

  return {
    /**
     * What is held for each id, in their order (duplicates allowed), and the changes token read in
     * the same step (null when there is none). One script call; throws what Redis throws. O(k).
     */
    async read(ids: readonly string[]): Promise<{ held: Held[]; token: string | null }> {
      const replies = await redis.readProfiles(ids.length + 1, PROFILE_CHANGES_KEY, ...keysOf(ids), randomUUID(), ttl, ...ids);
      const held = ids.map((id, i): Held => {
        const value = replies[2 * i];
        // A change is under way: read PostgreSQL, keep nothing.
        if (value == null) return { epoch: replies[2 * i + 1] ?? null };
        return value.startsWith(PENDING) ? { epoch: null } : { profile: decodeProfile(id, value) };
      });
      return { held, token: replies[2 * ids.length] ?? null };
    },

    /**
     * Where a read that names the players it reads in the same step (the ranking index's named
     * reads: ranking/index.ts PlayerFields) finds their profiles: the changes token's key, the
     * hashes' name and number, and the hash key of given ids, which it declares. Null on a Redis
     * Cluster, where the profile hashes share no slot with what such a read reads beside them.
     */
    naming: redis.isCluster ? null : { changesKey: PROFILE_CHANGES_KEY, hashPrefix: PROFILE_KEYS_PREFIX, hashes, keysOf },

    /**
     * The profile of each id in what a named read answered for them (a profile hash's value each,
     * null for none): undefined where it held none, or a change's pending mark. O(k).
     */
    profilesIn(ids: readonly string[], values: readonly (string | null)[]): (Profile | undefined)[] {
      return ids.map((id, i) => {
        const value = values[i];
        return value == null || value.startsWith(PENDING) ? undefined : decodeProfile(id, value);
      });
    },

    /** Keeps profiles read from PostgreSQL, each under the epoch read before the query. One script call. O(k). */
    async fill(read: readonly { profile: Profile; epoch: string }[]): Promise<void> {
      if (read.length === 0) return;
      const args = read.flatMap(({ profile, epoch }) => [epoch, profile.id, encodeProfile(profile)]);
      await redis.fillProfiles(read.length, ...keysOf(read.map(({ profile }) => profile.id)), ...args);
    },

    /** Marks these profiles as being changed, before the change commits. Throws when Redis does not take it. One script call. */
    async mark(ids: readonly string[]): Promise<Marks> {
      const distinct = [...new Set(ids)];
      const marks = distinct.map(() => `${PENDING}${randomBytes(9).toString('base64')}`);
      if (distinct.length > 0) {
        await redis.markProfiles(
          distinct.length + 1,
          PROFILE_CHANGES_KEY,
          ...keysOf(distinct),
          randomUUID(),
          ttl,
          ...distinct.flatMap((id, i) => [id, marks[i]!]),
        );
      }
      return { ids: distinct, marks };
    },

    /** After the change committed: its profiles (of every id marked) replace its marks. One script call. */
    async settle({ ids, marks }: Marks, profiles: ReadonlyMap<string, Profile>): Promise<void> {
      if (ids.length === 0) return;
      const none = (id: string): Profile => ({ id, displayName: null, avatarUrl: null });
      const args = ids.flatMap((id, i) => [id, marks[i]!, encodeProfile(profiles.get(id) ?? none(id))]);
      await redis.settleProfiles(ids.length + 1, PROFILE_CHANGES_KEY, ...keysOf(ids), randomUUID(), ...args);
    },

    /**
     * The token of the last change of any profile: an answer that named players stays right while
     * it does not change. Null when Redis holds none (new, or emptied: one is set then, for the
     * next ask) or does not answer. One GET (and a SET the first time).
     */
    async changes(): Promise<string | null> {
      try {
        const token = await redis.get(PROFILE_CHANGES_KEY);
        if (token === null) await redis.set(PROFILE_CHANGES_KEY, randomUUID(), 'NX');
        return token;
      } catch {
        return null;
      }
    },
  };
}

export type ProfileStore = ReturnType<typeof createProfileStore>;
