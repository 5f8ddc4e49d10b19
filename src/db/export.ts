import type { Sql, TransactionSql } from 'postgres';
import { type FreezeList, rankedBoardScores } from './frozen.js';

/**
 * A bucket's whole standings read for an export (reads/export.ts): in rank order, through a
 * server-side cursor, from one snapshot. Never more than one batch is held: the next batch is
 * fetched only once the caller's handler has taken the last one.
 */

/**
 * One standing as an export reads it, as the driver's tuple: rank (the index's ordinal rank, or
 * the frozen one), player id (null for a frozen row whose player was erased), display name (null
 * when the player has no profile or no name), score, when the score was reached (epoch
 * milliseconds), metadata (its JSON text as stored, or null).
 */
/** `tieBreakValues`: the int8[] as PostgreSQL's text ('{3,17}'), null on a board without columns; compared only, for the ranks ties share. */
export type ExportRow = [
  rank: number,
  playerId: string | null,
  displayName: string | null,
  score: number,
  reachedMs: number,
  metadata: string | null,
  tieBreakValues: string | null,
];

/** What the snapshot an export reads from is. */
export interface ExportSnapshot {
  /** The transaction's now(): the instant the standings are as of. */
  at: Date;
  /** When the bucket closed, if it had when the snapshot was taken: the rows are its frozen standings. Null: it is open. */
  closedAt: Date | null;
}

/** What reads the standings: told the snapshot first, then handed each batch in order. */
export interface ExportHandler {
  /** Called once, before the first batch. */
  opened(snapshot: ExportSnapshot): void | Promise<void>;
  /** Called with each batch in rank order; the next batch is fetched once it settles. Throwing ends the export (and its transaction). */
  rows(batch: readonly ExportRow[]): void | Promise<void>;
}

export interface StreamStandingsOptions {
  /** Rows a fetch of the cursor reads. Default {@link EXPORT_BATCH_ROWS}. */
  batchRows?: number | undefined;
  /**
   * PostgreSQL's own bounds on the export's transaction, over the session's: a statement (the sort
   * before the first row of a large bucket, or a fetch) at most `statementMs`, and the transaction
   * idle between statements at most `idleMs`. A cursor waiting for its next fetch is neither (its
   * portal stays active without a Sync): the caller bounds that wait itself (http/export-route.ts).
   * Undefined: the session's (the CLI's sessions have none).
   */
  bounds?: { statementMs: number; idleMs: number } | undefined;
  /** Aborting ends the export at once: a statement in flight is cancelled, and the transaction rolled back. */
  signal?: AbortSignal | undefined;
}

/** @default 1000: rows a cursor fetch reads, about 100 KB of CSV (up to 1 MB with full metadata): what an export holds at most. */
export const EXPORT_BATCH_ROWS = 1_000;

/**
 * Streams the standings of `list`'s bucket in rank order from one REPEATABLE READ, READ ONLY
 * transaction: its first statement takes the snapshot, says its instant (now()), and whether the
 * bucket had closed (a frozen_buckets row). A closed bucket's rows are its frozen standings by rank
 * (erased players' rows included, player id null, so that the caller's shared ranks count them as
 * the frozen reads do); an open one's are its board scores ranked as the index ranks them
 * ({@link rankedBoardScores}: flagged players left out). Each is joined to players for the display
 * name. Answers how many rows were read.
 *
 * Cost: an open bucket's rows are sorted once on the server (its ranking, then by rank after the
 * join to players) before the first row; a closed one's are a primary-key range. The process holds
 * one batch of {@link StreamStandingsOptions.batchRows} at a time, and a connection of the pool for
 * the whole export.
 */
export async function streamStandings(sql: Sql, list: FreezeList, handler: ExportHandler, options: StreamStandingsOptions = {}): Promise<number> {
  const { signal, bounds } = options;
  signal?.throwIfAborted();
  return sql.begin('isolation level repeatable read read only', async (tx) => {
    // set_config(…, true) is SET LOCAL: it ends with the transaction. The sort of a large open
    // bucket fits in memory, as a freeze's does (db/frozen.ts).
    const [head] = await tx<{ now_ms: number; closed_ms: number | null }[]>`
      select round(extract(epoch from now()) * 1000)::float8 as now_ms,
             (select round(extract(epoch from closed_at) * 1000)::float8 from frozen_buckets
              where board_id = ${list.boardId} and period = ${list.period} and bucket = ${list.bucket} and region = ${list.region}) as closed_ms,
             set_config('work_mem', '256MB', true) as work_mem
             ${bounds ? tx`, set_config('statement_timeout', ${String(bounds.statementMs)}, true), set_config('idle_in_transaction_session_timeout', ${String(bounds.idleMs)}, true)` : tx``}`;
    signal?.throwIfAborted();
    const closedAt = head!.closed_ms === null ? null : new Date(head!.closed_ms);
    await handler.opened({ at: new Date(head!.now_ms), closedAt });
    const query = (closedAt ? frozenRows(tx, list) : openRows(tx, list)).values();
    // A client gone while PostgreSQL sorts (or fetches) does not wait for it: the statement is
    // cancelled, the fetch fails, and the transaction rolls back.
    const cancel = () => void query.cancel();
    signal?.addEventListener('abort', cancel, { once: true });
    let read = 0;
    try {
      for await (const batch of query.cursor(options.batchRows ?? EXPORT_BATCH_ROWS)) {
        signal?.throwIfAborted();
        read += batch.length;
        await handler.rows(batch as unknown as ExportRow[]);
      }
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
    signal?.throwIfAborted();
    return read;
  });
}

/** An open bucket's standings, ranked as the index ranks them, by rank; the columns in ExportRow's order. */
function openRows(tx: TransactionSql, list: FreezeList) {
  return tx`
    select r.rank::float8 as rank, r.player_id, p.display_name, r.score,
           round(extract(epoch from r.reached_at) * 1000)::float8 as reached_ms, r.metadata::text as metadata, r.tie_break_values::text as tie_break_values
    from (${rankedBoardScores(tx, list)}) as r
    left join players p on p.id = r.player_id
    order by r.rank`;
}

/** A closed bucket's frozen standings by rank, erased players' rows included (player_id null); the columns in ExportRow's order. */
function frozenRows(tx: TransactionSql, list: FreezeList) {
  return tx`
    select f.rank::float8 as rank, f.player_id, p.display_name, f.score,
           round(extract(epoch from f.reached_at) * 1000)::float8 as reached_ms, f.metadata::text as metadata, f.tie_break_values::text as tie_break_values
    from frozen_standings f
    left join players p on p.id = f.player_id
    where f.board_id = ${list.boardId} and f.period = ${list.period} and f.bucket = ${list.bucket} and f.region = ${list.region}
    order by f.rank`;
}
