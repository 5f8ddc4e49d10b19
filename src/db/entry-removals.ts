import type { Sql, TransactionSql } from 'postgres';
import type { PlayerBoardScore } from './board-score-rows.js';
import { derivedScoresOfPlayers } from './derived-scores.js';
import { deleteBoardScores } from './erasure.js';
import { isPairPending } from './index-backlog.js';
import { lockPlayerForTransaction } from './locks.js';
import { lockBoardPlayers } from './result-statements.js';
import { advanceSourceMark } from './source-mark.js';

/**
 * removeEntry's records (issue 60): one player's results and board scores taken off one board, in
 * one transaction, and the audit row that says who asked, when and why (entry_removals).
 */

/** One removal, as recorded. */
export interface EntryRemoval {
  id: number;
  boardId: string;
  playerId: string;
  reason: string;
  /** The id of the API key that asked (its digest prefix). */
  removedBy: string;
  removedAt: Date;
  /** How many of the player's results on the board were removed. */
  results: number;
}

/** What a removal is asked with. */
export type EntryRemovalRequest = Omit<EntryRemoval, 'id' | 'results'>;

/**
 * How long a removal waits for the index writes of the player's results on the board that were
 * committed before it (see {@link removeEntryRows}): first without any lock, then, for a group
 * that committed just before the lock, holding it (which keeps the player's next results on the
 * board waiting, so this one is short). Every `everyMs` the backlog is read again.
 */
export interface PendingWrites {
  unlockedMs: number;
  lockedMs: number;
  everyMs: number;
}

/** A write path's confirmation is batched every 100 ms; the catch-up job replays what failed after 2 s. */
const PENDING_WRITES: PendingWrites = { unlockedMs: 5_000, lockedMs: 2_000, everyMs: 20 };

/** Thrown when the index has not applied the player's earlier results within the wait: nothing was removed. */
export class IndexBehindError extends Error {
  constructor(boardId: string, playerId: string) {
    super(`The index is still applying earlier results of "${playerId}" on board "${boardId}"; nothing was removed. Retry in a few seconds.`);
    this.name = 'IndexBehindError';
  }
}

/** Polls until no backlog row names the pair, for at most `ms`; answers whether none does. */
async function settled(sql: Sql | TransactionSql, boardId: string, playerId: string, ms: number, everyMs: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (!(await isPairPending(sql, boardId, playerId))) return true;
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * Removes one player's results and board scores from one board and records it, in one
 * transaction: every board-score row of the pair (every period, bucket, region and season, closed
 * ones too, whose reads come from their frozen standings, left as they are) and every result of the
 * pair in the score log. The idempotency keys stay: a replay of a removed result (same matchId)
 * stays a duplicate and does not bring it back, while a new result counts from scratch.
 * `beforeCommit` is handed the board scores that were deleted (kept, or derived from the results
 * deleted) and runs just before the commit, as an erasure's does (the caller takes the index
 * entries out there): should it fail, nothing is removed. Answers the record, or null (nothing
 * recorded) when the pair had nothing.
 *
 * Against the player's results racing it, on this process or another:
 * - The transaction takes the (board, player) lock every group of submissions takes
 *   (result-statements.ts lockBoardPlayers): a group either commits before it, and its rows are
 *   among those removed, or waits and commits after it, on an empty slate, its index write then
 *   adding the new board score back (which is right: it was accepted after the removal).
 * - A group that committed before may not have written the index yet: its backlog row names the
 *   pair until its index write is confirmed, or until the catch-up job has replayed it. The removal
 *   waits (PENDING_WRITES) until no row names the pair, so that no write of scores it removes can
 *   land after its own removal from the index; throws IndexBehindError, removing nothing, when one
 *   still does after the wait (the index is away: the caller's removal could not run either).
 * - Then the player's lock (flag, unflag and erasure take turns under it): an unflag that read the
 *   board scores before this removal writes them back before it, not after.
 * Lock order: (board, player), then the player. No one takes the former while holding the latter.
 *
 * Every statement follows an index on (board, player): O(rows removed · log N), plus the backlog's
 * scan (nearly empty).
 */
export async function removeEntryRows(
  sql: Sql,
  request: EntryRemovalRequest,
  beforeCommit: (scores: PlayerBoardScore[]) => Promise<void>,
  wait: PendingWrites = PENDING_WRITES,
): Promise<EntryRemoval | null> {
  const { boardId, playerId } = request;
  // Without a lock first, so that the players' groups are not kept waiting while the index catches up.
  await settled(sql, boardId, playerId, wait.unlockedMs, wait.everyMs);
  return sql.begin(async (tx) => {
    await lockBoardPlayers(tx, [{ boardId, playerId }]);
    if (!(await settled(tx, boardId, playerId, wait.lockedMs, wait.everyMs))) throw new IndexBehindError(boardId, playerId);
    await lockPlayerForTransaction(tx, playerId);
    await advanceSourceMark(tx);
    // The board scores derived from the log are read before the results they come from go.
    const derived = await derivedScoresOfPlayers(tx, [{ boardId, playerId }], { withFlagged: true });
    const scores = await deleteBoardScores(tx, playerId, boardId);
    // The log's primary key leads with (board, player): one probe per month's partition.
    const logged = await tx`delete from results where board_id = ${boardId} and player_id = ${playerId}`;
    if (scores.length === 0 && logged.count === 0) return null;
    const [row] = await tx<{ id: number }[]>`
      insert into entry_removals (board_id, player_id, reason, removed_by, removed_at, results)
      values (${boardId}, ${playerId}, ${request.reason}, ${request.removedBy}, ${request.removedAt.toISOString()}::timestamptz, ${logged.count})
      returning id::float8 as id`;
    await beforeCommit([...scores, ...derived]);
    return { id: row!.id, ...request, results: logged.count };
  });
}

/** Which removals a list reads: one board's, one player's, both or every one; newest first, at most `first`. */
export interface EntryRemovalFilter {
  boardId?: string | null | undefined;
  playerId?: string | null | undefined;
  first: number;
}

/**
 * The recorded removals, newest first: entry_removals_board_idx or entry_removals_player_idx when
 * filtered (a backward walk of the primary key otherwise). O(log N + first).
 */
export async function listEntryRemovals(sql: Sql, { boardId, playerId, first }: EntryRemovalFilter): Promise<EntryRemoval[]> {
  const rows = await sql<(Omit<EntryRemoval, 'removedAt'> & { removedMs: number })[]>`
    select id::float8 as id, board_id as "boardId", player_id as "playerId", reason, removed_by as "removedBy",
           round(extract(epoch from removed_at) * 1000)::float8 as "removedMs", results
    from entry_removals
    where true
      ${boardId == null ? sql`` : sql`and board_id = ${boardId}`}
      ${playerId == null ? sql`` : sql`and player_id = ${playerId}`}
    order by id desc
    limit ${first}`;
  return rows.map(({ removedMs, ...row }) => ({ ...row, removedAt: new Date(removedMs) }));
}
