import { asc, eq, isNull, or, and } from 'drizzle-orm';
import type { Sql } from 'postgres';
import type { Logger } from 'pino';
import type { Database, Db } from './client.js';
import { apiKeys } from './schema.js';
import { listenOnChannel } from './listen.js';

export type StoredKey = Omit<typeof apiKeys.$inferSelect, 'digest'>;

/** Every column but the digest, which never leaves the database. */
const storedColumns = {
  id: apiKeys.id,
  name: apiKeys.name,
  role: apiKeys.role,
  boards: apiKeys.boards,
  createdAt: apiKeys.createdAt,
  revokedAt: apiKeys.revokedAt,
};

/** Every process listens on this channel and forgets what it cached about keys. */
export const KEYS_CHANGED_CHANNEL = 'leaderboard_api_keys_changed';

export async function insertApiKey(
  db: Db,
  sql: Sql,
  key: { id: string; name: string; role: 'admin' | 'server'; digest: string; boards: string[] },
): Promise<StoredKey> {
  const [row] = await db.insert(apiKeys).values(key).returning(storedColumns);
  await sql.notify(KEYS_CHANGED_CHANNEL, key.id);
  return row!;
}

/** The live (not revoked) key with this digest, and the boards it may write to (empty: every board). O(log K) through the unique index. */
export async function findLiveKey(db: Db, digest: string): Promise<{ id: string; role: 'admin' | 'server'; boards: string[] } | null> {
  const [row] = await db
    .select({ id: apiKeys.id, role: apiKeys.role, boards: apiKeys.boards })
    .from(apiKeys)
    .where(and(eq(apiKeys.digest, digest), isNull(apiKeys.revokedAt)));
  return row ?? null;
}

export async function listApiKeys(db: Db): Promise<StoredKey[]> {
  return db.select(storedColumns).from(apiKeys).orderBy(asc(apiKeys.createdAt));
}

/** Revokes the live keys with this id or name; answers them as revoked. Every process forgets them at once. */
export async function revokeApiKey(db: Db, sql: Sql, idOrName: string): Promise<StoredKey[]> {
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(or(eq(apiKeys.id, idOrName), eq(apiKeys.name, idOrName)), isNull(apiKeys.revokedAt)))
    .returning(storedColumns);
  if (rows.length > 0) await sql.notify(KEYS_CHANGED_CHANNEL, idOrName);
  return rows;
}

/** How often the keys are looked at behind transaction pooling (see pollForKeyChanges). */
export const KEYS_POLL_MS = 1_000;

/**
 * Calls `changed` whenever any process creates or revokes a key (LISTEN on its own connection).
 * A PostgreSQL that does not answer at start-up, or drops the connection, is retried; the keyring's
 * short cache bounds what is missed meanwhile. Behind transaction pooling, where no LISTEN outlives
 * its statement, the keys are polled instead (see pollForKeyChanges).
 */
export function listenForKeyChanges(database: Database, changed: () => void, log: Logger) {
  if (database.pooling === 'transaction') return pollForKeyChanges(database.sql, changed, log);
  return listenOnChannel(database.sql, KEYS_CHANGED_CHANNEL, changed, changed, log, 'API key changes');
}

/**
 * listenForKeyChanges behind transaction pooling: a LISTEN stays on whichever server connection ran
 * it, whose notifications PgBouncer cannot hand to us, so every KEYS_POLL_MS one statement reads
 * how many keys there are and how many are revoked (keys are never deleted, so a create or a revoke
 * changes one of them) and `changed` is called when either moved. A poll that fails is logged and
 * the next one tried. A change reaches the other processes within about KEYS_POLL_MS rather than at
 * once; each process's own changes are forgotten at once as ever (writes/api-keys.ts). One
 * O(K) count a second per process over a table of a few keys.
 */
function pollForKeyChanges(sql: Sql, changed: () => void, log: Logger) {
  let timer: NodeJS.Timeout | undefined;
  let polling: Promise<void> | undefined;
  let stopped = false;
  let seen: string | undefined;
  let failing = false;
  const poll = async () => {
    try {
      const [row] = await sql<{ keys: number; revoked: number }[]>`select count(*)::int as keys, count(revoked_at)::int as revoked from api_keys`;
      const now = `${row?.keys ?? 0}:${row?.revoked ?? 0}`;
      if (seen !== undefined && now !== seen) changed();
      seen = now;
      failing = false;
    } catch (error) {
      if (!failing) log.warn({ err: error }, 'cannot look for API key changes; trying again');
      failing = true;
      // What changed meanwhile is not known: the next poll that answers forgets the cache.
      if (seen !== undefined) seen = 'unknown';
    }
    if (!stopped)
      timer = setTimeout(() => {
        polling = poll();
      }, KEYS_POLL_MS);
  };
  return {
    start: () => {
      polling = poll();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await polling;
    },
  };
}
