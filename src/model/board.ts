/** The leaderboard's own vocabulary, shared by the index, the database layer and the operations. */

export const PERIODS = ['ALL_TIME', 'SEASON', 'MONTHLY', 'WEEKLY', 'DAILY'] as const;
export type Period = (typeof PERIODS)[number];

export type ScoreOrder = 'HIGH_FIRST' | 'LOW_FIRST';
export type Aggregate = 'BEST' | 'SUM';

/** Periods whose buckets follow the calendar and expire after the board's retention. */
export type CalendarPeriod = 'DAILY' | 'WEEKLY' | 'MONTHLY';

/** How long each calendar period's buckets stay readable after they end, in days. */
export type Retention = Record<CalendarPeriod, number>;

export const DEFAULT_RETENTION: Retention = { DAILY: 7, WEEKLY: 35, MONTHLY: 396 };

export interface Board {
  id: string;
  title: string;
  order: ScoreOrder;
  aggregate: Aggregate;
  maxScore: number;
  periods: Period[];
  regions: string[];
  topSize: number;
  retention: Retention;
  /** The origin of ALL_TIME tie-break time: results before it tie on time. */
  epoch: Date;
  createdAt: Date;
}

/** A player's score in one bucket and when they reached it: what the index ranks. */
export interface BoardScore {
  playerId: string;
  score: number;
  reachedAt: Date;
}

/** True when `a` ranks ahead of `b` on a board of this order: a better score, or the same score reached earlier. */
export function ranksAhead(order: ScoreOrder, a: BoardScore, b: BoardScore): boolean {
  if (a.score !== b.score) return order === 'HIGH_FIRST' ? a.score > b.score : a.score < b.score;
  return a.reachedAt.getTime() < b.reachedAt.getTime();
}

/**
 * Folds one accepted result into a player's board score for one bucket.
 * BEST keeps the better of the two; SUM adds, and the total was reached when its latest part was.
 * A zero added to a SUM changes nothing, not even the time.
 */
export function combine(board: Pick<Board, 'aggregate' | 'order'>, current: BoardScore | undefined, result: BoardScore): BoardScore {
  if (!current) return result;
  if (board.aggregate === 'BEST') return ranksAhead(board.order, result, current) ? result : current;
  if (result.score === 0) return current;
  return {
    playerId: current.playerId,
    score: current.score + result.score,
    reachedAt: result.reachedAt > current.reachedAt ? result.reachedAt : current.reachedAt,
  };
}
