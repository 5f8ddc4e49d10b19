import type { Sql, TransactionSql } from 'postgres';
import { lockClientOf } from './client.js';

/**
 * PostgreSQL advisory locks: the per-player lock that flag, unflag and erasure take turns under,
 * and the session locks that let one process of a deployment do a piece of work at a time.
 */

/** The advisory-lock key space of per-player admin operations (the two-int space, apart from the migration lock). */
const PLAYER_LOCK_SPACE = 7_361_202;

/** Takes the per-player lock until the end of the transaction `tx`; erasure runs under it. */
export async function lockPlayerForTransaction(tx: TransactionSql, playerId: string): Promise<void> {
  await tx`select pg_advisory_xact_lock(${PLAYER_LOCK_SPACE}, hashtext(${playerId}))`;
}

/**
 * The advisory-lock key space of boards (the two-int space): every group of results takes its
 * boards' locks shared, deleteBoard takes its board's exclusively (db/board-deletion.ts), so a
 * deletion waits for the groups of the board in flight and the groups after it find the board gone.
 */
const BOARD_LOCK_SPACE = 7_361_260;

/**
 * Takes each board's lock shared until the end of `tx`, in one statement and in ascending key
 * order (a group's first statement: it holds nothing yet, so it never waits in a cycle). One lock
 * per board of the group, however many results.
 */
export async function lockBoardsShared(tx: TransactionSql, boardIds: readonly string[]): Promise<void> {
  await tx`
    select pg_advisory_xact_lock_shared(${BOARD_LOCK_SPACE}, k)
    from (select distinct hashtext(b) as k from unnest(${tx.array([...boardIds])}::text[]) as b order by k) as keys`;
}

/** Takes a board's lock exclusively until the end of `tx`: waits for every group of the board in flight (see {@link lockBoardsShared}). */
export async function lockBoardForDeletion(tx: TransactionSql, boardId: string): Promise<void> {
  await tx`select pg_advisory_xact_lock(${BOARD_LOCK_SPACE}, hashtext(${boardId}))`;
}

/**
 * Runs `work` while holding the per-player advisory lock, so that flag, unflag and erasure of one
 * player never interleave (an unflag's index writes landing after a flag's removals would leave a
 * flagged player shown). The lock is held by one reserved connection and `work` is handed that
 * connection for its queries, so that many of these at once cannot take the whole pool and then
 * wait for it. Statements on it commit one by one, as on the pool.
 */
export async function withPlayerLock<T>(sql: Sql, playerId: string, work: (locked: Sql) => Promise<T>): Promise<T> {
  const locks = lockClientOf(sql);
  if (locks) {
    // Behind transaction pooling (see holdingTransactionLock): the lock is a transaction's on the
    // lock client, and `work` runs on the pool, where its statements still commit one by one.
    const outcome = await holdingTransactionLock(
      locks,
      (tx) => tx`select pg_advisory_xact_lock(${PLAYER_LOCK_SPACE}, hashtext(${playerId})) as locked, ${idleMs(tx)} as idle_ms`,
      () => work(sql),
    );
    // pg_advisory_xact_lock waits for the lock, so it is always held here.
    return (outcome as { value: T }).value;
  }
  const reserved = await sql.reserve();
  try {
    await reserved`select pg_advisory_lock(${PLAYER_LOCK_SPACE}, hashtext(${playerId}))`;
    try {
      return await work(reserved);
    } finally {
      // A connection that broke has let the lock go already.
      await reserved`select pg_advisory_unlock(${PLAYER_LOCK_SPACE}, hashtext(${playerId}))`.catch(() => undefined);
    }
  } finally {
    reserved.release();
  }
}

/**
 * Runs `work` while this process holds the session lock `key`, taken on a reserved connection of
 * its own (should the process die, PostgreSQL lets it go with the connection); answers false,
 * running nothing, while another session holds it. The key must be the same in every process and
 * apart from the other lock spaces (any number below 2^31 not used elsewhere).
 */
export async function whileHoldingSessionLock(sql: Sql, key: number, work: () => Promise<void>): Promise<boolean> {
  const locks = lockClientOf(sql);
  if (locks) {
    const outcome = await holdingTransactionLock(locks, (tx) => tx`select pg_try_advisory_xact_lock(${key}) as locked, ${idleMs(tx)} as idle_ms`, work);
    return outcome !== null;
  }
  const reserved = await sql.reserve();
  try {
    const [row] = await reserved<{ locked: boolean }[]>`select pg_try_advisory_lock(${key}) as locked`;
    if (!row?.locked) return false;
    try {
      await work();
      return true;
    } finally {
      await reserved`select pg_advisory_unlock(${key})`.catch(() => undefined);
    }
  } finally {
    reserved.release();
  }
}

/**
 * How often, at most, a held lock's transaction says something, so that no idle-in-transaction
 * timeout ends it (PgBouncer's idle_transaction_timeout, whole seconds); more often when the
 * session's own idle_in_transaction_session_timeout is shorter (a quarter of it).
 */
const LOCK_HEARTBEAT_MS = 1_000;

/** The session's idle_in_transaction_session_timeout in milliseconds (0: none), read with the lock. */
const idleMs = (tx: TransactionSql) => tx`(select setting::int from pg_settings where name = 'idle_in_transaction_session_timeout')`;

/**
 * A lock behind transaction pooling, where a session lock would stay on whichever server connection
 * took it, for other clients, and its unlock could land on another: the transaction-scoped lock
 * (`take`, answering one row with `locked`, which pg_advisory_xact_lock answers as null, and the
 * session's idle timeout, `idle_ms`) is taken in a transaction of the lock client's, kept open
 * while `work` runs and committed after it, which lets the lock go. Answers `work`'s value, or
 * null, running nothing, when `take` answered false. The lock client is apart from the pool, so
 * that held locks cannot take every connection `work` needs; the transaction runs `select 1` every
 * LOCK_HEARTBEAT_MS (or a quarter of its idle timeout) meanwhile, as a long recovery may hold it
 * for minutes. Should the process die, its connection closes and PostgreSQL lets the lock go;
 * should the connection break meanwhile, the lock is gone, as a session lock's would be.
 */
async function holdingTransactionLock<T>(
  locks: Sql,
  take: (tx: TransactionSql) => Promise<{ locked: boolean | null; idle_ms: number }[]>,
  work: () => Promise<T>,
): Promise<{ value: T } | null> {
  const outcome = await locks.begin(async (tx) => {
    const [row] = await take(tx);
    if (row?.locked === false) return null;
    const idle = row?.idle_ms ?? 0;
    const every = idle > 0 ? Math.max(50, Math.min(LOCK_HEARTBEAT_MS, Math.floor(idle / 4))) : LOCK_HEARTBEAT_MS;
    let beat: Promise<unknown> = Promise.resolve();
    const heartbeat = setInterval(() => {
      beat = beat.then(() => tx`select 1`).catch(() => undefined);
    }, every);
    try {
      return { value: await work() };
    } finally {
      clearInterval(heartbeat);
      await beat;
    }
  });
  return outcome;
}
