import type { Sql, TransactionSql } from 'postgres';
import { type Board, type BoardScore, type Period, combine } from '../model/board.js';

/** One board-score row a result falls in. `region` is '' for the global list. */
export interface ScoreRowKey {
  period: Period;
  bucket: string;
  region: string;
}

export interface ResultEntry {
  board: Board;
  matchId: string;
  playerId: string;
  score: number;
  region: string | null;
  achievedAt: Date;
  /** Every bucket the result is written to; improvement is judged on (ALL_TIME, '') */
  rows: ScoreRowKey[];
}

export interface RecordOutcome {
  /** True when (board, matchId, playerId) had been recorded before: nothing changed. */
  duplicate: boolean;
  /** True when the player's ALL_TIME board score changed. */
  improved: boolean;
  /** What was recorded under this idempotency key: this entry, or for a duplicate the original. */
  recorded: { achievedAt: Date; region: string | null };
}

export interface StoredBoardScore extends ScoreRowKey, BoardScore {
  boardId: string;
}

export interface RecordedBatch {
  outcomes: RecordOutcome[];
  /** The board scores after the commit, one per row the batch touched. */
  boardScores: StoredBoardScore[];
  /**
   * The index_backlog rows the batch committed (see index-backlog.ts): delete them once the index
   * holds `boardScores`; until then the catch-up job re-applies them.
   */
  backlogIds: number[];
}

/** How long recordResults waits, at most, to learn whether a COMMIT whose answer was lost took effect. */
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

/** A SUM total would pass the board's maxScore; the whole batch was rolled back. */
export class TotalAboveMaxScoreError extends Error {
  constructor(
    readonly playerId: string,
    readonly total: number,
    readonly maxScore: number,
  ) {
    super(`player ${playerId} would reach a total of ${total}, above the board's maxScore of ${maxScore}`);
    this.name = 'TotalAboveMaxScoreError';
  }
}

const rowId = (boardId: string, row: ScoreRowKey, playerId: string) =>
  `${boardId}\u0000${row.period}\u0000${row.bucket}\u0000${row.region}\u0000${playerId}`;
const resultId = (entry: Pick<ResultEntry, 'matchId' | 'playerId'> & { boardId: string }) =>
  `${entry.boardId}\u0000${entry.matchId}\u0000${entry.playerId}`;
const entryId = (entry: ResultEntry) => resultId({ ...entry, boardId: entry.board.id });

/**
 * drizzle takes over the client's timestamp parsing, so the raw statements below read times as
 * epoch milliseconds instead.
 */
type StoredRow = { board_id: string; period: Period; bucket: string; region: string; player_id: string; score: number; reached_ms: number };

/**
 * The write path's durable half, in one transaction: log each result once under its idempotency
 * key, then fold the new results into every board score they touch. Entries are handled in order,
 * as if submitted one by one; a replay (in the log already, or earlier in the same batch) changes
 * nothing. Nothing is written when a SUM total would pass maxScore.
 *
 * Four statements plus one upsert per board in the batch, whatever its size: lock the players,
 * insert the log rows (and, in the same statement, the batch's index_backlog rows), read the
 * originals of duplicates, read the touched board scores, upsert them.
 *
 * Throws when the batch was not recorded, never when it was: should the connection break while
 * COMMIT is on the wire, the outcome is asked of PostgreSQL again (for up to `commitDoubtMs`, by
 * default {@link COMMIT_DOUBT_TIMEOUT_MS}) before answering, and a {@link CommitInDoubtError} is
 * thrown only when it still cannot tell.
 */
