import { GraphQLError } from 'graphql';
import { type Board, PERIODS, type Period, keepsBoardScores } from '../model/board.js';
import { bucketAt, keptBuckets } from '../model/buckets.js';
import type { BoardBucket } from '../ranking/index.js';
import { CLOCK_SKEW_MS, boardScoreList, resolveBoardBucket } from '../services/buckets.js';
import type { Storage } from '../db/storage.js';
import type { RankingIndex } from '../ranking/index.js';
import type { BoardDirectory } from '../services/board-directory.js';
import type { SeasonDirectory } from '../services/season-directory.js';
import { seasonBucket } from '../services/season-directory.js';
import { activeSince } from '../db/activity.js';

/** The buckets being written now: each kept period's current bucket (and the open season), globally and per region. */
/** What listing and measuring a board's buckets take. */
export interface BoardBucketDeps {
  storage: Pick<Storage, 'boardScores'>;
  index: Pick<RankingIndex, 'size'>;
  boards: BoardDirectory;
  seasons: SeasonDirectory;
  now(): Date;
}

export async function liveBuckets(deps: Pick<BoardBucketDeps, 'seasons' | 'now'>, board: Board): Promise<BoardBucket[]> {
  const now = deps.now();
  const out: BoardBucket[] = [];
  for (const period of board.periods) {
    const season = period === 'SEASON' ? await deps.seasons.open(board.id, now) : null;
    for (const region of [null, ...board.regions]) {
      // Each region's current bucket is on its own calendar.
      const bucket = period === 'SEASON' ? (season ? seasonBucket(season) : null) : bucketAt(board, period, now, region);
      if (bucket) out.push({ board, bucket, region });
    }
  }
  return out;
}

/**
 * Every bucket of the board's derived periods (see keepsBoardScores) that is kept now, globally
 * and per region, newest first: the calendar's buckets within their retention and the live
 * seasons. Where board scores derived from the log may be; nothing is asked of PostgreSQL. O(buckets kept).
 */
export async function keptDerivedBuckets(deps: Pick<BoardBucketDeps, 'seasons' | 'now'>, board: Board): Promise<BoardBucket[]> {
  const now = deps.now();
  const out: BoardBucket[] = [];
  for (const period of board.periods) {
    if (period === 'ALL_TIME' || keepsBoardScores(board, period)) continue;
    const seasons = period === 'SEASON' ? await deps.seasons.live(board.id) : [];
    for (const region of [null, ...board.regions]) {
      const buckets = period === 'SEASON' ? seasons.map(seasonBucket) : keptBuckets(board, period, now, region, CLOCK_SKEW_MS);
      for (const bucket of buckets) out.push({ board, bucket, region });
    }
  }
  return out;
}

/** One bucket's drift: the board scores PostgreSQL holds for unflagged players, and the sorted set's members. */
export interface BucketDrift {
  /** Unflagged players' board scores in PostgreSQL: what the sorted set should hold. */
  stored: number;
  /** Members of the sorted set. */
  size: number;
  /** stored - size: positive when the index misses players, negative when it holds extra. */
  drift: number;
}

/**
 * Measures one bucket: one count query and one ZCARD (per shard). `unbounded`: the count runs
 * without the pool's statement timeout (the drift gauge's background measurement; a request's
 * count keeps the bound). Default false.
 */
export async function measureBucketDrift(
  deps: Pick<BoardBucketDeps, 'storage' | 'index' | 'now'>,
  at: BoardBucket,
  { unbounded = false } = {},
): Promise<BucketDrift> {
  const days = at.board.inactiveAfterDays;
  if (days && (at.bucket.period === 'ALL_TIME' || at.bucket.period === 'SEASON')) {
    // Inactive players leave these buckets (jobs/inactive-players.ts) and come back with a result
    // or a rebuild: the sorted set holds every active player and any number of the inactive ones,
    // and only a size outside that span is drift.
    const since = activeSince(deps.now(), days);
    const [{ stored, active }, size] = await Promise.all([
      deps.storage.boardScores.countRankableByActivity(boardScoreList(at), since, { unbounded }),
      deps.index.size(at),
    ]);
    return { stored, size, drift: size < active ? active - size : size > stored ? stored - size : 0 };
  }
  const [stored, size] = await Promise.all([deps.storage.boardScores.countRankable(boardScoreList(at), { unbounded }), deps.index.size(at)]);
  return { stored, size, drift: stored - size };
}

/** The most buckets a board lists: its live ones first, then the newest kept ones. */
export const MAX_LISTED_BUCKETS = 100;

/** One bucket of a board with its size in the index and in PostgreSQL. */
export interface BucketStatus extends BucketDrift {
  period: Period;
  bucket: string;
  region: string | null;
}

const sameBucket = (a: BoardBucket, b: BoardBucket) => a.bucket.period === b.bucket.period && a.bucket.label === b.bucket.label && a.region === b.region;

/**
 * Past its retention, or a closed season (read through seasonResults): not an index bucket any
 * more, so left out. Anything else (a store away) is the caller's.
 */
function notKept(error: unknown): null {
  if (error instanceof GraphQLError && (error.extensions.code === 'NOT_FOUND' || error.extensions.code === 'BAD_USER_INPUT')) return null;
  throw error;
}

/**
 * A board's buckets that can be read now, each measured as the drift gauge measures it: the live
 * ones (each kept period's current bucket and the open season, globally and per region, empty or
 * not) and then every other bucket holding board scores that is still kept (yesterday, last week...),
 * newest first, at most MAX_LISTED_BUCKETS: those kept as rows, then those derived from the log.
 * One count query and one ZCARD per bucket, plus a loose index scan for the lists kept as rows.
 */
export async function boardBuckets(deps: BoardBucketDeps, board: Board): Promise<BucketStatus[]> {
  const live = await liveBuckets(deps, board);
  const stored = (await deps.storage.boardScores.lists())
    .filter((list) => list.boardId === board.id)
    .sort((a, b) => PERIODS.indexOf(a.period) - PERIODS.indexOf(b.period) || b.bucket.localeCompare(a.bucket) || a.region.localeCompare(b.region));
  const buckets = [...live];
  for (const list of stored) {
    if (buckets.length >= MAX_LISTED_BUCKETS) break;
    const at = await resolveBoardBucket(deps, { board: board.id, period: list.period, bucket: list.bucket, region: list.region || null }).catch(notKept);
    if (at && !buckets.some((known) => sameBucket(known, at))) buckets.push(at);
  }
  const measure = async (at: BoardBucket): Promise<BucketStatus> => ({
    period: at.bucket.period,
    bucket: at.bucket.label,
    region: at.region,
    ...(await measureBucketDrift(deps, at)),
  });
  const listed = await Promise.all(buckets.slice(0, MAX_LISTED_BUCKETS).map(measure));
  // The derived buckets past the live ones are named by the calendar, not by rows: those that hold
  // nothing, in PostgreSQL or in the index, are left out, as a list without rows would be.
  const derived = (await keptDerivedBuckets(deps, board)).filter((at) => !buckets.some((known) => sameBucket(known, at)));
  for (const at of derived) {
    if (listed.length >= MAX_LISTED_BUCKETS) break;
    const status = await measure(at);
    if (status.stored > 0 || status.size > 0) listed.push(status);
  }
  return listed;
}
