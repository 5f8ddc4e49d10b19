/** The leaderboard's own vocabulary, shared by the index, the database layer and the operations. */

export const PERIODS = ['ALL_TIME', 'SEASON', 'MONTHLY', 'WEEKLY', 'DAILY'] as const;
export type Period = (typeof PERIODS)[number];

export type ScoreOrder = 'HIGH_FIRST' | 'LOW_FIRST';
export type Aggregate = 'BEST' | 'SUM';

/**
 * How equal scores share ranks. ORDINAL: a rank each (equal scores ordered by who reached the score
 * first, then by player id). COMPETITION: equal scores share the best of their ranks, and the next
 * rank skips (1, 2, 2, 4). DENSE: equal scores share a rank, and the next rank follows (1, 2, 2, 3);
 * only on boards created DENSE, whose index counts their distinct scores (see ranking/dense.ts).
 */
export type RankStyle = 'ORDINAL' | 'COMPETITION' | 'DENSE';

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
  /**
   * How many sorted sets each bucket is split into, by a stable hash of the player id (see
   * shardOf in src/ranking/keys.ts); 1 to 64, fixed when the board is created.
   */
  shards: number;
  /** The origin of ALL_TIME tie-break time: results before it tie on time. */
  epoch: Date;
  /** How ranks are served when a read does not say. */
  rankStyle: RankStyle;
  /** The IANA time zone whose calendar cuts its DAILY, WEEKLY and MONTHLY buckets ('UTC' by default). */
  timeZone: string;
  /** Regions whose buckets follow a zone of their own; the others (and the global list) follow `timeZone`. */
  regionTimeZones: RegionTimeZone[];
  /**
   * Days without a result on the board after which a player leaves its ALL_TIME and SEASON sorted
   * sets (see jobs/inactive-players.ts), 1 to {@link MAX_INACTIVE_AFTER_DAYS}; null (or left out,
   * as a board made in code may): never.
   */
  inactiveAfterDays?: number | null | undefined;
  /**
   * Seconds after a calendar bucket (or a season) ends during which results achieved in it still
   * count; then it closes and its standings are frozen (see closesAt). 0 to
   * {@link MAX_CLOSE_GRACE_SECONDS}; left out (as a board made in code may): {@link DEFAULT_CLOSE_GRACE_SECONDS}.
   */
  closeGraceSeconds?: number | undefined;
  /** The board's league (see model/league.ts); null or left out: none. Fixed at creation. */
  league?: League | null | undefined;
  /** Tournaments: only players who joined (joinBoard) may have results. Left out: false. Fixed at creation. */
  joinRequired?: boolean | undefined;
  /** At most this many players may join, first come first served; null or left out: no limit. */
  maxPlayers?: number | null | undefined;
  /** At most this many results per player per bucket of the board's shortest period; null or left out: no limit. */
  maxAttempts?: number | null | undefined;
  /** Prize bands, computed at every close of one of its buckets (see model/rewards.ts); left out: none. */
  rewards?: RewardBand[] | undefined;
  /**
   * Columns that decide between equal scores, in order, before the time a score was reached (BEST
   * boards only, 0 to {@link MAX_TIE_BREAKS}, fixed at creation; see ranking/packing.ts for how the
   * index keeps the order exact). Left out: none.
   */
  tieBreaks?: TieBreak[] | undefined;
  /** The smallest score accepted. Left out: 0. */
  minScore?: number | undefined;
  /** A result above this is recorded and flags its player ('suspect: …'); null or left out: never. */
  suspectAbove?: number | null | undefined;
  /**
   * A result more than this many times the player's previous best on the board (fewer times on
   * LOW_FIRST) is recorded and flags its player; null or left out: never.
   */
  suspectJump?: number | null | undefined;
  /** How many results one player may have recorded on the board in a sliding window; null or left out: no limit. */
  resultRate?: ResultRate | null | undefined;
  createdAt: Date;
}

/** A tie-break column: whole numbers from 0 to `max`, a larger one first on HIGH_FIRST, a smaller one on LOW_FIRST. */
export interface TieBreak {
  name: string;
  order: ScoreOrder;
  max: number;
}

