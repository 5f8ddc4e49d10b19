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
    const status = await settleCommit(sql, committing.xid, claimedKeys(submissions, committing.group), commitDoubtMs, signal);
    if (status === 'committed') return committing.group;
    if (status === 'aborted') throw error;
    throw new CommitInDoubtError(error);
  }
}

/** The idempotency keys (result_keys rows) the group's transaction claimed: its new results. */
interface ClaimedKeys {
  boards: string[];
  players: string[];
  matches: string[];
}

function claimedKeys(submissions: ResultEntry[][], group: GroupOnce): ClaimedKeys {
  const keys: ClaimedKeys = { boards: [], players: [], matches: [] };
  submissions.forEach((entries, submission) =>
    entries.forEach((entry, i) => {
      if (group.outcomes[submission]?.[i]?.duplicate !== false) return;
      keys.boards.push(entry.board.id);
      keys.players.push(entry.playerId);
      keys.matches.push(entry.matchId);
    }),
  );
  return keys;
}

/** PostgreSQL's answer to pg_xact_status for an id it has not handed out yet (22023, "... is in the future"). */
const isFutureXid = (error: unknown) => (error as { code?: unknown }).code === '22023' && /in the future/.test((error as Error).message);

/**
 * Whether the group's transaction `xid` committed in the database the pool writes to now, asked
 * again until PostgreSQL answers or `timeoutMs` passes. The contract promises that UNAVAILABLE
 * means "nothing was recorded", and the one moment the client cannot know is a connection that
 * breaks after COMMIT was sent: the transaction may have committed. A rare case: only a group whose
 * COMMIT was on the wire when the connection broke waits.
 *
 * pg_xact_status(xid) alone cannot say it after a failover. The pool then writes to the promoted
 * standby, whose history is the old primary's only up to the last WAL it received: a transaction
 * whose records never reached it left it no trace, and the standby, once promoted, hands the same
 * transaction id to a transaction of its own. pg_xact_status then answered 'committed' for that
 * other transaction, and the group was acknowledged while its rows were nowhere (2 acknowledged
 * results lost in 10,079 in one of three failover runs: issue 54). So the answer is taken from the
 * group's own rows as well: its transaction claimed each of its new results' idempotency keys
 * (result_keys), and a row keeps the id of the transaction that inserted it (xmin). Committed, and
 * every claimed key's row inserted by `xid`: the rows are there, 'committed'. Committed, and none
 * of them: the id is another transaction's here, so ours never reached this server, 'aborted'.
 * An id this server has not handed out yet ("in the future") is the same: 'aborted'. Aborted: so
 * was ours. In progress (the server has not noticed the lost client, or the id is a new
 * transaction's): asked again. Anything else (some keys only) cannot be one transaction's: 'unknown',
 * which the client hears as "not known yet" and retries with the same matchIds.
 */
async function settleCommit(sql: Sql, xid: string, keys: ClaimedKeys, timeoutMs: number, signal: AbortSignal): Promise<'committed' | 'aborted' | 'unknown'> {
  const deadline = performance.now() + timeoutMs;
  while (!signal.aborted) {
    try {
      const [row] = await settleBy(
        sql<{ status: string | null; ours: number }[]>`
          select pg_xact_status(${xid}::xid8) as status,
                 (select count(*)::int from result_keys k
                  join unnest(${sql.array(keys.boards)}::text[], ${sql.array(keys.players)}::text[], ${sql.array(keys.matches)}::text[])
                    as c(board_id, player_id, match_id) using (board_id, player_id, match_id)
                  where k.xmin = ${xid}::xid8::xid) as ours`,
        signal,
      );
      if (row?.status === 'aborted') return 'aborted';
      if (row?.status === 'committed') {
        if (row.ours === keys.boards.length) return 'committed';
        if (row.ours === 0) return 'aborted';
        return 'unknown';
      }
    } catch (error) {
      if (isFutureXid(error)) return 'aborted';
      // Still away (or out of time); ask again while there is time.
    }
    if (performance.now() >= deadline) return 'unknown';
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return 'unknown';
}