export async function recordResults(sql: Sql, entries: ResultEntry[], { commitDoubtMs = COMMIT_DOUBT_TIMEOUT_MS } = {}): Promise<RecordedBatch> {
  // Set once the body has run: a failure after it can only be the COMMIT's (see settleCommit).
  let committing: { xid: string | null; batch: RecordedBatch } | undefined;
  try {
    return await sql.begin(async (tx) => {
      const { batch, xid } = await recordInTransaction(tx, entries);
      committing = { xid, batch };
      return batch;
    });
  } catch (error) {
    if (!committing) throw error;
    // Nothing was written (a batch of duplicates): nothing can be in doubt.
    if (committing.xid === null) throw error;
    const status = await settleCommit(sql, committing.xid, commitDoubtMs);
    if (status === 'committed') return committing.batch;
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
 * again. A rare case: only a batch whose COMMIT was on the wire when the connection broke waits.
 */
async function settleCommit(sql: Sql, xid: string, timeoutMs: number): Promise<'committed' | 'aborted' | 'unknown'> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      const [row] = await sql<{ status: string | null }[]>`select pg_xact_status(${xid}::xid8) as status`;
      if (row?.status === 'committed') return 'committed';
      if (row?.status === 'aborted') return 'aborted';
    } catch {
      // Still away; ask again.
    }
    if (performance.now() >= deadline) return 'unknown';
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The body of recordResults' transaction; answers the batch and the transaction's id (null when nothing was written). */
async function recordInTransaction(tx: TransactionSql, entries: ResultEntry[]): Promise<{ batch: RecordedBatch; xid: string | null }> {
  const firstSeen = new Map<string, number>();
  entries.forEach((entry, i) => {
    if (!firstSeen.has(entryId(entry))) firstSeen.set(entryId(entry), i);
  });
  const candidates = [...firstSeen.values()].map((i) => entries[i]!);
  await lockPlayers(tx, candidates);
  const { inserted, backlogIds, xid } = await insertLog(tx, candidates);
  const isNew = (entry: ResultEntry, i: number) => firstSeen.get(entryId(entry)) === i && inserted.has(entryId(entry));
  const originals = await findOriginals(tx, candidates.filter((entry) => !inserted.has(entryId(entry))));
  const accepted = entries.filter(isNew);

  // Fold the accepted results in order: `running` starts from what the database held and tells
  // whether each result improved the ALL_TIME score; `contribution` is this batch's own part,
  // merged in SQL (the player locks make a concurrent change impossible; the merge keeps even
  // that case right).
  const running = await readBoardScores(tx, accepted);
  const contribution = new Map<string, StoredBoardScore>();
  const improved = new Set<number>();
  entries.forEach((entry, i) => {
    if (!isNew(entry, i)) return;
    const result: BoardScore = { playerId: entry.playerId, score: entry.score, reachedAt: entry.achievedAt };
    for (const row of entry.rows) {
      const id = rowId(entry.board.id, row, entry.playerId);
      const old = running.get(id);
      const next = { boardId: entry.board.id, ...row, ...combine(entry.board, old, result) };
      running.set(id, next);
      contribution.set(id, { boardId: entry.board.id, ...row, ...combine(entry.board, contribution.get(id), result) });
      if (row.period === 'ALL_TIME' && row.region === '' && old?.score !== next.score) improved.add(i);
    }
  });

  const boards = new Map(accepted.map((entry) => [entry.board.id, entry.board]));
  const boardScores: StoredBoardScore[] = [];
  for (const board of boards.values()) {
    const stored = await upsertBoardScores(tx, board, [...contribution.values()].filter((row) => row.boardId === board.id));
    const over = stored.find((row) => row.score > board.maxScore);
    if (over) throw new TotalAboveMaxScoreError(over.playerId, over.score, board.maxScore);
    boardScores.push(...stored);
  }

  const outcomes = entries.map((entry, i): RecordOutcome => {
    if (isNew(entry, i)) {
      return { duplicate: false, improved: improved.has(i), recorded: { achievedAt: entry.achievedAt, region: entry.region } };
    }
    const first = entries[firstSeen.get(entryId(entry))!]!;
    const recorded = originals.get(entryId(entry)) ?? { achievedAt: first.achievedAt, region: first.region };
    return { duplicate: true, improved: false, recorded };
  });
  return { batch: { outcomes, boardScores, backlogIds }, xid };
}

/**
 * Serialises batches that share a player: each transaction takes a transaction-scoped advisory
 * lock per (board, player), all in one statement and in ascending key order, so two batches can
 * never wait on each other in a cycle. Batches of different players run in parallel.
 */
async function lockPlayers(tx: TransactionSql, entries: ResultEntry[]): Promise<void> {
  if (entries.length === 0) return;
  // Board ids hold no colon, so board:player names one player of one board.
  const players = [...new Set(entries.map((e) => `${e.board.id}:${e.playerId}`))];
  await tx`
    select pg_advisory_xact_lock(k)
    from (select distinct hashtextextended(p, 0) as k from unnest(${tx.array(players)}::text[]) as p order by k) as keys`;
}

/**
 * Logs the results, and in the same statement queues one index_backlog row per (board, player)
 * whose result is new (see index-backlog.ts): the outbox costs no extra round trip inside the
 * transaction. Answers the new results' ids, the backlog rows' ids, and the transaction's id
 * (null when nothing was new, so nothing was written).
 */
async function insertLog(tx: TransactionSql, entries: ResultEntry[]): Promise<{ inserted: Set<string>; backlogIds: number[]; xid: string | null }> {
  if (entries.length === 0) return { inserted: new Set(), backlogIds: [], xid: null };
  const rows = await tx<{ board_id: string; match_id: string; player_id: string; backlog_ids: number[]; xid: string }[]>`
    with logged as (
      insert into results (board_id, match_id, player_id, score, region, achieved_at)
      select * from unnest(
        ${tx.array(entries.map((e) => e.board.id))}::text[],
        ${tx.array(entries.map((e) => e.matchId))}::text[],
        ${tx.array(entries.map((e) => e.playerId))}::text[],
        ${tx.array(entries.map((e) => String(e.score)))}::int8[],
        ${tx.array(entries.map((e) => e.region))}::text[],
        ${tx.array(entries.map((e) => e.achievedAt.toISOString()))}::timestamptz[])
      on conflict do nothing
      returning board_id, match_id, player_id),
    queued as (
      insert into index_backlog (board_id, player_id)
      select distinct board_id, player_id from logged
      returning id)
    select board_id, match_id, player_id,
           (select coalesce(array_agg(id), '{}') from queued) as backlog_ids,
           pg_current_xact_id()::text as xid
    from logged`;
  return {
    inserted: new Set(rows.map((row) => resultId({ boardId: row.board_id, matchId: row.match_id, playerId: row.player_id }))),
    backlogIds: rows[0]?.backlog_ids.map(Number) ?? [],
    xid: rows[0]?.xid ?? null,
  };
}

async function findOriginals(tx: TransactionSql, entries: ResultEntry[]): Promise<Map<string, RecordOutcome['recorded']>> {
  if (entries.length === 0) return new Map();
  const rows = await tx<{ board_id: string; match_id: string; player_id: string; achieved_ms: number; region: string | null }[]>`
    select r.board_id, r.match_id, r.player_id, round(extract(epoch from r.achieved_at) * 1000)::float8 as achieved_ms, r.region
    from results r
    join unnest(
      ${tx.array(entries.map((e) => e.board.id))}::text[],
      ${tx.array(entries.map((e) => e.matchId))}::text[],
      ${tx.array(entries.map((e) => e.playerId))}::text[])
      as k(board_id, match_id, player_id)
      on r.board_id = k.board_id and r.match_id = k.match_id and r.player_id = k.player_id`;
  return new Map(
    rows.map((row) => [
      resultId({ boardId: row.board_id, matchId: row.match_id, playerId: row.player_id }),
      { achievedAt: new Date(row.achieved_ms), region: row.region },
    ]),
  );
}

function toStored(row: StoredRow): StoredBoardScore {
  return {
    boardId: row.board_id,
    period: row.period,
    bucket: row.bucket,
    region: row.region,
    playerId: row.player_id,
    score: row.score,
    reachedAt: new Date(row.reached_ms),
  };
}

async function readBoardScores(tx: TransactionSql, entries: ResultEntry[]): Promise<Map<string, StoredBoardScore>> {
  const keys = new Map<string, { boardId: string; row: ScoreRowKey; playerId: string }>();
  for (const entry of entries) {
    for (const row of entry.rows) keys.set(rowId(entry.board.id, row, entry.playerId), { boardId: entry.board.id, row, playerId: entry.playerId });
  }
  if (keys.size === 0) return new Map();
  const wanted = [...keys.values()];
  const rows = await tx<StoredRow[]>`
    select s.board_id, s.period, s.bucket, s.region, s.player_id, s.score, round(extract(epoch from s.reached_at) * 1000)::float8 as reached_ms
    from board_scores s
    join unnest(
      ${tx.array(wanted.map((k) => k.boardId))}::text[],
      ${tx.array(wanted.map((k) => k.row.period))}::text[],
      ${tx.array(wanted.map((k) => k.row.bucket))}::text[],
      ${tx.array(wanted.map((k) => k.row.region))}::text[],
      ${tx.array(wanted.map((k) => k.playerId))}::text[])
      as k(board_id, period, bucket, region, player_id)
      on s.board_id = k.board_id and s.period = k.period and s.bucket = k.bucket
         and s.region = k.region and s.player_id = k.player_id
`;
  return new Map(rows.map((row) => [rowId(row.board_id, row, row.player_id), toStored(row)]));
}

async function upsertBoardScores(tx: TransactionSql, board: Board, rows: StoredBoardScore[]): Promise<StoredBoardScore[]> {
  if (rows.length === 0) return [];
  const merge =
    board.aggregate === 'SUM'
      ? tx`score = s.score + excluded.score,
           reached_at = case when s.score > 0 and excluded.score > 0 then greatest(s.reached_at, excluded.reached_at)
                             when excluded.score > 0 then excluded.reached_at
                             when s.score > 0 then s.reached_at
                             else ${board.order === 'HIGH_FIRST' ? tx`least` : tx`greatest`}(s.reached_at, excluded.reached_at) end`
      : tx`score = case when ${ranksAheadSql(tx, board)} then excluded.score else s.score end,
           reached_at = case when ${ranksAheadSql(tx, board)} then excluded.reached_at else s.reached_at end`;
  const stored = await tx<StoredRow[]>`
    insert into board_scores as s (board_id, period, bucket, region, player_id, score, reached_at)
    select ${board.id}, * from unnest(
      ${tx.array(rows.map((r) => r.period))}::text[],
      ${tx.array(rows.map((r) => r.bucket))}::text[],
      ${tx.array(rows.map((r) => r.region))}::text[],
      ${tx.array(rows.map((r) => r.playerId))}::text[],
      ${tx.array(rows.map((r) => String(r.score)))}::int8[],
      ${tx.array(rows.map((r) => r.reachedAt.toISOString()))}::timestamptz[])
    on conflict (board_id, period, bucket, region, player_id) do update set ${merge}
    returning board_id, period, bucket, region, player_id, score, round(extract(epoch from s.reached_at) * 1000)::float8 as reached_ms`;
  return stored.map(toStored);
}

/** SQL for "the incoming board score ranks ahead of the stored one": the twin of ranksAhead(); the SUM merge above is the twin of combine(). */
function ranksAheadSql(tx: TransactionSql, board: Board) {
  const strictly = board.order === 'HIGH_FIRST' ? tx`excluded.score > s.score` : tx`excluded.score < s.score`;
  return tx`(${strictly} or (excluded.score = s.score and excluded.reached_at < s.reached_at))`;
}