/** The most tie-break columns a board may have. */
export const MAX_TIE_BREAKS = 4;

/** At most `results` results of one player on one board in any `perSeconds` seconds. */
export interface ResultRate {
  results: number;
  perSeconds: number;
}

/**
 * A prize band: the players ranked fromRank to toRank (by the board's rank style, so ties share a
 * band), or the first ⌈size × topPercent / 100⌉ ranks; exactly one of the two. See model/rewards.ts.
 */
export interface RewardBand {
  name: string;
  fromRank: number | null;
  toRank: number | null;
  topPercent: number | null;
}

/** The periods whose buckets may be a league's rounds. */
export type LeaguePeriod = Exclude<Period, 'ALL_TIME'>;

/** A board's league: tiers of small cohorts, re-formed every round (a bucket of `period`); the rules are in model/league.ts. */
export interface League {
  /** Tier names, best first. A player's first round is in the last tier. */
  tiers: string[];
  /** Players per cohort. */
  cohortSize: number;
  /** How many of each cohort's top move up a tier at the round's close (none from the first tier). */
  promote: number;
  /** How many of each cohort's bottom move down a tier (none from the last tier). */
  demote: number;
  period: LeaguePeriod;
}

/** @default 300: five minutes, for a result that reaches the server late over a slow network. */
export const DEFAULT_CLOSE_GRACE_SECONDS = 300;
/** 366 days. */
export const MAX_CLOSE_GRACE_SECONDS = 31_622_400;

/**
 * When a bucket ending at `end` closes on `board`: its end plus the board's grace for late
 * results. Null for one that never ends (ALL_TIME, a season with no end set). O(1).
 */
export function closesAt(board: Pick<Board, 'closeGraceSeconds'>, end: Date | null): Date | null {
  return end === null ? null : new Date(end.getTime() + (board.closeGraceSeconds ?? DEFAULT_CLOSE_GRACE_SECONDS) * 1000);
}

/** The most days inactiveAfterDays takes: a hundred years. */
export const MAX_INACTIVE_AFTER_DAYS = 36_500;

/** A region of a board whose calendar buckets follow a time zone of their own. */
export interface RegionTimeZone {
  region: string;
  timeZone: string;
}

/** The time zone whose calendar cuts a board's buckets for `region` (null: the global list). O(regions). */
export function timeZoneOf(board: Partial<Pick<Board, 'timeZone' | 'regionTimeZones'>>, region: string | null): string {
  return (region !== null ? board.regionTimeZones?.find((zone) => zone.region === region)?.timeZone : undefined) ?? board.timeZone ?? 'UTC';
}

/**
 * Whether a board keeps its board scores of `period` as rows (board_scores) rather than deriving
 * them from the score log when a bucket is read or rebuilt. A BEST board keeps its ALL_TIME ones
 * only: the best of a day, a week, a month or a season is the best result logged in that span,
 * found by the log's own keys, so a result costs one log row and at most one board-score row
 * rather than one per bucket. A SUM board keeps them all: its totals are checked against maxScore
 * on every result. O(1).
 */
export function keepsBoardScores(board: Pick<Board, 'aggregate'>, period: Period): boolean {
  return board.aggregate === 'SUM' || period === 'ALL_TIME';
}

/** A player's score in one bucket and when they reached it: what the index ranks. */
export interface BoardScore {
  playerId: string;
  score: number;
  reachedAt: Date;
  /** One value per tie-break column of the board, in order (left out or empty on a board without them). */
  tieBreakValues?: readonly number[] | undefined;
}

/**
 * A board score as a rebuild streams it: the player id, the score, when it was reached in epoch
 * milliseconds, and on a board with tie-break columns their values. A tuple rather than a
 * {@link BoardScore} because a bucket is a million of them: each is the database driver's own row
 * passed on, with no object or Date made per member.
 */
export type BoardScoreRow = readonly [playerId: string, score: number, reachedMs: number, tieBreakValues?: readonly number[] | null];

