import { rebuildBucket } from './rebuild-bucket.js';
import type { RebuildJob } from '../services/rebuild-jobs.js';
import { RebuildRunningError } from '../ranking/index.js';
import { bucketKey } from '../ranking/keys.js';
import { type BucketArgs, boardScoreList, resolveBoardBucket } from '../services/buckets.js';
import type { Logger } from 'pino';
import type { RebuildJobs } from '../services/rebuild-jobs.js';
import type { BucketDeps } from '../services/buckets.js';
import type { RebuildDeps } from './rebuild-bucket.js';
import { badInput, clientError } from '../errors.js';
import { hasClosed } from '../model/buckets.js';
import type { BoardBucket } from '../ranking/index.js';

/** What a rebuild from the API takes (7 members). */
export interface RebuildBoardDeps extends BucketDeps, RebuildDeps {
  log: Logger;
}

/**
 * Rebuilds one bucket's ranking index from PostgreSQL and swaps it in atomically; answers the
 * number of ranked players. NOT_FOUND / BAD_USER_INPUT as every read of a bucket, BAD_USER_INPUT for
 * a closed one (frozen: see requireOpen); RATE_LIMITED
 * while another rebuild of the same bucket runs. O(N log N) for N board scores.
 */
export async function rebuildBoard(deps: RebuildBoardDeps, args: BucketArgs): Promise<number> {
  const at = requireOpen(deps, await resolveBoardBucket(deps, args));
  const started = performance.now();
  try {
    const size = await rebuildBucket(deps, at);
    deps.log.info({ key: bucketKey(at), size, ms: Math.round(performance.now() - started) }, 'bucket rebuilt');
    return size;
  } catch (error) {
    throw refusedWhileRunning(error);
  }
}

/**
 * The bucket, while it is open; BAD_USER_INPUT once it has closed: its standings are frozen (or
 * about to be) in PostgreSQL and served from there, and its index is let go, so there is nothing to
 * rebuild (docs/closing.md). O(1).
 */
function requireOpen(deps: Pick<BucketDeps, 'now'>, at: BoardBucket): BoardBucket {
  if (hasClosed(at.board, at.bucket, deps.now()))
    throw badInput(
      `Bucket ${at.bucket.period} ${at.bucket.label}${at.region ? ` (region ${at.region})` : ''} of board "${at.board.id}" has closed: its standings are frozen, served as they were at its close, and its index is not rebuilt.`,
    );
  return at;
}

/** RATE_LIMITED for a rebuild refused because another of the same bucket runs; any other error as it is. */
function refusedWhileRunning(error: unknown): unknown {
  if (error instanceof RebuildRunningError) return clientError('RATE_LIMITED', 'A rebuild of this bucket is running already; retry once it has finished.');
  return error;
}

/**
 * Starts rebuilding one bucket in the background and answers the job at once, its progress
 * readable by id from any process (see services/rebuild-jobs.ts): what the console runs, since a large
 * bucket takes longer than a request should. Refused as rebuildBoard is.
 */
export async function startRebuild(deps: RebuildBoardDeps & { rebuilds: Pick<RebuildJobs, 'start'> }, args: BucketArgs): Promise<RebuildJob> {
  const at = requireOpen(deps, await resolveBoardBucket(deps, args));
  try {
    return await deps.rebuilds.start(
      at,
      (onProgress) => rebuildBucket(deps, at, { onProgress }),
      // Not a request's: the job runs on after the answer (see RebuildJobs.start).
      () => deps.storage.boardScores.countRankable(boardScoreList(at), { unbounded: true }),
    );
  } catch (error) {
    throw refusedWhileRunning(error);
  }
}

/** A rebuild started with startRebuild, or null when there is none by that id (kept a day). */
export async function findRebuild(deps: { rebuilds: Pick<RebuildJobs, 'find'> }, id: string): Promise<RebuildJob | null> {
  return deps.rebuilds.find(id);
}
