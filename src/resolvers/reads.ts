import type { GraphQLResolveInfo } from 'graphql';
import type { Period, RankStyle } from '../model/board.js';
import type { TopEvent } from '../pubsub/top-changed.js';
import type { Standing, StandingConnection, TopBoard } from '../reads/views.js';
import type { PageArgs } from '../reads/read-side.js';
import type { Context } from './context.js';
import { inChunks } from './list-chunks.js';
import { wantOf } from './want.js';

/**
 * What answers the read root fields: the arguments in, one call of the request's read side out
 * (src/reads/read-side.ts), with what the selection wants of the standings (want.ts). Long lists
 * go back in chunks (list-chunks.ts), so that completing a thousand rows does not hold the event
 * loop in one go. topChanged is the live top's (src/pubsub/).
 */

/** Where a read looks: a board's bucket, as the schema's bucket arguments give it. */
interface BucketArgs {
  board: string;
  period: Period;
  bucket?: string | null | undefined;
  region?: string | null | undefined;
  rankStyle?: RankStyle | null | undefined;
}

/** Query.top. A cached answer records what it was built from (the response cache, http/response-cache.ts). */
export async function top(args: BucketArgs & { limit: number }, ctx: Context, info: GraphQLResolveInfo): Promise<TopBoard> {
  const answer = await ctx.reads.top(args, wantOf(info, 'entries'));
  if (answer.cacheRead) ctx.topReads?.push(answer.cacheRead);
  return answer;
}

/** Query.standing. */
export const standing = (args: BucketArgs & { playerId: string }, ctx: Context, info: GraphQLResolveInfo): Promise<Standing | null> =>
  ctx.reads.standing(args, wantOf(info));

/** Query.around. */
export const around = (args: BucketArgs & { playerId: string; radius: number; fill: boolean }, ctx: Context, info: GraphQLResolveInfo): Promise<Standing[]> =>
  ctx.reads.around(args, wantOf(info));

/** Query.friends. */
export const friends = async (args: BucketArgs & { playerId: string }, ctx: Context, info: GraphQLResolveInfo) =>
  inChunks(await ctx.reads.friends(args, wantOf(info)));

/** Query.standings: a keyset page. */
export const standings = (args: BucketArgs & PageArgs, ctx: Context, info: GraphQLResolveInfo) => ctx.reads.standings(args, wantOf(info, 'edges', 'node'));

/** Query.seasonResults: a keyset page of a closed season's frozen standings. */
export const seasonResults = (
  args: PageArgs & { board: string; season: string; rankStyle?: RankStyle | null | undefined },
  ctx: Context,
  info: GraphQLResolveInfo,
): Promise<StandingConnection> => ctx.reads.seasonResults(args, wantOf(info, 'edges', 'node'));

/** Board.size. */
export const size = (args: Omit<BucketArgs, 'rankStyle'>, ctx: Context): Promise<number> => ctx.reads.size(args);

/** Standing.achievedAt. */
export const achievedAt = (standing: Standing, ctx: Context) => ctx.reads.achievedAt(standing);

/** Standing.metadata. */
export const metadata = (standing: Standing, ctx: Context) => ctx.reads.metadata(standing);

/** TopBoard.entries and StandingConnection.edges: long lists in chunks. */
export { inChunks as chunked } from './list-chunks.js';

/** Subscription.topChanged: the current view, then one each time it changes. */
export const watchTop = (args: BucketArgs & { limit: number }, ctx: Context) => ctx.live.watch(args, ctx.signal);

/** Subscription.cohortChanged: the player's placement, then one each time it changes (src/pubsub/cohort-changed.ts). */
export const watchCohort = (args: { board: string; playerId: string }, ctx: Context) => ctx.live.cohort(args, ctx.signal);

/** Subscription.topChanged's answer to one event. */
export const topChanged = (event: TopEvent, args: { rankStyle?: RankStyle | null | undefined }, ctx: Context) => ctx.live.view(event, args.rankStyle);
