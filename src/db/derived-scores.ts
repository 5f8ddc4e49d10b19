import type { PendingQuery, Row, Sql, TransactionSql } from 'postgres';
import {
  type Board,
  type EntryMetadata,
  type Period,
  type RecordedBoardScore,
  type ScoreOrder,
  type TieBreak,
  combine,
  keepsBoardScores,
} from '../model/board.js';
import { bucketAt } from '../model/buckets.js';
import type { PlayerBoardScore } from './board-score-rows.js';
import { rowId } from './result-entries.js';
import { resultsBestFirst } from './result-order.js';

/**
 * The board scores a board does not keep as rows (keepsBoardScores in model/board.ts: a BEST
 * board's day, week, month and season), derived from the score log when they are read: a player's
 * best in a bucket is their best result logged in the bucket's span, the one that ranks ahead of
 * the others (combine() of them all: the better result, by the score and then each tie-break
 * column in its own direction, then the earlier time; between results of the same millisecond, the
 * first recorded).
 *
 * A bucket's whole list (a rebuild, a count, a season's freeze) reads the span's results through
 * results_achieved_at_brin, one partition a month; a few players' scores (a standing's recorded
 * time, a flag, the catch-up) read their results through the log's primary key, which leads with
 * (board, player).
 */

/** What picks a derived bucket's board scores out of the log: the board's order and the bucket's span. */
export interface DerivedSpan {
  order: ScoreOrder;
  /** The board's maxScore and tie-break columns: what orders results by the whole (score, columns…) tuple (db/result-order.ts). Left out: a plain board. */
  maxScore?: number | undefined;
  tieBreaks?: readonly TieBreak[] | undefined;
  from: Date;
  /** Exclusive; null for a season with no end set. */
  until: Date | null;
  /**
   * When the bucket closes (its end plus the board's grace): results recorded from then on are late
   * for it, counted in the board's other buckets but not in this one. Null (or left out): never.
   */
  closesAt?: Date | null | undefined;
}

/**
 * The columns every list query reads: player id, score, reached at, metadata (json; null unless
 * asked for), tie_break_values (bigint[]; null on a board without columns).
 */
export type ScoreSource = PendingQuery<Row[]>;

/** Which of a list's board scores a list query reads, and how much of each. */
export interface ListRead {
  /** Only these players' board scores. Default: every player's. */
  players?: readonly string[] | undefined;
  /** Whether the metadata column is read (up to a kilobyte a row); null is read when not. Default false. */
  metadata?: boolean | undefined;
  /** Only the players of one part of the list (see {@link inPart}): one reader's share of a read split among several. Default: every part. */
  part?: ListPart | undefined;
}

/** One of `of` parts of a list, each player in exactly one of them by a hash of their id. */
export interface ListPart {
  index: number;
  of: number;
}

/**
 * A condition (with its `and`) on the rows whose player id, the column `playerId` (qualified, e.g.
 * r.player_id), falls in `part`; nothing for no part. O(1) a row.
 */
export function inPart(sql: Sql | TransactionSql, playerId: string, part: ListPart | undefined) {
  // hashtext is int4: its sign bit is masked off, as abs() of its least value would overflow.
  return part ? sql`and (hashtext(${sql(playerId)}) & 2147483647) % ${part.of} = ${part.index}` : sql``;
}

/**
 * Each player's best result in a derived bucket (see ListRead for which, and how much): the SQL
 * twin of combine() for BEST, one row per player in the order of the ids' bytes, as columns
 * player_id, score, reached_at, metadata, tie_break_values. `region` '' is the global list, which
 * every result of the span is in. On a board with tie-break columns the best is by the whole
 * (score, columns…) tuple, each in its own direction (db/result-order.ts), then the time.
 */
export function derivedBoardScores(
  sql: Sql | TransactionSql,
  list: { boardId: string; region: string; derived: DerivedSpan },
  read: ListRead = {},
): ScoreSource {
  const { players } = read;
  const { derived } = list;
  const better = resultsBestFirst(sql, { order: derived.order, maxScore: derived.maxScore ?? 0, tieBreaks: derived.tieBreaks }, 'r');
  // Grouped by the player id's bytes (collate "C"), not the database's collation: the rows only
  // need each player's together, and a bytewise sort compares abbreviated keys with memcmp where
  // the collation calls strcoll on every comparison. A bucket's whole list sorts every result of
  // its span before its first row (the log's heap is in time order, so a walk of its primary key
  // would read the heap at random): that sort is most of a derived bucket's rebuild.
  return sql`
    select distinct on (r.player_id collate "C") r.player_id, r.score, r.achieved_at as reached_at, ${read.metadata ? sql`r.metadata` : sql`null::json as metadata`},
           r.tie_break_values
    from results r
    where ${inSpan(sql, list)}
      ${players ? sql`and r.player_id = any(${sql.array([...new Set(players)])}::text[])` : sql``}
      ${inPart(sql, 'r.player_id', read.part)}
    order by r.player_id collate "C", ${better}, r.achieved_at, r.recorded_at, r.match_id`;
}

