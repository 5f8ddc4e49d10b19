import type { GraphQLResolveInfo } from 'graphql';
import type { Board, Period } from '../model/board.js';
import type { Award, AwardArgs, AwardConnection } from '../reads/awards.js';
import type { BucketConnection, ListedBucket } from '../reads/bucket-list.js';
import type { BucketStanding, BucketStandingConnection } from '../reads/history.js';
import type { ScoreBin } from '../model/score-bins.js';
import type { PageInfo } from '../reads/views.js';
import type { Context } from './context.js';
import { wantOf } from './want.js';

export type { Award, AwardConnection, BucketConnection, BucketStanding, BucketStandingConnection, ListedBucket, PageInfo, ScoreBin };

/** What answers the fields of a board's buckets as a whole: the arguments in, one call of the request's bucket reads out (src/reads/bucket-reads.ts). */

/** Board.periodBuckets. */
export const periodBuckets = (
  board: Board,
  args: { period: Period; region?: string | null | undefined; first: number; after?: string | null | undefined },
  ctx: Context,
): Promise<BucketConnection> => ctx.buckets.periodBuckets(board, args);

/** Board.nextReset. */
export const nextReset = (board: Board, args: { period: Period; region?: string | null | undefined }, ctx: Context): Promise<Date | null> =>
  ctx.buckets.nextReset(board, args);

/** Query.history: the standings' player, achievedAt and metadata as the selection asks for them. */
export const history = (
  args: { board: string; playerId: string; period: Period; region?: string | null | undefined; first: number; after?: string | null | undefined },
  ctx: Context,
  info: GraphQLResolveInfo,
): Promise<BucketStandingConnection> => ctx.buckets.history(args, wantOf(info, 'edges', 'node', 'standing'));

/** Query.scoreDistribution. */
export const scoreDistribution = (
  args: { board: string; period: Period; bucket?: string | null | undefined; region?: string | null | undefined; bins: number },
  ctx: Context,
): Promise<ScoreBin[]> => ctx.buckets.scoreDistribution(args);

/** Query.awards: the standings' player, achievedAt and metadata as the selection asks for them. */
export const awards = (args: AwardArgs, ctx: Context, info: GraphQLResolveInfo): Promise<AwardConnection> =>
  ctx.buckets.awards(args, wantOf(info, 'edges', 'node', 'standing'));
