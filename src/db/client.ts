import { fileURLToPath } from 'node:url';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres, { type Options, type ReservedSql, type Sql, type TransactionSql } from 'postgres';
import { type PrimaryWatch, primaryConnection } from './primary.js';
import { parsePostgresUrl } from './postgres-url.js';
import * as schema from './schema.js';

export type Db = PostgresJsDatabase<typeof schema>;

/**
 * How the service's connections reach PostgreSQL (DATABASE_POOLING). 'session': each connection of
 * the pool is one PostgreSQL session for its whole life (directly, or through a pooler in session
 * mode). 'transaction': through a pooler that hands out a server connection for one transaction at
 * a time (PgBouncer's pool_mode = transaction), so nothing may outlive a transaction: no prepared
 * statements, no startup parameters, no SET, session advisory lock or LISTEN outside one (see
 * docs/production-topology.md, PgBouncer).
 */
export type Pooling = 'session' | 'transaction';

/** The system of record: drizzle for most queries, the postgres.js client for bulk statements. */
export interface Database {
  db: Db;
  sql: Sql;
  /** Which PostgreSQL host the pool writes to: DATABASE_URL may name a primary and its standbys (see db/primary.ts). */
  primary: PrimaryWatch;
  /** How `sql` reaches PostgreSQL (see Pooling). */
  pooling: Pooling;
  close(): Promise<void>;
}

/**
 * On a pool opened with pooling 'transaction': the small client of its own that holds advisory
 * locks (see db/locks.ts), as a lock behind transaction pooling lives in a transaction kept open
 * for the work, and the work's own statements run on the pool, which those held transactions must
 * not be able to exhaust. A property of the pool rather than a map keyed by it, so that it is
 * still read through a wrapper of the pool (services/store-timing.ts's Proxy); in an object, which
 * such a wrapper hands over as it is (a function it would bind).
 */
const TRANSACTION_POOLED = Symbol('transaction pooled');

type Pooled = Sql & { [TRANSACTION_POOLED]?: { locks: Sql } };

/** Whether `sql` is a pool opened with pooling 'transaction' (or a wrapper of one). */
const isTransactionPooled = (sql: Sql): boolean => (sql as Pooled)[TRANSACTION_POOLED] !== undefined;

/** The lock client of a pool opened with pooling 'transaction'; undefined for one with session pooling. */
export const lockClientOf = (sql: Sql): Sql | undefined => (sql as Pooled)[TRANSACTION_POOLED]?.locks;

/** Connections of a transaction-pooled pool's lock client: the recovery lock, and two admin operations' player locks at once. */
const LOCK_CONNECTIONS = 3;

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
  if (isTransactionPooled(sql)) return reserveUnboundedTransaction(reserved);
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

/** Runs `work` on a session of its own without the pool's statement timeout (see reserveUnbounded), and gives the session back. */
export async function whileUnbounded<T>(sql: Sql, work: (session: ReservedSql) => Promise<T>): Promise<T> {
  const session = await reserveUnbounded(sql);
  try {
    return await work(session.sql);
  } finally {
    await session.release();
  }
}

/**
 * reserveUnbounded behind transaction pooling: a session's SET would stay on whichever server
 * connection ran it, for another client's statements, while ours land on others. The timeout is
 * lifted for one transaction instead (SET LOCAL), which keeps the server connection ours until
 * release() commits it. Only the statement timeout is lifted, as in session pooling.
 */
