import type { PlayerBoardScore } from '../db/board-score-rows.js';
import type { RecordedBoardScore } from '../model/board.js';
import { type Bucket, isKept, keptUntil, parseBucketLabel } from '../model/buckets.js';
import type { Storage } from '../db/storage.js';
import type { BoardBucket, RankingIndex } from '../ranking/index.js';
import { CLOCK_SKEW_MS, type ResultBucket } from './buckets.js';
import type { Logger } from 'pino';
import type { BoardDirectory } from './board-directory.js';
import type { TopCache } from '../ranking/top-cache.js';

/**
 * What taking a player out of every bucket they hold (or back in) takes: their board scores, the
 * index, this process's cached tops to drop, and finding the buckets (PlayerBucketDeps).
 */
export interface PlayerIndexDeps extends PlayerBucketDeps {
  storage: Pick<Storage, 'players'>;
  index: RankingIndex;
  topCache: Pick<TopCache, 'invalidate'>;
  log: Pick<Logger, 'debug' | 'warn'>;
}

/** A board bucket a player has a board score in, with that score. */
export interface HeldBucket extends ResultBucket {
  score: RecordedBoardScore;
}

/**
 * The bucket a board-score row names, or null when it cannot be named: a calendar label that does
 * not parse, or a SEASON row whose season is missing or closed (a closed season's key is let go,
 * so there is nothing in the index to remove or restore).
 */
function bucketOfRow(row: PlayerBoardScore, board: BoardBucket['board']): Bucket | null {
  if (row.period !== 'SEASON') return parseBucketLabel(board, row.period, row.bucket, row.region === '' ? null : row.region);
  if (!row.season || row.season.closedAt) return null;
  // A season's tie-break time counts from its start.
  return { period: 'SEASON', label: row.bucket, start: row.season.startsAt, end: row.season.endsAt };
}

/** What finding a player's buckets takes: this process's boards, the clock, and where to note a row left alone. */
export interface PlayerBucketDeps {
  boards: BoardDirectory;
  now(): Date;
  log: Pick<Logger, 'debug'>;
}

/**
 * Loads every board definition into the directory before a player's lock (or transaction) holds a
 * pool connection, so that heldBuckets under it never needs a second one. One small query.
 */
export async function warmBoards(deps: Pick<PlayerBucketDeps, 'boards'>): Promise<void> {
  await deps.boards.list();
}

/**
 * The index buckets a player's board scores live in now: every row whose bucket can still be read
 * (ALL_TIME, open seasons, calendar buckets within their retention), each with the key's expiry.
 * Rows of buckets past their retention are left out: their keys have expired, and writing one back
 * would bring an old board back. O(rows); boards come from the directory's cache.
 */
export async function heldBuckets(deps: PlayerBucketDeps, playerId: string, rows: PlayerBoardScore[]): Promise<HeldBucket[]> {
  const now = deps.now();
  const held: HeldBucket[] = [];
  for (const row of rows) {
    const board = await deps.boards.find(row.boardId);
    const bucket = board ? bucketOfRow(row, board) : null;
    if (!board || !bucket) {
      deps.log.debug({ playerId, row }, 'board score names no live bucket; left alone');
      continue;
    }
    if (!isKept(bucket, board.retention, now, CLOCK_SKEW_MS)) continue;
    held.push({
      board,
      bucket,
      region: row.region === '' ? null : row.region,
      expiresAt: keptUntil(bucket, board.retention),
      score: {
        playerId,
        score: row.score,
        reachedAt: row.reachedAt,
        metadata: row.metadata,
        ...(row.tieBreakValues && { tieBreakValues: row.tieBreakValues }),
      },
    });
  }
  return held;
}

/** Whether a rank (1-based, null for none) is inside its board's watched top. */
export const inTop = (at: BoardBucket, rank: number | null | undefined): boolean => rank !== null && rank !== undefined && rank <= at.board.topSize;

/**
 * Drops this process's cached tops of the buckets a player left or came back to, so its next top
 * read shows the change at once (other processes' caches are at most about a second old). O(k).
 */
export function forgetTops(deps: { topCache: Pick<TopCache, 'invalidate'> }, buckets: BoardBucket[]): void {
  for (const at of buckets) deps.topCache.invalidate(at);
}
