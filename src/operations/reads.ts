import { IndexRecoveringError } from '../ranking/generation.js';
import type { BoardBucket } from '../ranking/index.js';
import { bucketKey } from '../ranking/keys.js';
import { type BucketArgs, resolveBoardBucket } from './buckets.js';
import type { Services } from './services.js';
import { type Standing, type TopBoard, bucketOfAnswer, toStanding } from './standings.js';
import { styleOf, styledPlaces, styledRun, styledTop } from './rank-styles.js';
import type { RankStyle } from '../model/board.js';

/** A read that may ask for a rank style (null: its board's). */
export interface Styled {
  rankStyle?: RankStyle | null | undefined;
}

/** The most friends a list holds, and so the most a friends read ranks. */
export const MAX_FRIENDS = 1_000;

/**
 * The first `limit` standings of a bucket, through the shared top cache: O(limit) on a hit,
 * O(log N + limit) on a miss. While the bucket's index cannot be trusted (Redis came back, or is
 * being rebuilt after it lost the index) the last view this process read is served, with the asOf
 * of when it was read; UNAVAILABLE when it has none.
 */
export async function readTop(services: Services, args: BucketArgs & Styled & { limit: number }): Promise<TopBoard> {
  const at = await resolveBoardBucket(services, args);
  const view = await services.topCache.top(at, args.limit).catch((error: unknown) => {
    const last = error instanceof IndexRecoveringError ? services.topCache.peek(at, args.limit) : undefined;
    if (!last) throw error;
    return last;
  });
  return {
    cacheRead: {
      bucket: bucketKey(at),
      read: view.read,
      board: at.board,
      stillNamed: at.bucket.period === 'ALL_TIME' ? undefined : () => namesBucket(services, args, at),
    },
    boardId: at.board.id,
    ...bucketOfAnswer(at),
    entries: styledTop(view.places, styleOf(at.board, args.rankStyle)).map((place) => toStanding(at, place, view.size)),
    size: view.size,
    asOf: view.asOf,
  };
}

/** Whether `args` name the bucket `at` now, as a read resolves them; false for arguments a read would now refuse. */
async function namesBucket(services: Services, args: BucketArgs, at: BoardBucket): Promise<boolean> {
  try {
    const now = await resolveBoardBucket(services, args);
    return now.board === at.board && now.region === at.region && now.bucket.label === at.bucket.label;
  } catch {
    return false;
  }
}

/**
 * One player's standing, or null when they have no score there. O(log N). It shares an index call
 * with the other place reads of its turn, this request's and every other's (Services.placeReads).
 */
export async function readStanding(services: Services, args: BucketArgs & Styled & { playerId: string }): Promise<Standing | null> {
  const at = await resolveBoardBucket(services, args);
  const view = await services.placeReads.standing(at, args.playerId);
  const [place] = await styledPlaces(services, at, view.places, styleOf(at.board, args.rankStyle));
  return place ? toStanding(at, place, view.size) : null;
}

/** The player and up to `radius` players either side, cut at the edges. O(log N + radius). Shares an index call as readStanding does. */
export async function readAround(services: Services, args: BucketArgs & Styled & { playerId: string; radius: number }): Promise<Standing[]> {
  const at = await resolveBoardBucket(services, args);
  const view = await services.placeReads.around(at, args.playerId, args.radius);
  return (await styledRun(services, at, view.places, styleOf(at.board, args.rankStyle))).map((place) => toStanding(at, place, view.size));
}

/**
 * The player and their friends who have a score there, in rank order, each with their rank on the
 * whole board: one query for the friend list, one script call for every place. O(F log N).
 */
export async function readFriends(services: Services, args: BucketArgs & Styled & { playerId: string }): Promise<Standing[]> {
  const at = await resolveBoardBucket(services, args);
  const friends = await services.storage.players.friendIds(args.playerId);
  const ids = [args.playerId, ...friends.filter((id) => id !== args.playerId).slice(0, MAX_FRIENDS)];
  const view = await services.index.standings(at, ids);
  const ranked = view.places.filter((place) => place !== null).sort((a, b) => a.rank - b.rank);
  return (await styledPlaces(services, at, ranked, styleOf(at.board, args.rankStyle))).map((place) => toStanding(at, place, view.size));
}

/** How many players are ranked in a bucket. O(1). */
export async function readSize(services: Services, args: BucketArgs): Promise<number> {
  const at = await resolveBoardBucket(services, args);
  return services.index.size(at);
}
