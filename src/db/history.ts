import type { Sql } from 'postgres';
import type { EntryMetadata, Period, RankStyle, ScoreOrder } from '../model/board.js';
import type { FrozenKey } from './frozen.js';

/**
 * A player's history (their final standing in each closed bucket of a period) and a closed
 * bucket's score distribution, read from the frozen standings (frozen_standings, with their
 * buckets' markers in frozen_buckets; see frozen.ts).
 */

/** One closed bucket of a player's history and where they finished in it. */
export interface HistoryRow {
  bucket: string;
  startsAt: Date;
  endsAt: Date | null;
  closedAt: Date;
  /** How many players the bucket ranked when frozen. */
  size: number;
  /** The rank in the style asked for (see playerHistory). */
  rank: number;
  score: number;
  reachedAt: Date;
  /** The frozen metadata's JSON text; null when it had none, or when it was not asked for. */
  metadata: EntryMetadata | null;
  /** The frozen result's tie-break values; empty on a board without columns. */
  tieBreakValues: number[];
}

/** Where a page of a history starts: strictly after this bucket in the history's order (newest first). */
export interface HistoryAfter {
  startsAt: Date;
  bucket: string;
}

export interface HistoryArgs {
  boardId: string;
  playerId: string;
  period: Period;
  /** '' for the global list. */
  region: string;
  /** Only buckets that ended after this instant (a calendar period's retention); null: every one. */
  endedAfter: Date | null;
  after: HistoryAfter | null;
  limit: number;
  /** The rank style: ORDINAL the frozen rank, COMPETITION the first frozen rank of the score, DENSE one more than the distinct better scores. */
  style: RankStyle;
  order: ScoreOrder;
  /** Whether the metadata column is read. */
  metadata: boolean;
}

type HistoryDbRow = {
  bucket: string;
  starts_ms: number;
  ends_ms: number | null;
  closed_ms: number;
  size: number;
  rank: number;
  score: number;
  reached_ms: number;
  metadata: string | null;
  tie_break_values: number[] | null;
};

/**
 * Up to `limit` closed buckets of a period where the player has a frozen standing, newest first
 * (by start, then label), strictly after `after`: one range scan of frozen_standings_player_idx
 * (player, board, period, region), each row joined to its bucket's marker by primary key, sorted
 * (a player has at most one row a bucket, so the sort is of their buckets of the period). An erased
 * player's rows have no player id and never match. A styled rank is one more probe a row, over
 * the result (the score with every tie-break column; the columns are null on a plain board):
 * COMPETITION the result's first rank (frozen_standings_score_idx, O(log N), plus the standings of
 * the score ahead of it on a board with columns); DENSE the distinct better results counted on the
 * same index: those of a better score, and those of the same score ranked ahead with other values
 * (O(rows ahead)). O(B log B) for the player's B buckets.
 */
export async function playerHistory(sql: Sql, args: HistoryArgs): Promise<HistoryRow[]> {
  const same = sql`g.board_id = f.board_id and g.period = f.period and g.bucket = f.bucket and g.region = f.region`;
  const better = args.order === 'HIGH_FIRST' ? sql`g.score > f.score` : sql`g.score < f.score`;
  const rank =
    args.style === 'COMPETITION'
      ? sql`(select min(g.rank) from frozen_standings g where ${same} and g.score = f.score and g.tie_break_values is not distinct from f.tie_break_values)`
      : args.style === 'DENSE'
        ? sql`(select count(distinct (g.score, g.tie_break_values)) + 1 from frozen_standings g where ${same} and ${better})
            + (select count(distinct g.tie_break_values) from frozen_standings g
               where ${same} and g.score = f.score and g.rank < f.rank and g.tie_break_values is distinct from f.tie_break_values)`
        : sql`f.rank`;
  const rows = await sql<HistoryDbRow[]>`
    select f.bucket, round(extract(epoch from b.starts_at) * 1000)::float8 as starts_ms,
           round(extract(epoch from b.ends_at) * 1000)::float8 as ends_ms,
           round(extract(epoch from b.closed_at) * 1000)::float8 as closed_ms, b.size,
           (${rank})::int as rank, f.score, round(extract(epoch from f.reached_at) * 1000)::float8 as reached_ms,
           ${args.metadata ? sql`f.metadata::text` : sql`null::text`} as metadata, f.tie_break_values::float8[] as tie_break_values
    from frozen_standings f
    join frozen_buckets b on b.board_id = f.board_id and b.period = f.period and b.bucket = f.bucket and b.region = f.region
    where f.player_id = ${args.playerId} and f.board_id = ${args.boardId} and f.period = ${args.period} and f.region = ${args.region}
      ${args.endedAfter ? sql`and b.ends_at > ${args.endedAfter.toISOString()}::timestamptz` : sql``}
      ${args.after ? sql`and (b.starts_at, b.bucket collate "C") < (${args.after.startsAt.toISOString()}::timestamptz, ${args.after.bucket} collate "C")` : sql``}
    order by b.starts_at desc, b.bucket collate "C" desc
    limit ${args.limit}`;
  return rows.map((row) => ({
    bucket: row.bucket,
    startsAt: new Date(row.starts_ms),
    endsAt: row.ends_ms === null ? null : new Date(row.ends_ms),
    closedAt: new Date(row.closed_ms),
    size: row.size,
    rank: row.rank,
    score: Number(row.score),
    reachedAt: new Date(row.reached_ms),
    metadata: row.metadata,
    tieBreakValues: row.tie_break_values ?? [],
  }));
}

/**
 * The lowest and highest frozen score of a closed list, or null when it ranked nobody: two probes
 * of frozen_standings_score_idx. Erased players' rows count: they keep their ranks. O(log N).
 */
export async function frozenScoreEnds(sql: Sql, key: FrozenKey): Promise<{ lowest: number; highest: number } | null> {
  const [row] = await sql<{ lowest: string | null; highest: string | null }[]>`
    select min(score) as lowest, max(score) as highest from frozen_standings
    where board_id = ${key.boardId} and period = ${key.period} and bucket = ${key.bucket} and region = ${key.region}`;
  return !row || row.lowest === null || row.highest === null ? null : { lowest: Number(row.lowest), highest: Number(row.highest) };
}

/**
 * How many frozen standings of a closed list fall in each bin, the bins cut at the whole scores
 * `thresholds` (ascending; bin 0 holds the scores below the first, bin i those from the i-th up
 * to the next, the last those from the last on: width_bucket's numbering). One pass over the
 * list's entries of frozen_standings_score_idx, grouped by bin: O(N log bins). Erased players'
 * rows count. Answers thresholds.length + 1 counts.
 */
export async function frozenBinCounts(sql: Sql, key: FrozenKey, thresholds: readonly number[]): Promise<number[]> {
  const rows = await sql<{ bin: number; players: number }[]>`
    select width_bucket(score, ${sql.array(thresholds.map(String))}::bigint[]) as bin, count(*)::int as players
    from frozen_standings
    where board_id = ${key.boardId} and period = ${key.period} and bucket = ${key.bucket} and region = ${key.region}
    group by bin`;
  const counts = new Array<number>(thresholds.length + 1).fill(0);
  for (const row of rows) counts[row.bin] = row.players;
  return counts;
}