/** The {@link BoardScoreRow} of a board score. O(1). */
export function boardScoreRow({ playerId, score, reachedAt, tieBreakValues }: BoardScore): BoardScoreRow {
  return tieBreakValues && tieBreakValues.length > 0 ? [playerId, score, reachedAt.getTime(), tieBreakValues] : [playerId, score, reachedAt.getTime()];
}

/**
 * Negative when the result (score, tie-break values) `a` is better than `b` on this board, positive
 * when worse, 0 when equal on all of them: the score in the board's order, then each column in its
 * own. The time a score was reached is not compared here. O(columns).
 */
export function compareResults(
  board: Pick<Board, 'order' | 'tieBreaks'>,
  a: Pick<BoardScore, 'score' | 'tieBreakValues'>,
  b: Pick<BoardScore, 'score' | 'tieBreakValues'>,
): number {
  if (a.score !== b.score) return (board.order === 'HIGH_FIRST') === a.score > b.score ? -1 : 1;
  const columns = board.tieBreaks ?? [];
  for (let i = 0; i < columns.length; i++) {
    const x = a.tieBreakValues?.[i] ?? 0;
    const y = b.tieBreakValues?.[i] ?? 0;
    if (x !== y) return (columns[i]!.order === 'HIGH_FIRST') === x > y ? -1 : 1;
  }
  return 0;
}

/** True when `a` ranks ahead of `b` on this board: a better result (score, then each tie-break column), or an equal one reached earlier. */
export function ranksAhead(board: Pick<Board, 'order' | 'tieBreaks'>, a: BoardScore, b: BoardScore): boolean {
  const byResult = compareResults(board, a, b);
  if (byResult !== 0) return byResult < 0;
  return a.reachedAt.getTime() < b.reachedAt.getTime();
}

/**
 * Entry metadata: what a game attaches to a result (the car, the deck, the replay id), as the JSON
 * text of an object of at most {@link MAX_METADATA_BYTES} bytes. It is kept as the text it was sent
 * in, never parsed on the write path; only a read that selects it parses it.
 */
export type EntryMetadata = string;

/** The most bytes (as UTF-8) an entry's metadata may take as JSON. */
export const MAX_METADATA_BYTES = 1_024;

/** A board score as PostgreSQL records it: with the metadata of the result that set it (null when that one had none). */
export interface RecordedBoardScore extends BoardScore {
  metadata: EntryMetadata | null;
}

/**
 * Folds one accepted result (or another partial board score) into a player's board score for one
 * bucket. BEST keeps the one that ranks ahead. SUM adds, and a total was reached when its latest
 * non-zero part was. A total of zero was reached at its first zero on a HIGH_FIRST board and at its
 * last on a LOW_FIRST one: the index only ever moves a SUM member one way (see packedDirection), and
 * this is the way. Both rules are associative and commutative, so the board score does not depend
 * on the order results arrive in.
 *
 * Whatever else a part carries (its metadata) comes from the part that set the board score: BEST,
 * the one kept; SUM, the latest non-zero part (the one held when a new part is zero, or reached at
 * the same millisecond, so between parts of one millisecond the first to arrive wins).
 */
export function combine<S extends BoardScore>(board: Pick<Board, 'aggregate' | 'order' | 'tieBreaks'>, current: S | undefined, result: S): S {
  if (!current) return result;
  if (board.aggregate === 'BEST') return ranksAhead(board, result, current) ? result : current;
  const reachedAt =
    current.score > 0 && result.score > 0
      ? max(current.reachedAt, result.reachedAt)
      : result.score > 0
        ? result.reachedAt
        : current.score > 0
          ? current.reachedAt
          : board.order === 'HIGH_FIRST'
            ? min(current.reachedAt, result.reachedAt)
            : max(current.reachedAt, result.reachedAt);
  const setter = result.score > 0 && (current.score === 0 || result.reachedAt.getTime() > current.reachedAt.getTime()) ? result : current;
  return { ...setter, playerId: current.playerId, score: current.score + result.score, reachedAt };
}

const max = (a: Date, b: Date) => (a.getTime() >= b.getTime() ? a : b);
const min = (a: Date, b: Date) => (a.getTime() <= b.getTime() ? a : b);
