import type { Board, EntryMetadata, Period, RecordedBoardScore } from '../model/board.js';
import type { LeagueRound, Placement } from './leagues.js';

/**
 * The write path's vocabulary in the database layer: a result as it is recorded, and what
 * recording it answers. recordGroup (results.ts) records a group of them.
 */

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
  /** The result's entry metadata (JSON text, checked by the caller); null when none was sent. */
  metadata: EntryMetadata | null;
  /** One value per tie-break column of the board, in order; left out on a board without columns. */
  tieBreakValues?: readonly number[] | undefined;
  /** Every bucket the result is written to; improvement is judged on (ALL_TIME, '') */
  rows: ScoreRowKey[];
  /**
   * The write path's clock when it chose `rows` (and so left out the buckets closed then): kept as
   * the result's recorded_at, so that a derived list cut at its close (DerivedSpan.closesAt) holds
   * exactly the results the write path gave it, whatever the database's clock says. Default: the
   * transaction's now().
   */
  recordedAt?: Date | undefined;
  /**
   * The league round the result falls in (issue 57): its board has a league and `rows` hold the
   * round's bucket on the global list (none when that round is closed). A new result of a player
   * not yet in a cohort of the round places them (db/leagues.ts). Left out: no placement.
   */
  round?: LeagueRound | undefined;
  /**
   * The span whose results count against the board's maxAttempts (the result's bucket of the
   * board's shortest period, global calendar; model/league.ts shortestPeriod). Left out: no limit.
   */
  attempts?: { startsAt: Date; endsAt: Date | null } | undefined;
}

export interface RecordOutcome {
  /** True when (board, matchId, playerId) had been recorded before: nothing changed. */
  duplicate: boolean;
  /** True when the player's ALL_TIME board score changed. */
  improved: boolean;
  /** What was recorded under this idempotency key: this entry, or for a duplicate the original. */
  recorded: { achievedAt: Date; region: string | null };
  /**
   * The player's board score in each of the entry's rows right after this result, in the order of
   * `rows`: what the result itself is answered with, however many results of the same player its
   * group holds after it. For a row derived from the log rather than kept (keepsBoardScores), the
   * result's own part: the index keeps the better of it and what it held. Empty for a duplicate.
   */
  after: StoredBoardScore[];
}

export interface StoredBoardScore extends ScoreRowKey, RecordedBoardScore {
  boardId: string;
}

/** A SUM total would pass the board's maxScore; nothing of the submission was recorded. */
export class TotalAboveMaxScoreError extends Error {
  constructor(
    readonly playerId: string,
    readonly total: number,
    readonly maxScore: number,
    /** Which submission of the group it belongs to. */
    readonly submission = 0,
  ) {
    super(`player ${playerId} would reach a total of ${total}, above the board's maxScore of ${maxScore}`);
    this.name = 'TotalAboveMaxScoreError';
  }
}

/**
 * Results past the board's maxAttempts; nothing of the submission was recorded. `inputs` names each
 * refused entry of the submission (its index in it) and how many results its player had used.
 */
export class NoAttemptsLeftError extends Error {
  constructor(
    readonly inputs: { index: number; playerId: string; boardId: string; maxAttempts: number }[],
    /** Which submission of the group it belongs to. */
    readonly submission = 0,
  ) {
    super(inputs.map(({ playerId, boardId, maxAttempts }) => `player ${playerId} has used all ${maxAttempts} attempts on board ${boardId}`).join('; '));
    this.name = 'NoAttemptsLeftError';
  }
}

/** What one transaction of a group recorded: an outcome per entry of each submission, and what the index needs. */
export interface GroupOnce {
  outcomes: RecordOutcome[][];
  boardScores: StoredBoardScore[];
  backlogIds: number[];
  flagged: Set<string>;
  /** The players of `flagged` this group flagged itself (a board's suspectAbove or suspectJump, see result-guards.ts). */
  suspected?: Set<string> | undefined;
  /** League placements the group made (or players it left waiting for their previous round's close). */
  placements: Placement[];
}

/** A (board, bucket, region, player) row's key, and a result's idempotency key, as map keys. */
export const rowId = (boardId: string, row: ScoreRowKey, playerId: string) =>
  `${boardId}\u0000${row.period}\u0000${row.bucket}\u0000${row.region}\u0000${playerId}`;
export const resultId = (boardId: string, matchId: string, playerId: string) => `${boardId}\u0000${matchId}\u0000${playerId}`;
export const entryId = (entry: ResultEntry) => resultId(entry.board.id, entry.matchId, entry.playerId);
