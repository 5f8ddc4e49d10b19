import type { Sql, TransactionSql } from 'postgres';
import { type BoardScoreRow, type PlayerBoardScore, boardScoreColumns, toPlayerBoardScore } from './flags.js';

/**
 * The index outbox (the index_backlog table): which (board, player) pairs a committed batch
 * touched, until the ranking index confirms it holds their board scores. recordGroup writes the
 * rows in the batch's own transaction (see results.ts); the write path deletes them after its
 * index write; the catch-up job re-applies whatever stays. Rows name no bucket: the job re-reads
 * the player's current board scores on that board, the truth, so a row is never stale.
 */

/** One backlog row the catch-up job has claimed. */
export interface BacklogRow {
  id: number;
  boardId: string;
  playerId: string;
}

/**
 * Claims up to `limit` of the oldest rows enqueued at least `graceMs` ago, locking them until the
 * transaction `tx` ends; rows another process has claimed are skipped (FOR UPDATE SKIP LOCKED), so
 * several processes share the work without waiting on each other. The grace leaves the write
 * path's own index write (milliseconds after its commit) the time to confirm its rows first.
 * O(limit log N) on the primary key.
 */
export async function claimBacklog(tx: TransactionSql, { graceMs, limit }: { graceMs: number; limit: number }): Promise<BacklogRow[]> {
  const rows = await tx<{ id: number; board_id: string; player_id: string }[]>`
    select id, board_id, player_id from index_backlog
    where enqueued_at < now() - ${graceMs}::int * interval '1 millisecond'
    order by id
    limit ${limit}
    for update skip locked`;
  return rows.map((row) => ({ id: row.id, boardId: row.board_id, playerId: row.player_id }));
}

/** Deletes backlog rows by id: the index holds what they stood for. One statement. O(k log N). */
export async function deleteBacklog(sql: Sql | TransactionSql, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const deleted = await sql`delete from index_backlog where id = any(${sql.array(ids.map(String))}::int8[])`;
  return deleted.count;
}

/** How many rows wait, counted up to `cap` so that a long outage's backlog is not scanned whole. O(min(N, cap)). */
export async function countBacklog(sql: Sql, cap = 100_000): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from (select 1 from index_backlog limit ${cap}) as waiting`;
  return row?.n ?? 0;
}

/** A board score of one of the claimed players, with the player it belongs to. */
export interface BacklogBoardScore extends PlayerBoardScore {
  playerId: string;
}

/**
 * Every board score the given (board, player) pairs hold now, players flagged now left out, each
 * with what a SEASON row needs to name its bucket. One query, one index probe per pair
 * (board_scores_player_idx). O(rows).
 */
export async function boardScoresOf(sql: Sql | TransactionSql, pairs: readonly { boardId: string; playerId: string }[]): Promise<BacklogBoardScore[]> {
  if (pairs.length === 0) return [];
  const rows = await sql<(BoardScoreRow & { player_id: string })[]>`
    select s.player_id, ${boardScoreColumns(sql)}
    from (select distinct * from unnest(${sql.array(pairs.map((p) => p.boardId))}::text[], ${sql.array(pairs.map((p) => p.playerId))}::text[])
          as k(board_id, player_id)) as k
    join board_scores s on s.player_id = k.player_id and s.board_id = k.board_id
    left join seasons z on s.period = 'SEASON' and z.board_id = s.board_id and z.id = s.bucket
    where not exists (select 1 from players p where p.id = s.player_id and p.flagged_at is not null)`;
  return rows.map((row) => ({ ...toPlayerBoardScore(row), playerId: row.player_id }));
}
