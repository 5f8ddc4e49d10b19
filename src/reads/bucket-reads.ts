import type { Board, Period } from '../model/board.js';
import type { ScoreBin } from '../model/score-bins.js';
import { type AwardArgs, type AwardConnection, type AwardReadDeps, awardsOf } from './awards.js';
import { type BucketConnection, type BucketReadDeps, nextResetOf, periodBucketsOf } from './bucket-list.js';
import { scoreDistributionOf } from './distribution.js';
import { type BucketStandingConnection, type NameStandings, historyOf } from './history.js';
import type { Want } from './plain.js';

export type { BucketReadDeps } from './bucket-list.js';

/**
 * The reads of a board's buckets as a whole, as one request sees them: which buckets a period has
 * (bucket-list.ts), when the open one resets, a player's history over the closed ones
 * (history.ts), a bucket's score distribution (distribution.ts), and a closed bucket's awards (awards.ts).
 */
export interface BucketReads {
  periodBuckets(
    board: Board,
    args: { period: Period; region?: string | null | undefined; first: number; after?: string | null | undefined },
  ): Promise<BucketConnection>;
  nextReset(board: Board, args: { period: Period; region?: string | null | undefined }): Promise<Date | null>;
  history(
    args: { board: string; playerId: string; period: Period; region?: string | null | undefined; first: number; after?: string | null | undefined },
    want: Want,
  ): Promise<BucketStandingConnection>;
  scoreDistribution(args: {
    board: string;
    period: Period;
    bucket?: string | null | undefined;
    region?: string | null | undefined;
    bins: number;
  }): Promise<ScoreBin[]>;
  awards(args: AwardArgs, want: Want): Promise<AwardConnection>;
}

/** The process's bucket reads: one per process; each request takes its own, naming its history's player with the request's other names. */
export interface BucketReadSides {
  /** The bucket reads of one request, whose names go through `names` (its read side's ReadSide.name). O(1). */
  forRequest(names: NameStandings): BucketReads;
}

export function createBucketReads(deps: BucketReadDeps & AwardReadDeps): BucketReadSides {
  return {
    forRequest: (names) => ({
      periodBuckets: (board, args) => periodBucketsOf(deps, board, args),
      nextReset: (board, args) => nextResetOf(deps, board, args),
      history: (args, want) => historyOf(deps, names, args, want),
      scoreDistribution: (args) => scoreDistributionOf(deps, args),
      awards: (args, want) => awardsOf(deps, names, args, want),
    }),
  };
}
