import type { Season } from '../db/seasons.js';
import type { Storage } from '../db/storage.js';
import type { Board, Period } from '../model/board.js';
import { type Bucket, bucketAt, keptBuckets } from '../model/buckets.js';
import type { RankingIndex } from '../ranking/index.js';
import { type ReadBucketDeps, regionProblem, takesResults } from '../services/buckets.js';
import { type CursorCodec, forwardPageInfo } from '../services/cursor.js';
import { currentOf, seasonBucket } from '../services/season-directory.js';
import { badInput } from '../errors.js';
import type { PageInfo } from './views.js';

/**
 * Which buckets of a period a board can still read, and when its open one resets
 * (Board.periodBuckets, Board.nextReset). A calendar period's buckets are worked out from the
 * clock and the board's retention (model/buckets.ts keptBuckets), on the calendar of the region's
 * zone; a board's seasons are its rows in PostgreSQL. Whether a bucket closed and how many it ranks
 * come from its frozen marker (db/frozen.ts) once frozen, from the index while not.
 */

/** One bucket of a board, as Board.periodBuckets and Query.history serve it (the contract's Bucket). */
export interface ListedBucket {
  period: Period;
  /** The label reads take as `bucket`. */
  bucket: string;
  region: string | null;
  /** Null for ALL_TIME, as the reads' answers have it. */
  startsAt: Date | null;
  endsAt: Date | null;
  closed: boolean;
  size: number;
}

export interface BucketEdge {
  cursor: string;
  node: ListedBucket;
}

export interface BucketConnection {
  edges: BucketEdge[];
  pageInfo: PageInfo;
}

/** What listing a board's buckets takes (and the history and distributions beside it: see bucket-reads.ts). */
export interface BucketReadDeps {
  buckets: ReadBucketDeps;
  index: Pick<RankingIndex, 'size' | 'scoreBins'>;
  storage: Pick<Storage, 'seasons' | 'frozen' | 'history'>;
  cursors: CursorCodec;
}

/**
 * The region a listing names on `board`, checked with its period: a period the board does not
 * keep, or a region it does not have, is BAD_USER_INPUT (these fields name a board's own lists, so
 * the caller asked for something the board says it has not). O(regions).
 */
export function checkedList(board: Board, period: Period, region: string | null | undefined): string | null {
  if (!board.periods.includes(period)) throw badInput(`Board "${board.id}" keeps no ${period} buckets; it keeps ${board.periods.join(', ')}.`);
  const problem = regionProblem(board, region);
  if (problem) throw badInput(problem);
  return region ?? null;
}

/** Whether bucket `a` comes before `b` in a listing: the later start first, then the label in byte order, descending. */
const listedBefore = (a: { start: number; label: string }, b: { start: number; label: string }) =>
  a.start !== b.start ? a.start > b.start : Buffer.compare(Buffer.from(a.label), Buffer.from(b.label)) > 0;

/** A period's buckets that can still be read at `now`, newest first, each with its season when it is one. */
async function readableBuckets(
  deps: BucketReadDeps,
  board: Board,
  period: Period,
  region: string | null,
  now: Date,
): Promise<{ bucket: Bucket; season?: Season }[]> {
  if (period === 'ALL_TIME') return [{ bucket: bucketAt(board, 'ALL_TIME', now) }];
  if (period !== 'SEASON') return keptBuckets(board, period, now, region).map((bucket) => ({ bucket }));
  const seasons = await deps.storage.seasons.list(board.id);
  return seasons
    .map((season) => ({ bucket: seasonBucket(season), season }))
    .sort((a, b) =>
      listedBefore({ start: a.bucket.start.getTime(), label: a.bucket.label }, { start: b.bucket.start.getTime(), label: b.bucket.label }) ? -1 : 1,
    );
}

/**
 * One keyset page of the buckets of a period that can still be read, newest first: for a calendar
 * period the open one and each before it within the board's retention, on the region's calendar;
 * for SEASON every season of the board (one scheduled ahead comes first); for ALL_TIME its one
 * bucket. Each says whether it closed (a frozen marker, its end plus the board's grace passed, a
 * season's closedAt) and its size (frozen, or the index's: one ZCARD per shard). Cursors name a
 * bucket by its start and label, bound to the board, period and region, and signed.
 * O(buckets of the period) to list them, one query for the period's frozen markers, and O(S) per
 * bucket of the page not frozen.
 */
export async function periodBucketsOf(
  deps: BucketReadDeps,
  board: Board,
  args: { period: Period; region?: string | null | undefined; first: number; after?: string | null | undefined },
): Promise<BucketConnection> {
  const region = checkedList(board, args.period, args.region);
  const scope = `buckets:${board.id}:${args.period}:${region ?? ''}`;
  const after = args.after === null || args.after === undefined ? null : deps.cursors.decode(scope, args.after);
  const now = deps.buckets.now();
  const listed = await readableBuckets(deps, board, args.period, region, now);
  const rest = after
    ? listed.filter(({ bucket }) => listedBefore({ start: after.packed, label: after.playerId }, { start: bucket.start.getTime(), label: bucket.label }))
    : listed;
  const page = rest.slice(0, args.first);
  const frozen =
    args.period === 'ALL_TIME' || page.length === 0
      ? new Map<string, number>()
      : new Map(
          (await deps.storage.frozen.list({ boardId: board.id, period: args.period, region: region ?? '' })).map((marker) => [marker.bucket, marker.size]),
        );
  const nodes = await Promise.all(
    page.map(async ({ bucket, season }): Promise<ListedBucket> => {
      const frozenSize = frozen.get(bucket.label);
      const closed = season ? season.closedAt !== null : frozenSize !== undefined || !takesResults(board, bucket, now);
      // A closed season's index is dropped: one frozen before its regions were (a season closed before issue 21) ranks nobody there.
      const size = frozenSize ?? (season?.closedAt ? 0 : await deps.index.size({ board, bucket, region }));
      return {
        period: bucket.period,
        bucket: bucket.label,
        region,
        startsAt: bucket.period === 'ALL_TIME' ? null : bucket.start,
        endsAt: bucket.end,
        closed,
        size,
      };
    }),
  );
  const edges = page.map(({ bucket }, i) => ({
    cursor: deps.cursors.encode(scope, { packed: bucket.start.getTime(), playerId: bucket.label }),
    node: nodes[i]!,
  }));
  return {
    edges,
    pageInfo: forwardPageInfo(edges, rest.length > args.first, args.after),
  };
}

/**
 * When the period's open bucket ends, i.e. its next reset: the end of the bucket holding now on the
 * region's calendar (a local midnight, so a day of a daylight-saving change resets 23 or 25 hours
 * after it began); null for ALL_TIME; for SEASON the open season's endsAt, null when none is open
 * (or it has no end). O(1), or the board's live seasons (cached: season-directory.ts).
 */
export async function nextResetOf(
  deps: Pick<BucketReadDeps, 'buckets'>,
  board: Board,
  args: { period: Period; region?: string | null | undefined },
): Promise<Date | null> {
  const region = checkedList(board, args.period, args.region);
  const now = deps.buckets.now();
  if (args.period === 'ALL_TIME') return null;
  if (args.period !== 'SEASON') return bucketAt(board, args.period, now, region).end;
  const open = currentOf(await deps.buckets.seasons.live(board.id), now);
  // One past its end that the closer has not closed yet is no longer open.
  return open?.endsAt && open.endsAt.getTime() > now.getTime() ? open.endsAt : null;
}
