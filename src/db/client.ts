import { fileURLToPath } from 'node:url';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres, { type Options, type ReservedSql, type Sql } from 'postgres';
import { type PrimaryWatch, primaryConnection } from './primary.js';
import { parsePostgresUrl } from './postgres-url.js';
import * as schema from './schema.js';

export type Db = PostgresJsDatabase<typeof schema>;

/** The system of record: drizzle for most queries, the postgres.js client for bulk statements. */
export interface Database {
  db: Db;
  sql: Sql;
  /** Which PostgreSQL host the pool writes to: DATABASE_URL may name a primary and its standbys (see db/primary.ts). */
  primary: PrimaryWatch;
  close(): Promise<void>;
}

/**
 * What PostgreSQL itself enforces on each of the pool's sessions, so that nothing the service
 * started can hold a lock or a connection past its request's bound even if the service forgot it:
 * a statement that runs too long is cancelled (57014), a lock waited for too long is given up
 * (55P03), and a session left idle inside a transaction is ended (25P03), its locks let go.
 */
export interface SessionTimeouts {
  statementMs: number;
  lockMs: number;
  idleInTransactionMs: number;
}

/**
 * The session timeouts for requests answered within `boundMs`: a statement gets half of it, a lock
 * wait a quarter, an idle transaction all of it (none of ours idles on purpose).
 */
export const sessionTimeoutsFor = (boundMs: number): SessionTimeouts => ({
  statementMs: Math.round(boundMs / 2),
  lockMs: Math.round(boundMs / 4),
  idleInTransactionMs: boundMs,
});

/** A connection of the pool's, reserved without its statement timeout; release() restores the timeout and gives it back. */
export interface UnboundedSession {
  sql: ReservedSql;
  release(): Promise<void>;
}

/**
 * Reserves a connection and lifts the pool's statement timeout on it, for background work that
 * reads a whole list and is no request (a rebuild's read, the drift gauge's counts): on a busy
 * month one such statement (the sort before a derived list's first row) takes longer than half a
 * request's bound. release() puts the session's own value back (RESET: the one set at connect)
 * before the connection returns to the pool; a connection that broke meanwhile is the pool's to drop.
 */
export async function reserveUnbounded(sql: Sql): Promise<UnboundedSession> {
  const reserved = await sql.reserve();
  try {
    await reserved`set statement_timeout = 0`;
  } catch (error) {
    reserved.release();
    throw error;
  }
  return {
    sql: reserved,
    async release() {
      await reserved`reset statement_timeout`.catch(() => undefined);
      reserved.release();
    },
  };
}

export interface DatabaseOptions {
  /** Most connections in the pool. Default 10. */
  maxConnections?: number;
  /**
   * PostgreSQL's own limits on every session of the pool, or null for none (the CLI's operator
   * commands and the benchmarks' bulk loads, which may rightly run long). Default
   * sessionTimeoutsFor(10,000): 5 s a statement, 2.5 s a lock wait, 10 s idle in a transaction.
   */
  timeouts?: SessionTimeouts | null;
  /** Called with every statement sent; tests count queries with it. Default: none. */
  onQuery?: ((statement: string) => void) | undefined;
}

const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** Any number below 2^63 will do; it only has to be the same in every process. */
const MIGRATION_LOCK = 7_361_201;

function clientOptions(options: DatabaseOptions = {}): Options<Record<string, postgres.PostgresType>> {
  const timeouts = options.timeouts === undefined ? sessionTimeoutsFor(10_000) : options.timeouts;
  return {
    max: options.maxConnections ?? 10,
    connect_timeout: 5,
    idle_timeout: 60,
    // Seconds before a lost connection is tried again. postgres.js waits up to 20 s by default
    // once a few attempts have failed, and a query waiting for a connection waits that long too:
    // capped at a second, a query while PostgreSQL is down fails within about a second (so the
    // caller answers UNAVAILABLE), and the pool is back within a second of PostgreSQL.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    onnotice: () => {},
    // Sent in the startup message, so they hold from a session's first statement at no round trip.
    ...(timeouts
      ? {
          connection: {
            statement_timeout: timeouts.statementMs,
            lock_timeout: timeouts.lockMs,
            idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
          },
        }
      : {}),
    // Scores and totals stay below 2^53 (the packing refuses larger boards), so int8 reads as a number.
    types: {
      bigint: { to: 20, from: [20], serialize: (value: number) => String(value), parse: (value: string) => Number(value) },
    },
    ...(options.onQuery ? { debug: (_connection: number, statement: string) => options.onQuery?.(statement) } : {}),
  };
}

/**
 * A postgres.js pool on `url`'s primary: `url` may name several hosts, of which the pool writes to
 * the one that is the primary, and finds the new one after a promotion (see db/primary.ts).
 */
function openPool(url: string, options: Options<Record<string, postgres.PostgresType>>) {
  const connection = primaryConnection(url, options);
  return { sql: postgres(connection.url, connection.options), primary: connection.primary };
}

/** Opens a pool; nothing connects until the first query. */
export function createDatabase(url: string, options: DatabaseOptions = {}): Database {
  const { sql, primary } = openPool(url, clientOptions(options));
  const db = drizzle({ client: sql, schema, casing: 'snake_case' });
  return { db, sql, primary, close: () => sql.end({ timeout: 5 }) };
}

/** Creates the database named in `url` when it does not exist yet. */
export async function ensureDatabase(url: string): Promise<void> {
  const parsed = parsePostgresUrl(url);
  const name = parsed.database;
  const { sql } = openPool(parsed.withDatabase('postgres'), { ...clientOptions({ timeouts: null }), max: 1 });
  try {
    const [found] = await sql`select 1 as found from pg_database where datname = ${name}`;
    if (found) return;
    await sql`create database ${sql(name)}`.catch((error: unknown) => {
      // Another process created it between our check and our create: 42P04 when its create had
      // committed, 23505 (pg_database's unique index) when both were under way at once.
      const code = (error as { code?: string }).code;
      if (code !== '42P04' && code !== '23505') throw error;
    });
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * Applies pending migrations from `drizzle/`. Several processes may start at once, so they take
 * turns under an advisory lock held on the one connection that migrates.
 */
export async function migrateDatabase(url: string): Promise<void> {
  // A migration may rightly take long, and waits for another process's.
  const { sql } = openPool(url, { ...clientOptions({ timeouts: null }), max: 1 });
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migrate(drizzle({ client: sql, casing: 'snake_case' }), { migrationsFolder: MIGRATIONS_FOLDER });
    await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
