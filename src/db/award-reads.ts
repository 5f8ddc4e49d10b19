import type { Sql } from 'postgres';

/**
 * Reads of a closed list's awards (issue 58, written at its close by db/awards.ts): a keyset range
 * of the awards' primary key (board, period, bucket, region, band_index, rank), each joined with
 * its frozen standing by that one's primary key (board, period, bucket, region, rank).
 */

/** One award as read: its band (name and place among the board's bands) and the frozen standing. */
export interface AwardRow {
  bandIndex: number;
  band: string;
  /** The frozen (ordinal) rank. */
  rank: number;
  playerId: string;
  score: number;
  reachedAt: Date;
  /** The frozen standing's entry metadata (JSON text, as sent); null when none, or not asked for. */
  metadata: string | null;
  /** The frozen result's tie-break values; empty on a board without columns. */
  tieBreakValues: number[];
}

/** Which list: its key as frozen_buckets keys it ('' for the global list). */
export interface AwardList {
  boardId: string;
  period: string;
  bucket: string;
  region: string;
}

/**
 * Up to `limit` awards of the list strictly after `after` (a band's place and a frozen rank), band
 * by band in rank order: a keyset, never an offset. O(log N + limit).
 */
export async function pageAwards(
  sql: Sql,
  args: AwardList & { after: { bandIndex: number; rank: number } | null; limit: number; metadata: boolean },
): Promise<AwardRow[]> {
  const rows = await sql<
    {
      band_index: number;
      band: string;
      rank: number;
      player_id: string;
      score: string | number;
      reached_ms: number;
      metadata: string | null;
      tie_break_values: number[] | null;
    }[]
  >`
    select a.band_index, a.band, a.rank, a.player_id, f.score, round(extract(epoch from f.reached_at) * 1000)::float8 as reached_ms,
           ${args.metadata ? sql`f.metadata::text` : sql`null::text`} as metadata, f.tie_break_values::float8[] as tie_break_values
    from awards a
    join frozen_standings f
      on f.board_id = a.board_id and f.period = a.period and f.bucket = a.bucket and f.region = a.region and f.rank = a.rank
    where a.board_id = ${args.boardId} and a.period = ${args.period} and a.bucket = ${args.bucket} and a.region = ${args.region}
      ${args.after ? sql`and (a.band_index, a.rank) > (${args.after.bandIndex}::int, ${args.after.rank}::int)` : sql``}
    order by a.band_index, a.rank
    limit ${args.limit}`;
  return rows.map((row) => ({
    bandIndex: row.band_index,
    band: row.band,
    rank: row.rank,
    playerId: row.player_id,
    score: Number(row.score),
    reachedAt: new Date(row.reached_ms),
    metadata: row.metadata,
    tieBreakValues: row.tie_break_values ?? [],
  }));
}