/** The results `r` of a derived list: its board's, achieved in its span, of its region ('' for every one). */
export function inSpan(sql: Sql | TransactionSql, list: { boardId: string; region: string; derived: DerivedSpan }) {
  const { from, until, closesAt } = list.derived;
  return sql`r.board_id = ${list.boardId}
      and r.achieved_at >= ${from.toISOString()}::timestamptz and r.achieved_at < ${until?.toISOString() ?? 'infinity'}::timestamptz
      ${closesAt ? sql`and r.recorded_at < ${closesAt.toISOString()}::timestamptz` : sql``}
      ${list.region === '' ? sql`` : sql`and r.region = ${list.region}`}`;
}

/** A (board, player) pair whose derived board scores are asked for. */
export interface BoardPlayer {
  boardId: string;
  playerId: string;
}

/** A derived board score of one of the players asked about. */
export interface DerivedPlayerScore extends PlayerBoardScore {
  playerId: string;
}

type CalendarRow = Pick<Board, 'id' | 'order' | 'aggregate' | 'periods' | 'epoch' | 'timeZone' | 'regionTimeZones' | 'tieBreaks'>;
type LoggedRow = [
  boardId: string,
  playerId: string,
  score: number,
  region: string | null,
  achievedMs: number,
  metadata: EntryMetadata | null,
  seasonId: string | null,
  startsMs: number | null,
  endsMs: number | null,
  tieBreakValues: number[] | null,
];

/** Which players derivedScoresOfPlayers answers for. */
export interface DerivedScoresOptions {
  /** Whether players flagged now are answered too (a flag or an unflag asks for them). Default false. */
  withFlagged?: boolean;
  /**
   * The caller's clock: results too old to fall in any bucket still kept at this instant are not
   * read (a calendar bucket is kept for the board's retention after it ends; an open season
   * whatever its age), so a player's years of history cost nothing. Default: every result is read.
   */
  keptAt?: Date;
}

const DAY_MS = 86_400_000;

/**
 * The earliest a result still in a kept bucket at `keptAt` can have been achieved: the start of the
 * oldest calendar bucket kept (its retention, plus the longest such bucket, plus a day for the time
 * zones), or of the oldest open season, whichever is earlier. O(1).
 */
function keptSince(keptAt: Date, retention: Board['retention'], openSeasonMs: number | null): number {
  const days = Math.max(retention.DAILY + 1, retention.WEEKLY + 7, retention.MONTHLY + 31) + 1;
  return Math.min(keptAt.getTime() - days * DAY_MS, openSeasonMs ?? Infinity);
}

/** A BEST board's calendar, its derived periods, and the earliest result of it that may still be in a kept bucket. */
type DerivingBoard = CalendarRow & { since: number };

/**
 * The BEST boards (of `boardIds`, or every one when null) with what deriving their board scores
 * needs. One query. O(boards).
 */
async function derivingBoards(sql: Sql | TransactionSql, boardIds: readonly string[] | null, keptAt: Date | undefined): Promise<Map<string, DerivingBoard>> {
  type BoardRow = {
    id: string;
    order: ScoreOrder;
    periods: Period[];
    epoch_ms: number;
    time_zone: string;
    region_time_zones: Board['regionTimeZones'];
    tie_breaks: TieBreak[] | null;
    daily: number;
    weekly: number;
    monthly: number;
    season_ms: number | null;
  };
  const rows = await sql<BoardRow[]>`
    select id, "order", periods, round(extract(epoch from epoch) * 1000)::float8 as epoch_ms, time_zone, region_time_zones, tie_breaks,
           daily_retention_days as daily, weekly_retention_days as weekly, monthly_retention_days as monthly,
           (select round(extract(epoch from min(z.starts_at)) * 1000)::float8 from seasons z where z.board_id = b.id and z.closed_at is null) as season_ms
    from boards b where aggregate = 'BEST' ${boardIds ? sql`and id = any(${sql.array([...new Set(boardIds)])}::text[])` : sql``}`;
  return new Map(
    rows.map((row): [string, DerivingBoard] => [
      row.id,
      {
        id: row.id,
        order: row.order,
        aggregate: 'BEST',
        periods: row.periods.filter((period) => !keepsBoardScores({ aggregate: 'BEST' }, period)),
        epoch: new Date(row.epoch_ms),
        timeZone: row.time_zone,
        regionTimeZones: row.region_time_zones,
        tieBreaks: row.tie_breaks ?? [],
        since: keptAt ? keptSince(keptAt, { DAILY: row.daily, WEEKLY: row.weekly, MONTHLY: row.monthly }, row.season_ms) : -Infinity,
      },
    ]),
  );
}

