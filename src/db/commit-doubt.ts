import type { Sql } from 'postgres';
import { settleBy, throwIfPast } from '../deadline.js';
import { recordInTransaction } from './group-transaction.js';
import type { GroupOnce, ResultEntry } from './result-entries.js';

/**
 * A group's one transaction, and the one moment its outcome can be in doubt: a connection that
 * breaks while COMMIT is on the wire.
 */

/** How long recordGroup waits, at most, to learn whether a COMMIT whose answer was lost took effect. */
export const COMMIT_DOUBT_TIMEOUT_MS = 20_000;

/**
 * The connection broke after COMMIT was sent, and PostgreSQL could not be asked within the time
 * allowed whether the batch was committed. It may have been: retrying with the same matchIds is
 * safe (a recorded result answers duplicate: true).
 */
export class CommitInDoubtError extends Error {
  constructor(cause: unknown) {
    super('the connection to PostgreSQL broke during COMMIT and whether the batch was recorded is not known yet; retry with the same matchIds', {
      cause,
    });
    this.name = 'CommitInDoubtError';
  }
}

/**
 * One transaction for the whole group; throws (and records nothing) when any submission fails.
 * Past `signal`, the body sends no further statement and never returns, so postgres.js never sends
 * COMMIT; the wait for a statement that hangs is left at once (its connection answers or closes
 * later, and the transaction rolls back then, or at PostgreSQL's idle-in-transaction timeout).
 */
export async function recordOnce(sql: Sql, submissions: ResultEntry[][], commitDoubtMs: number, signal: AbortSignal): Promise<GroupOnce> {
  throwIfPast(signal);
  // Set once the body has run: a failure after it can only be the COMMIT's (see settleCommit).
  let committing: { xid: string | null; group: GroupOnce } | undefined;
  try {
    const transaction = sql.begin(async (tx) => {
      const { group, xid } = await recordInTransaction(tx, submissions, signal);
      // The last moment to give up: COMMIT is sent once this returns.
      throwIfPast(signal);
      committing = { xid, group };
      return group;
    });
    return await settleBy(transaction, signal);
  } catch (error) {
    if (!committing) throw error;
    // Nothing was written (a group of replays): nothing can be in doubt.
    if (committing.xid === null) throw error;
    const status = await settleCommit(sql, committing.xid, commitDoubtMs, signal);
    if (status === 'committed') return committing.group;
    if (status === 'aborted') throw error;
    throw new CommitInDoubtError(error);
  }
}

/**
 * Whether transaction `xid` committed, asked again until PostgreSQL answers or `timeoutMs` passes.
 * The contract promises that UNAVAILABLE means "nothing was recorded", and the one moment the
 * client cannot know is a connection that breaks after COMMIT was sent: the transaction may have
 * committed. pg_xact_status answers exactly that (PostgreSQL 13+), on any connection, once the
 * server answers again; 'in progress' (the server has not yet noticed the lost client) is asked
 * again. A rare case: only a group whose COMMIT was on the wire when the connection broke waits.
 */
async function settleCommit(sql: Sql, xid: string, timeoutMs: number, signal: AbortSignal): Promise<'committed' | 'aborted' | 'unknown'> {
  const deadline = performance.now() + timeoutMs;
  while (!signal.aborted) {
    try {
      const [row] = await settleBy(sql<{ status: string | null }[]>`select pg_xact_status(${xid}::xid8) as status`, signal);
      if (row?.status === 'committed') return 'committed';
      if (row?.status === 'aborted') return 'aborted';
    } catch {
      // Still away (or out of time); ask again while there is time.
    }
    if (performance.now() >= deadline) return 'unknown';
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return 'unknown';
}
