import type { Sql, TransactionSql } from 'postgres';
import { reserveUnbounded, whileUnbounded } from './client.js';
import type { BoardScoreRow, RecordedBoardScore } from '../model/board.js';
import { Repeater } from '@repeaterjs/repeater';
import { type DerivedSpan, type ListPart, type ListRead, type ScoreSource, derivedBoardScores, inPart, inSpan } from './derived-scores.js';
import type { ScoreRowKey } from './result-entries.js';

/** One ranked list: a bucket of a board, with `region` '' for the global list. */
export interface BoardScoreList extends ScoreRowKey {
  boardId: string;
  /** For a bucket derived from the score log (see keepsBoardScores): how; null for one kept in board_scores. */
  derived: DerivedSpan | null;
}

/**
 * A list's board scores (see ListRead for which, and how much), as columns player_id, score,
 * reached_at, metadata, tie_break_values (null on a board without columns): the rows of board_scores (a primary-key range, or a probe per player), or
 * those derived from the log (derived-scores.ts).
 */
export function listBoardScores(sql: Sql | TransactionSql, list: BoardScoreList, read: ListRead = {}): ScoreSource {
  if (list.derived) return derivedBoardScores(sql, { boardId: list.boardId, region: list.region, derived: list.derived }, read);
  const { players } = read;
  return sql`
    select s.player_id, s.score, s.reached_at, ${read.metadata ? sql`s.metadata` : sql`null::json as metadata`}, s.tie_break_values from board_scores s
    where s.board_id = ${list.boardId} and s.period = ${list.period} and s.bucket = ${list.bucket} and s.region = ${list.region}
      ${players ? sql`and s.player_id = any(${sql.array([...new Set(players)])}::text[])` : sql``}
      ${inPart(sql, 's.player_id', read.part)}`;
}

export interface StreamBoardScoresOptions {
  /**
   * Rows per fetch from the server-side cursor, and so per chunk yielded. Default 50,000: a rebuild
   * orders each chunk roughly by score before Redis takes it, and a wider chunk lands each insert
   * nearer the last (bench/RESULTS.md, "the rebuild packs into typed arrays").
   */
  chunkSize?: number;
  /**
   * Connections that read a derived list (see keepsBoardScores) at once, each the players of one
   * part of it (see inPart), their chunks yielded as they come; a list kept as rows is always read
   * by one. Each holds a connection of the pool for the whole read, and up to two chunks. Default 2
   * (a recovery, which rebuilds several buckets at once, reads each with one).
   *
   * Why: a derived list's read sorts every result of its span before its first row, on one
   * PostgreSQL backend (a cursor's query gets no parallel workers), and the rebuild has nothing to
   * write meanwhile. In two parts the two sorts run side by side, each of half the rows, and the
   * rows come once the first is done: a MONTHLY rebuild of 2,000,000 results went from 225,114 to
   * 266,731–277,458 members/s (`npm run bench -- rebuild`, bench/RESULTS.md). A list kept as rows
   * is a primary-key range with no sort, and streams from its first fetch.
   */
  readers?: number;
}

/**
 * Every board score of one list, leaving out flagged players, in chunks read through a
 * server-side cursor per reader (see StreamBoardScoresOptions.readers), each chunk read ahead while
 * the caller handles the one before: memory stays at two chunks a reader (plus what the caller
 * holds) however large the list. Each reader's rows are one consistent snapshot, taken when the
 * first chunk is asked for; nothing is sent to the database before that. Breaking out of the loop
 * closes every cursor.
 *
 * Each row is the driver's own array, yielded as it comes: a rebuild reads millions, and an object
 * and a Date made for each cost the process more than reading the row did. Times are read as epoch
 * milliseconds, as drizzle takes over the client's timestamp parsing (as in result-statements.ts).
 *
 * Each reader runs on a connection of its own without the pool's statement timeout (reserveUnbounded):
 * a rebuild is not a request, and the sort before a derived list's first row alone outlasts half a
 * request's bound on a busy month (8 to 12 s for a month of 8,164,600 results here,
 * bench/RESULTS.md), which left such a bucket unrebuildable after Redis lost it.
 *
 * O(N) over the list's rows (an index range scan on the primary key, or for a derived list the
 * span's results), anti-joined to the flagged few of players_flagged_idx rather than joined to
 * every profile.
 */
export function streamBoardScores(sql: Sql, list: BoardScoreList, options: StreamBoardScoresOptions = {}): AsyncIterable<BoardScoreRow[]> {
  const readers = list.derived ? Math.max(1, options.readers ?? 2) : 1;
  const chunkSize = options.chunkSize ?? 50_000;
  if (readers === 1) return streamPart(sql, list, chunkSize, undefined);
  // Each part's snapshot is taken when it is first asked for, so every one is taken after the
  // caller began iterating, which is all a rebuild asks of the snapshot (see rebuildSortedSet): a
  // player is in one part, so each board score comes whole from one snapshot.
  return Repeater.merge(Array.from({ length: readers }, (_, index) => streamPart(sql, list, chunkSize, { index, of: readers })));
}

