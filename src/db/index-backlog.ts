import type { Sql, TransactionSql } from 'postgres';
import { type BoardScoreRow, type PlayerBoardScore, boardScoreColumns, toPlayerBoardScore } from './board-score-rows.js';
import { derivedScoresOfPlayers } from './derived-scores.js';

/**
 * The index outbox (the index_backlog table): which (board, player) pairs a committed group
 * touched, until the ranking index confirms it holds their board scores. recordGroup writes one
 * row per group in the group's own transaction (see result-statements.ts); the write path deletes it after
 * its index write; the catch-up job re-applies whatever stays. Rows name no bucket: the job
 * re-reads the players' current board scores on those boards, the truth, so a row is never stale.
 */

/** One (board, player) pair of a backlog row. */
interface BacklogPair {
  boardId: string;
  playerId: string;
}

/** One backlog row the catch-up job has claimed: a committed group's pairs. */
interface BacklogRow {
  id: number;
  pairs: BacklogPair[];
}

/**
 * Claims up to `limit` of the oldest rows enqueued at least `graceMs` ago, locking them until the
 * transaction `tx` ends; rows another process has claimed are skipped (FOR UPDATE SKIP LOCKED), so
 * several processes share the work without waiting on each other. The grace leaves the write
 * path's own index write (milliseconds after its commit) the time to confirm its rows first.
 * O(limit log N) on the primary key.
 */
async function claimBacklog(tx: TransactionSql, { graceMs, limit }: { graceMs: number; limit: number }): Promise<BacklogRow[]> {
  const rows = await tx<{ id: number; board_id: string | null; player_id: string | null; board_ids: string[] | null; player_ids: string[] | null }[]>`
    select id, board_id, player_id, board_ids, player_ids from index_backlog
    where enqueued_at < now() - ${graceMs}::int * interval '1 millisecond'
    order by id
    limit ${limit}
    for update skip locked`;
  return rows.map((row) => ({
    id: row.id,
    // A row of the shape before migration 0010 (written by a process not yet upgraded) names one pair.
    pairs:
      row.board_ids && row.player_ids
        ? row.board_ids.map((boardId, i) => ({ boardId, playerId: row.player_ids![i]! }))
        : row.board_id !== null && row.player_id !== null
          ? [{ boardId: row.board_id, playerId: row.player_id }]
          : [],
  }));
}

/**
 * Takes a player out of every backlog row (an erasure): waits for a catch-up pass that holds any
 * of those rows, so that pass's index write lands before the caller's removal. A scan of the
 * backlog, which is nearly empty but after an outage. O(rows).
 */
export async function forgetBacklogPlayer(tx: TransactionSql, playerId: string): Promise<void> {
  await tx`delete from index_backlog where player_id = ${playerId}`;
  await tx`
    update index_backlog b
    set board_ids = kept.board_ids, player_ids = kept.player_ids
    from (
      select id,
             array(select u.board from unnest(board_ids, player_ids) as u(board, player) where u.player <> ${playerId}) as board_ids,
             array(select u.player from unnest(board_ids, player_ids) as u(board, player) where u.player <> ${playerId}) as player_ids
      from index_backlog
      where ${playerId} = any(player_ids)) as kept
    where b.id = kept.id`;
}

/** Deletes backlog rows by id: the index holds what they stood for. One statement. O(k log N). */
export async function deleteBacklog(sql: Sql | TransactionSql, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const deleted = await sql`delete from index_backlog where id = any(${sql.array(ids.map(String))}::int8[])`;
  return deleted.count;
}

/**
 * How many (board, player) pairs wait, over the oldest `cap` rows so that a long outage's backlog
 * is not scanned whole (each row a group of up to maxGroupWeight pairs). O(min(N, cap)).
 */
export async function countBacklog(sql: Sql, cap = 1_000): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select coalesce(sum(coalesce(cardinality(player_ids), 1)), 0)::int as n from (select player_ids from index_backlog limit ${cap}) as waiting`;
  return row?.n ?? 0;
}

/** A board score of one of the claimed players, with the player it belongs to. */
export interface BacklogBoardScore extends PlayerBoardScore {
  playerId: string;
}

/**
 * Every board score the given (board, player) pairs hold now, players flagged now left out, each
 * with what a SEASON row needs to name its bucket: the rows kept, one index probe per pair
 * (board_scores_player_idx), and those derived from the pairs' results (derived-scores.ts).
 * O(rows + results).
 */
async function boardScoresOf(sql: Sql | TransactionSql, pairs: readonly BacklogPair[], keptAt?: Date): Promise<BacklogBoardScore[]> {
  if (pairs.length === 0) return [];
  const [rows, derived] = await Promise.all([
    sql<(BoardScoreRow & { player_id: string })[]>`
      select s.player_id, ${boardScoreColumns(sql)}
      from (select distinct * from unnest(${sql.array(pairs.map((p) => p.boardId))}::text[], ${sql.array(pairs.map((p) => p.playerId))}::text[])
            as k(board_id, player_id)) as k
      join board_scores s on s.player_id = k.player_id and s.board_id = k.board_id
      left join seasons z on s.period = 'SEASON' and z.board_id = s.board_id and z.id = s.bucket
      where not exists (select 1 from players p where p.id = s.player_id and p.flagged_at is not null)`,
    derivedScoresOfPlayers(sql, pairs, keptAt ? { keptAt } : {}),
  ]);
  return [...rows.map((row) => ({ ...toPlayerBoardScore(row), playerId: row.player_id })), ...derived];
}

/**
 * One pass of the catch-up, in one transaction: claims up to `limit` of the oldest rows enqueued
 * at least `graceMs` ago (claimBacklog: rows another process holds are skipped), reads the board
 * scores their pairs hold now (boardScoresOf; with `keptAt`, those derived from results that may
 * still be in a bucket kept then), hands them and the rows' players to `replay` (which writes them
 * into the index) and deletes the rows. Should `replay` throw, nothing is deleted: the rows stay for the
 * next pass. Answers the rows handled; `replay` is not called when there are none.
 */
export async function replayBacklog(
  sql: Sql,
  claim: { graceMs: number; limit: number; keptAt?: Date | undefined },
  replay: (scores: BacklogBoardScore[], players: string[]) => Promise<void>,
): Promise<number> {
  return sql.begin(async (tx) => {
    const claimed = await claimBacklog(tx, claim);
    if (claimed.length === 0) return 0;
    const pairs = claimed.flatMap((row) => row.pairs);
    await replay(await boardScoresOf(tx, pairs, claim.keptAt), [...new Set(pairs.map((pair) => pair.playerId))]);
    await deleteBacklog(
      tx,
      claimed.map((row) => row.id),
    );
    return claimed.length;
  });
}

/**
 * Whether a backlog row names this (board, player) pair: a committed group of theirs whose index
 * write has not been confirmed yet (it may still land), or that the catch-up job has still to
 * replay. A scan of the backlog, which is nearly empty but after an outage. O(rows).
 */
export async function isPairPending(sql: Sql | TransactionSql, boardId: string, playerId: string): Promise<boolean> {
  const [row] = await sql<{ pending: boolean }[]>`
    select exists (
      select 1 from index_backlog b
      where (b.board_id = ${boardId} and b.player_id = ${playerId})
         or exists (select 1 from unnest(b.board_ids, b.player_ids) as u(board, player) where u.board = ${boardId} and u.player = ${playerId})
    ) as pending`;
  return row?.pending ?? false;
}
