import type { Sql, TransactionSql } from 'postgres';

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
 * Runs `work` while holding the per-player advisory lock, so that flag, unflag and erasure of one
 * player never interleave (an unflag's index writes landing after a flag's removals would leave a
 * flagged player shown). The lock is held by one reserved connection and `work` is handed that
 * connection for its queries, so that many of these at once cannot take the whole pool and then
 * wait for it. Statements on it commit one by one, as on the pool.
 */
export async function withPlayerLock<T>(sql: Sql, playerId: string, work: (locked: Sql) => Promise<T>): Promise<T> {
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