/** One reader of streamBoardScores: the board scores of one part of the list (all of it for no part), on a connection of its own. */
async function* streamPart(sql: Sql, list: BoardScoreList, chunkSize: number, part: ListPart | undefined): AsyncGenerator<BoardScoreRow[]> {
  const session = await reserveUnbounded(sql);
  try {
    const cursor = session.sql<BoardScoreRow[]>`
      select s.player_id, s.score, round(extract(epoch from s.reached_at) * 1000)::float8 as reached_ms, s.tie_break_values::float8[]
      from (${listBoardScores(session.sql, list, { part })}) as s
      where not exists (select 1 from players p where p.id = s.player_id and p.flagged_at is not null)`
      .values()
      .cursor(chunkSize);
    const chunks = cursor[Symbol.asyncIterator]();
    // (The driver answers a plain { done: true }, not a promise, once the cursor is through.)
    const ask = () => Promise.resolve(chunks.next());
    let next = ask();
    try {
      for (;;) {
        const step = await next;
        if (step.done) return;
        // The next chunk is asked for before this one is handed over, so that PostgreSQL reads it
        // while the caller packs and writes this one (the cursor fetches only when asked).
        next = ask();
        // The column order is the tuple's: player id, score, reached at, tie-break values (null on a board without columns).
        yield step.value as unknown as BoardScoreRow[];
      }
    } finally {
      // A caller that stops early leaves a fetch in flight: the cursor is closed once it is in.
      await next.then(
        (step) => void (step.done || chunks.return?.()),
        () => undefined,
      );
    }
  } finally {
    await session.release();
  }
}

/**
 * Every list kept in board_scores that holds at least one board score: the distinct (board,
 * period, bucket, region) of board_scores, old buckets included (the caller keeps those still
 * live; derived lists are the caller's to name from the calendar). A loose index scan on the
 * primary key, one probe per list, rather than a scan of every row: O(L log N) for L lists.
 */
export async function listsWithBoardScores(sql: Sql): Promise<BoardScoreList[]> {
  const rows = await sql<{ board_id: string; period: BoardScoreList['period']; bucket: string; region: string }[]>`
    with recursive lists as (
      (select board_id, period, bucket, region from board_scores order by board_id, period, bucket, region limit 1)
      union all
      select next.board_id, next.period, next.bucket, next.region
      from lists, lateral (
        select s.board_id, s.period, s.bucket, s.region from board_scores s
        where (s.board_id, s.period, s.bucket, s.region) > (lists.board_id, lists.period, lists.bucket, lists.region)
        order by s.board_id, s.period, s.bucket, s.region
        limit 1) as next
    )
    select board_id, period, bucket, region from lists`;
  return rows.map((row) => ({ boardId: row.board_id, period: row.period, bucket: row.bucket, region: row.region, derived: null }));
}

/** The query fragment of one list's players: its board-score rows' players, or the players of a derived list's span. */
export const playersOfList = (sql: Sql, list: BoardScoreList) =>
  list.derived
    ? sql`select distinct r.player_id from results r where ${inSpan(sql, { boardId: list.boardId, region: list.region, derived: list.derived })}`
    : sql`
      select s.player_id from board_scores s
      where s.board_id = ${list.boardId} and s.period = ${list.period} and s.bucket = ${list.bucket} and s.region = ${list.region}`;

export interface CountRankableOptions {
  /**
   * Whether the count runs without the pool's statement timeout (reserveUnbounded): for the drift
   * gauge's background measurement, never for a request. Default false.
   */
  unbounded?: boolean;
}

/**
 * How many of one list's board scores belong to unflagged players: what its sorted set should hold
 * (the drift gauge compares the two, and a rebuild's progress counts towards it). One count over the
 * list's primary-key range, or over the players of a derived list's span. O(N) for N rows.
 */
export async function countRankable(sql: Sql, list: BoardScoreList, options: CountRankableOptions = {}): Promise<number> {
  if (options.unbounded) return whileUnbounded(sql, (session) => countRankable(session, list));
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from (${playersOfList(sql, list)}) as s
    where not exists (select 1 from players p where p.id = s.player_id and p.flagged_at is not null)`;
  return row?.n ?? 0;
}

export interface FindBoardScoresOptions {
  /** Whether to read each board score's metadata; when not, every one answers null. Default false. */
  metadata?: boolean;
}

/**
 * The board scores these players hold in one list, by player id (a player without one is left
 * out). One query however many players: a primary-key probe per player, O(k log N) (for a derived
 * list, through each player's results in the span's partitions), with the players sent as one
 * array (a page of a thousand costs a thousand-element parameter, not five).
 * The metadata column (up to a kilobyte a row) is read only when asked for.
 */
export async function findBoardScores(
  sql: Sql,
  list: BoardScoreList,
  playerIds: readonly string[],
  options: FindBoardScoresOptions = {},
): Promise<Map<string, RecordedBoardScore>> {
  const found = new Map<string, RecordedBoardScore>();
  if (playerIds.length === 0) return found;
  const rows = await sql<{ player_id: string; score: number; reached_ms: number; metadata: string | null; tie_break_values: number[] | null }[]>`
    select s.player_id, s.score, round(extract(epoch from s.reached_at) * 1000)::float8 as reached_ms,
           ${options.metadata ? sql`s.metadata::text` : sql`null::text`} as metadata, s.tie_break_values::float8[] as tie_break_values
    from (${listBoardScores(sql, list, { players: playerIds, metadata: options.metadata })}) as s`;
  for (const row of rows) {
    const score = { playerId: row.player_id, score: row.score, reachedAt: new Date(row.reached_ms), metadata: row.metadata };
    found.set(row.player_id, row.tie_break_values ? { ...score, tieBreakValues: row.tie_break_values } : score);
  }
  return found;
}
