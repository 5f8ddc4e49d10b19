import type { Sql, TransactionSql } from 'postgres';
import type { EntryMetadata, Period } from '../model/board.js';

/**
 * A player's board scores as the record reads them: the kept rows of board_scores, and the shape
 * derived-scores.ts answers for the scores derived from results. Below both flags.ts and
 * derived-scores.ts, which each read board scores, so that neither imports the other.
 */

/** One of a player's board scores, with what a SEASON row needs to name its bucket. */
export interface PlayerBoardScore {
  boardId: string;
  period: Period;
  bucket: string;
  /** '' for the global list. */
  region: string;
  score: number;
  reachedAt: Date;
  /** The entry metadata of the result that set the score (JSON text); null when it had none. */
  metadata: EntryMetadata | null;
  /** The tie-break values of the result that set the score; left out on a board without columns. */
  tieBreakValues?: readonly number[] | undefined;
  /** For a SEASON row whose season exists: its dates. Null otherwise. */
  season: { startsAt: Date; endsAt: Date | null; closedAt: Date | null } | null;
}

/** A board-score row as playerBoardScores (flags.ts), erasePlayer and the index backlog read it (times as epoch milliseconds). */
export type BoardScoreRow = {
  board_id: string;
  period: Period;
  bucket: string;
  region: string;
  score: number;
  reached_ms: number;
  metadata: EntryMetadata | null;
  tie_break_values: number[] | null;
  starts_ms: number | null;
  ends_ms: number | null;
  closed_ms: number | null;
};

const date = (value: number | null) => (value === null ? null : new Date(value));

export function toPlayerBoardScore(row: BoardScoreRow): PlayerBoardScore {
  return {
    boardId: row.board_id,
    period: row.period,
    bucket: row.bucket,
    region: row.region,
    score: row.score,
    reachedAt: new Date(row.reached_ms),
    metadata: row.metadata,
    ...(row.tie_break_values && { tieBreakValues: row.tie_break_values }),
    season: row.starts_ms === null ? null : { startsAt: new Date(row.starts_ms), endsAt: date(row.ends_ms), closedAt: date(row.closed_ms) },
  };
}

/** The columns of a BoardScoreRow, over board scores `s` left-joined to their season `z`. */
export const boardScoreColumns = (sql: Sql | TransactionSql) => sql`
  s.board_id, s.period, s.bucket, s.region, s.score,
  round(extract(epoch from s.reached_at) * 1000)::float8 as reached_ms,
  s.metadata::text as metadata,
  s.tie_break_values::float8[] as tie_break_values,
  round(extract(epoch from z.starts_at) * 1000)::float8 as starts_ms,
  round(extract(epoch from z.ends_at) * 1000)::float8 as ends_ms,
  round(extract(epoch from z.closed_at) * 1000)::float8 as closed_ms`;
