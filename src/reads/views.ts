import type { Player } from '../db/players.js';
import type { Board, Period } from '../model/board.js';
import type { BoardBucket, Place } from '../ranking/index.js';
import type { RecordedScore, StandingSource } from './recorded-scores.js';
import type { NamedPlace } from './place-loader.js';

/** A Standing as the schema serves it: a place and the size it is a place in. */
export interface Standing {
  playerId: string;
  rank: number;
  score: number;
  percentile: number;
  /** The values of the result that set the score, one per tie-break column; left out on a board without them. */
  tieBreakValues?: readonly number[] | undefined;
  /** Where its achievedAt and metadata come from (see recorded-scores.ts). */
  source: StandingSource;
  /**
   * The player's profile, served as held: filled by the read that serves the standing whenever
   * its selection asks for it (the read side's `want`; topChanged loads each view's profiles once
   * for all its viewers).
   */
  player?: Player | undefined;
}

/**
 * A place of a closed bucket, read from its frozen standings: it holds its recorded board score
 * (the frozen row's time and metadata), so its standing needs no look-up.
 */
export interface FrozenPlace extends Place {
  recorded: RecordedScore;
}

/**
 * A place read from the index in bucket `at` (or from its frozen standings: FrozenPlace), as a
 * Standing; `recorded` when the read holds the recorded board score already. The place's
 * `profile`, when its read brought one (place-loader.ts, NamedPlace), is the standing's player.
 */
export function toStanding(at: BoardBucket, place: NamedPlace | FrozenPlace, size: number, recorded?: RecordedScore): Standing {
  const held = recorded ?? ('recorded' in place ? place.recorded : undefined);
  return {
    playerId: place.playerId,
    rank: place.rank,
    score: place.score,
    percentile: size === 0 ? 0 : (100 * (size - place.rank)) / size,
    tieBreakValues: place.tieBreakValues,
    source: held ? { recorded: held } : { at, place },
    player: 'profile' in place ? place.profile : undefined,
  };
}

/** Which bucket of a board an answer is of, and when that bucket starts and ends. */
export interface BucketOfAnswer {
  period: Period;
  bucket: string;
  region: string | null;
  /** The bucket's first instant; null for ALL_TIME. */
  startsAt: Date | null;
  /** When the next bucket begins; null for ALL_TIME and an open-ended season. */
  endsAt: Date | null;
}

/** The bucket an answer read from `at` is of. */
export function bucketOfAnswer(at: BoardBucket): BucketOfAnswer {
  const { period, label, start, end } = at.bucket;
  return { period, bucket: label, region: at.region, startsAt: period === 'ALL_TIME' ? null : start, endsAt: end };
}

export interface PeriodStanding extends BucketOfAnswer {
  standing: Standing;
  /** The player's rank in this bucket just before this result, in the board's rank style; null when they had none there (or the result was a duplicate). */
  previousRank?: number | null;
}

/**
 * What a top answer was built from besides its arguments (the response cache tracks it:
 * http/response-cache.ts): the top cache's read of the bucket, by bucket key, and the board's
 * definition as this process held it (the board directory's object), whose settings (its rank
 * style) shape the answer as much as the read does.
 */
export interface TopRead {
  bucket: string;
  read: number;
  board: Board;
  /**
   * Whether the read's arguments still name this bucket, as a read resolves them now: a period
   * other than ALL_TIME moves with the clock (a DAILY top past midnight) and a board's seasons
   * (SEASON once another season is current). None for ALL_TIME, whose bucket only the board names.
   */
  stillNamed?: (() => Promise<boolean>) | undefined;
}

export interface TopBoard extends BucketOfAnswer {
  /** What the answer was built from; none for topChanged's views. */
  cacheRead?: TopRead;
  boardId: string;
  entries: Standing[];
  size: number;
  asOf: Date;
}

export interface StandingEdge {
  cursor: string;
  node: Standing;
}

export interface PageInfo {
  hasNextPage: boolean;
  endCursor: string | null;
  /** Whether rows come before the page's first (Relay's PageInfo). */
  hasPreviousPage: boolean;
  /** The first edge's cursor; null for an empty page. */
  startCursor: string | null;
}

/** A keyset page of standings. */
export interface StandingConnection {
  edges: StandingEdge[];
  pageInfo: PageInfo;
}
