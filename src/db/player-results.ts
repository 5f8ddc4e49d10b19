import type { Sql } from 'postgres';

/** One accepted result of the score log, as the console lists a player's recent ones. */
export interface LoggedResult {
  boardId: string;
  matchId: string;
  playerId: string;
  score: number;
  region: string | null;
  achievedAt: Date;
  recordedAt: Date;
}

type Row = { board_id: string; match_id: string; player_id: string; score: number; region: string | null; achieved_ms: number; recorded_ms: number };

/**
 * A player's latest results on every board, by achievedAt, newest first, at most `limit`. The log
 * is keyed by (board, player) and partitioned by month, so naming every board makes this one
 * index probe per board and partition (as erasure does) rather than a scan of the log. Times are
 * read as epoch milliseconds (drizzle takes over timestamp parsing, see results.ts).
 * O(boards · partitions · log N + limit).
 */
export async function recentResults(sql: Sql, playerId: string, limit: number): Promise<LoggedResult[]> {
  const rows = await sql<Row[]>`
    select board_id, match_id, player_id, score, region,
      round(extract(epoch from achieved_at) * 1000)::float8 as achieved_ms,
      round(extract(epoch from recorded_at) * 1000)::float8 as recorded_ms
    from results
    where board_id = any(array(select id from boards)) and player_id = ${playerId}
    order by achieved_at desc, recorded_at desc, board_id, match_id
    limit ${limit}`;
  return rows.map((row) => ({
    boardId: row.board_id,
    matchId: row.match_id,
    playerId: row.player_id,
    score: row.score,
    region: row.region,
    achievedAt: new Date(row.achieved_ms),
    recordedAt: new Date(row.recorded_ms),
  }));
}
