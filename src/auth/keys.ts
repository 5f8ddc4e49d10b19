import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export type Role = 'admin' | 'server';

/** Who is calling: the role their key grants. Anonymous callers have no Caller. */
export interface Caller {
  role: Role;
  /** Names the key without revealing it (a digest prefix): for per-key limits and logs. */
  keyId: string;
  /** A game-server key's boards: the only ones it may write to (see writes/board-scope.ts). Empty or left out: every board. */
  boards?: readonly string[];
}

/** Where keys made with the CLI live: looked up by digest. */
export interface StoredKeys {
  find(digestHex: string): Promise<{ id: string; role: Role; boards?: readonly string[] } | null>;
}

export interface KeyringOptions {
  /** The admin key; none when unset. */
  adminKey?: string | undefined;
  /** Game-server keys. Default: none. */
  serverKeys?: readonly string[];
  /** Keys made with the CLI. Default: none. */
  stored?: StoredKeys;
  /** How long a stored key's lookup is trusted when no change is announced. Default 30,000 ms. */
  cacheMs?: number;
  /** How many stored-key lookups (found or not) are kept; the oldest goes first. Default 10,000. */
  cacheEntries?: number;
  /** The clock the cache is aged by (milliseconds). Default: Date.now. */
  clock?: () => number;
}

/** What identify() does around a lookup in the stored keys. */
export interface LookupGuard {
  /** Runs before a key is looked up in PostgreSQL (not for keys of the environment or cached): throws to refuse. */
  beforeLookup(): Promise<void>;
}

export const digestOf = (key: string) => createHash('sha256').update(key, 'utf8').digest();

/** A new random key for a role, e.g. `lb_server_3q2…`: 32 random bytes, base64url. */
export function newApiKey(role: Role): string {
  return `lb_${role}_${randomBytes(32).toString('base64url')}`;
}

/**
 * The API keys the service accepts: the environment's, compared as SHA-256 digests with
 * timingSafeEqual (every one on every lookup, so the time taken shows nothing), then those made
 * with the CLI, found by digest in PostgreSQL. Stored lookups are cached briefly; forget() drops
 * the cache, and the app calls it whenever a key is created or revoked anywhere.
 */
export function createKeyring({ adminKey, serverKeys = [], stored, cacheMs = 30_000, cacheEntries = 10_000, clock = Date.now }: KeyringOptions) {
  const known: { digest: Buffer; role: Role }[] = [
    ...(adminKey ? [{ digest: digestOf(adminKey), role: 'admin' as const }] : []),
    ...serverKeys.map((key) => ({ digest: digestOf(key), role: 'server' as const })),
  ];
  const cache = new Map<string, { caller: Promise<Caller | null>; at: number }>();
  let generation = 0;

  function fromEnvironment(presented: Buffer): Caller | null {
    let role: Role | null = null;
    for (const entry of known) {
      if (timingSafeEqual(entry.digest, presented) && role !== 'admin') role = entry.role;
    }
    return role ? { role, keyId: presented.toString('hex', 0, 8) } : null;
  }

  return {
    /** The caller a key belongs to, or null for an unknown or revoked key. O(environment keys), plus one indexed query on a cache miss (after `guard`). */
    async identify(key: string, guard?: LookupGuard): Promise<Caller | null> {
      const presented = digestOf(key);
      const fromEnv = fromEnvironment(presented);
      if (fromEnv || !stored) return fromEnv;
      const hex = presented.toString('hex');
      const cached = cache.get(hex);
      if (cached && clock() - cached.at < cacheMs) return cached.caller;
      await guard?.beforeLookup();
      const asked = generation;
      // The key's boards are cached with it: a key's boards never change (a new scope is a new key), and a
      // create or revoke anywhere forgets the whole cache (forget), so no lookup outlives a change.
      const caller = stored
        .find(hex)
        .then((found): Caller | null => (found ? { role: found.role, keyId: found.id, ...(found.boards?.length ? { boards: found.boards } : {}) } : null));
      caller.then(
        () => {
          // A change announced while we asked may have made this answer stale: do not keep it.
          if (asked !== generation) cache.delete(hex);
        },
        () => cache.delete(hex),
      );
      // Random keys would otherwise grow the cache without bound: a Map keeps insertion order, so
      // its first key is the oldest lookup.
      cache.delete(hex);
      if (cache.size >= cacheEntries) cache.delete(cache.keys().next().value!);
      cache.set(hex, { caller, at: clock() });
      return caller;
    },
    /** Forgets every stored key looked up: a key was created or revoked. */
    forget(): void {
      generation += 1;
      cache.clear();
    },
    /** How many stored-key lookups are cached (for tests). */
    get cachedLookups(): number {
      return cache.size;
    },
  };
}

export type Keyring = ReturnType<typeof createKeyring>;

/** The key of an `Authorization: Bearer <key>` header; undefined when there is none, '' when it is malformed. */
export function bearerKey(header: string | null | undefined): string | undefined {
  if (header === null || header === undefined || header === '') return undefined;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? '';
}