async function reserveUnboundedTransaction(reserved: ReservedSql): Promise<UnboundedSession> {
  try {
    await reserved`begin`;
    await reserved`set local statement_timeout = 0`;
  } catch (error) {
    await reserved`rollback`.catch(() => undefined);
    reserved.release();
    throw error;
  }
  return {
    sql: reserved,
    async release() {
      // After a failed statement COMMIT answers ROLLBACK, without an error.
      await reserved`commit`.catch(() => undefined);
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
  /**
   * How the connections reach PostgreSQL (see Pooling). With 'transaction' no statement is
   * prepared and no session timeout is sent: PgBouncer refuses startup parameters, so the
   * deployment sets them on the server connections (see docs/production-topology.md). Default 'session'.
   */
  pooling?: Pooling;
}

const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** Any number below 2^63 will do; it only has to be the same in every process. */
const MIGRATION_LOCK = 7_361_201;

function clientOptions(options: DatabaseOptions = {}): Options<Record<string, postgres.PostgresType>> {
  const timeouts = options.timeouts === undefined ? sessionTimeoutsFor(10_000) : options.timeouts;
  // Behind transaction pooling a statement prepared on one server connection is unknown to the next
  // ("prepared statement ... does not exist"), and PgBouncer refuses any startup parameter it does
  // not know ("unsupported startup parameter"): statements go unnamed, and the timeouts are the
  // deployment's to set where PgBouncer opens its server connections (its connect_query, or ALTER
  // ROLE ... SET): SET LOCAL in every transaction would cost the write path a round trip.
  if (options.pooling === 'transaction') {
    const { connection: _sent, ...rest } = sessionOptions(options, timeouts);
    return { ...rest, prepare: false };
  }
  return sessionOptions(options, timeouts);
}

function sessionOptions(options: DatabaseOptions, timeouts: SessionTimeouts | null): Options<Record<string, postgres.PostgresType>> {
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
  if (options.pooling !== 'transaction') return { db, sql, primary, pooling: 'session', close: () => sql.end({ timeout: 5 }) };
  const { sql: locks } = openPool(url, { ...clientOptions(options), max: LOCK_CONNECTIONS });
  Object.defineProperty(sql, TRANSACTION_POOLED, { value: { locks } });
  return {
    db,
    sql,
    primary,
    pooling: 'transaction',
    close: async () => {
      await Promise.all([sql.end({ timeout: 5 }), locks.end({ timeout: 5 })]);
    },
  };
}

/**
 * Behind transaction pooling: which of the session timeouts PostgreSQL does not enforce (0) on the
 * server connections, which the deployment is to set there (PgBouncer's connect_query, or ALTER
 * ROLE ... SET; see docs/production-topology.md, PgBouncer), as the service cannot send them. One
 * statement, at start-up: it reads whichever server connection PgBouncer lends, and PgBouncer
 * opens them all alike.
 */
export async function unsetServerTimeouts(sql: Sql): Promise<string[]> {
  const [row] = await sql<Record<string, string>[]>`
    select current_setting('statement_timeout') as statement_timeout, current_setting('lock_timeout') as lock_timeout,
      current_setting('idle_in_transaction_session_timeout') as idle_in_transaction_session_timeout`;
  return Object.entries(row ?? {})
    .filter(([, value]) => value === '0')
    .map(([name]) => name);
}

/** Creates the database named in `url` when it does not exist yet. */
export async function ensureDatabase(url: string, pooling: Pooling = 'session'): Promise<void> {
  const parsed = parsePostgresUrl(url);
  const name = parsed.database;
  const { sql } = openPool(parsed.withDatabase('postgres'), { ...clientOptions({ timeouts: null, pooling }), max: 1 });
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
 * turns under an advisory lock held on the one connection that migrates (behind transaction
 * pooling, by the one transaction that migrates).
 */
export async function migrateDatabase(url: string, pooling: Pooling = 'session'): Promise<void> {
  // A migration may rightly take long, and waits for another process's.
  const { sql } = openPool(url, { ...clientOptions({ timeouts: null, pooling }), max: 1 });
  try {
    if (pooling === 'transaction') {
      // A session lock would stay on whichever server connection took it (and its unlock could
      // land on another): the lock is the transaction's, and drizzle's own migration transaction
      // (client.begin) becomes a savepoint of it.
      await sql.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
        // (drizzle reads the client's options, which a transaction's handle has not: the pool's are lent.)
        const client = Object.assign(tx, { options: sql.options, begin: <T>(work: (inner: TransactionSql) => Promise<T>) => tx.savepoint(work) });
        await migrate(drizzle({ client: client as unknown as Sql, casing: 'snake_case' }), { migrationsFolder: MIGRATIONS_FOLDER });
      });
      return;
    }
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migrate(drizzle({ client: sql, casing: 'snake_case' }), { migrationsFolder: MIGRATIONS_FOLDER });
    await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