/**
 * Every derived board score the pairs hold, in every bucket their logged results fall in, players
 * flagged now left out unless asked for. Each result counts towards the buckets the write path
 * gives it (bucketAt on the calendar of the board, and of its region for the regional list; the
 * open season whose [startsAt, endsAt) holds it); the caller keeps the buckets still kept. One
 * query for the boards and one for the results: a primary-key probe per pair and month partition.
 * O(results of the pairs).
 */
export async function derivedScoresOfPlayers(
  sql: Sql | TransactionSql,
  pairs: readonly BoardPlayer[],
  options: DerivedScoresOptions = {},
): Promise<DerivedPlayerScore[]> {
  if (pairs.length === 0) return [];
  const boards = await derivingBoards(
    sql,
    pairs.map((p) => p.boardId),
    options.keptAt,
  );
  return derivedScoresOn(sql, boards, pairs, options);
}

/** Every derived board score one player holds, on every board (see derivedScoresOfPlayers). */
export async function derivedScoresOfPlayer(sql: Sql | TransactionSql, playerId: string, options: DerivedScoresOptions = {}): Promise<DerivedPlayerScore[]> {
  const boards = await derivingBoards(sql, null, options.keptAt);
  return derivedScoresOn(
    sql,
    boards,
    [...boards.keys()].map((boardId) => ({ boardId, playerId })),
    options,
  );
}

/** The results query and fold of derivedScoresOfPlayers, given the boards it reads. */
async function derivedScoresOn(
  sql: Sql | TransactionSql,
  boards: Map<string, DerivingBoard>,
  pairs: readonly BoardPlayer[],
  options: DerivedScoresOptions,
): Promise<DerivedPlayerScore[]> {
  const wanted = pairs.filter((p) => (boards.get(p.boardId)?.periods.length ?? 0) > 0);
  if (wanted.length === 0) return [];
  // One bound for every board asked about, so that PostgreSQL prunes the older months' partitions.
  const since = Math.min(...wanted.map((p) => boards.get(p.boardId)!.since));
  const rows = (await sql`
    select r.board_id, r.player_id, r.score, r.region, round(extract(epoch from r.achieved_at) * 1000)::float8, r.metadata::text,
           z.id, round(extract(epoch from z.starts_at) * 1000)::float8, round(extract(epoch from z.ends_at) * 1000)::float8,
           r.tie_break_values::float8[]
    from (select distinct * from unnest(${sql.array(wanted.map((p) => p.boardId))}::text[], ${sql.array(wanted.map((p) => p.playerId))}::text[])
          as k(board_id, player_id)) as k
    join results r on r.board_id = k.board_id and r.player_id = k.player_id
      ${Number.isFinite(since) ? sql`and r.achieved_at >= ${new Date(since).toISOString()}::timestamptz` : sql``}
    left join seasons z on z.board_id = r.board_id and z.closed_at is null
      and r.achieved_at >= z.starts_at and (z.ends_at is null or r.achieved_at < z.ends_at)
    ${options.withFlagged ? sql`` : sql`where not exists (select 1 from players p where p.id = r.player_id and p.flagged_at is not null)`}
    order by r.achieved_at, r.recorded_at, r.match_id`.values()) as unknown as LoggedRow[];
  return foldLogged(boards, rows);
}

/**
 * Folds logged results, in the order they were logged, into the derived board scores of each
 * (board, period, bucket, region, player) they fall in. O(results · periods).
 */
function foldLogged(boards: Map<string, CalendarRow>, rows: LoggedRow[]): DerivedPlayerScore[] {
  const scores = new Map<string, { held: Omit<DerivedPlayerScore, keyof RecordedBoardScore>; best: RecordedBoardScore }>();
  for (const [boardId, playerId, score, region, achievedMs, metadata, seasonId, startsMs, endsMs, tieBreakValues] of rows) {
    const board = boards.get(boardId)!;
    const achievedAt = new Date(achievedMs);
    const result: RecordedBoardScore = { playerId, score, reachedAt: achievedAt, metadata };
    // Only on a board with columns, so a plain board's scores stay as they were (no empty array).
    if (tieBreakValues && tieBreakValues.length > 0) result.tieBreakValues = tieBreakValues;
    for (const period of board.periods) {
      if (period === 'SEASON' && seasonId === null) continue;
      for (const list of region === null ? [null] : [null, region]) {
        const label = period === 'SEASON' ? seasonId! : bucketAt(board, period, achievedAt, list).label;
        const key = rowId(boardId, { period, bucket: label, region: list ?? '' }, playerId);
        const known = scores.get(key);
        if (known) {
          known.best = combine(board, known.best, result);
          continue;
        }
        const season = period === 'SEASON' ? { startsAt: new Date(startsMs!), endsAt: endsMs === null ? null : new Date(endsMs), closedAt: null } : null;
        scores.set(key, { held: { boardId, period, bucket: label, region: list ?? '', season }, best: result });
      }
    }
  }
  return [...scores.values()].map(({ held, best }) => ({ ...held, ...best }));
}
