import { type Season } from '../db/seasons.js';
import { type Board, type Period, closesAt, keepsBoardScores } from '../model/board.js';
import type { BoardScoreList } from '../db/board-scores.js';
import { type Bucket, bucketAt, isKept, keptUntil, parseBucketLabel } from '../model/buckets.js';
import type { BoardBucket } from '../ranking/index.js';
import { badInput, notFound } from '../errors.js';
import type { BoardDirectory } from './board-directory.js';
import { SEASON_LABEL, type SeasonDirectory, currentOf, seasonBucket, seasonBucketHolding } from './season-directory.js';

/** How far ahead of the server's clock an achievedAt (and so a bucket) may be. */
export const CLOCK_SKEW_MS = 5 * 60_000;

const LABEL_EXAMPLES: Record<Exclude<Period, 'SEASON'>, string> = {
  ALL_TIME: 'all',
  MONTHLY: '2026-11',
  WEEKLY: '2026-W48 (ISO week)',
  DAILY: '2026-11-29',
};

/** Where a read or a subscription looks: the arguments every read shares. */
export interface BucketArgs {
  board: string;
  period: Period;
  bucket?: string | null | undefined;
  region?: string | null | undefined;
}

/** What naming a bucket takes: this process's boards and seasons, and the clock. */
export interface BucketDeps {
  boards: BoardDirectory;
  seasons: SeasonDirectory;
  now(): Date;
}

export async function requireBoard(deps: Pick<BucketDeps, 'boards'>, id: string): Promise<Board> {
  const board = await deps.boards.find(id);
  if (!board) throw notFound(`No board "${id}".`);
  return board;
}

/** Why a region cannot be used on a board, or null when it can (or none is given). */
export function regionProblem(board: Board, region: string | null | undefined): string | null {
  if (region === null || region === undefined || board.regions.includes(region)) return null;
  const known = board.regions.length ? `one of ${board.regions.join(', ')}` : 'none (it keeps no regions)';
  return `Board "${board.id}" has no region "${region}"; its regions are ${known}.`;
}

export function requireRegion(board: Board, region: string | null | undefined): string | null {
  const problem = regionProblem(board, region);
  if (problem) throw badInput(problem);
  return region ?? null;
}

/** A SEASON bucket may need a query (its board's live seasons); every other is worked out at once. */
function requireBucket(deps: BucketDeps, board: Board, period: Period, label: string | null | undefined, region: string | null): Bucket | Promise<Bucket> {
  if (!board.periods.includes(period)) throw notFound(`Board "${board.id}" keeps no ${period} buckets.`);
  if (period === 'SEASON') return requireSeasonBucket(deps, board, label);
  const now = deps.now();
  if (label === null || label === undefined) return bucketAt(board, period, now, region);
  const bucket = parseBucketLabel(board, period, label, region);
  if (!bucket) throw badInput(`"${label}" is not a ${period} bucket; write it like ${LABEL_EXAMPLES[period]}.`);
  if (!isKept(bucket, board.retention, now, CLOCK_SKEW_MS)) throw notFound(`Bucket ${period} ${label} of board "${board.id}" is not kept.`);
  return bucket;
}

/**
 * The board bucket a read names, checked: NOT_FOUND for what does not exist, BAD_USER_INPUT for
 * what is malformed. A known board's calendar bucket takes no wait but this function's own: every
 * read resolves one, an `open` screen three.
 */
export async function resolveBoardBucket(deps: BucketDeps, args: BucketArgs): Promise<BoardBucket> {
  const board = deps.boards.known(args.board) ?? (await requireBoard(deps, args.board));
  const region = requireRegion(board, args.region);
  const bucket = requireBucket(deps, board, args.period, args.bucket, region);
  // Awaited only when it is a promise: an await of a plain value still costs a promise and a turn.
  return { board, bucket: bucket instanceof Promise ? await bucket : bucket, region };
}

/**
 * Where a bucket's board scores are in PostgreSQL: its rows in board_scores, or for a bucket the
 * board derives from the score log (keepsBoardScores), the span of the log it is derived from.
 */
export function boardScoreList(at: BoardBucket): BoardScoreList {
  const { board, bucket } = at;
  return {
    boardId: board.id,
    period: bucket.period,
    bucket: bucket.label,
    region: at.region ?? '',
    derived: keepsBoardScores(board, bucket.period)
      ? null
      : { order: board.order, from: bucket.start, until: bucket.end, closesAt: closesAt(board, bucket.end) },
  };
}

/** A board bucket a result is written to, with the expiry its key takes. */
export interface ResultBucket extends BoardBucket {
  expiresAt: Date | null;
}

/** Whether a bucket still takes results at `now`: it has not closed (its end plus the board's grace). O(1). */
export function takesResults(board: Board, bucket: Bucket, now: Date): boolean {
  const closes = closesAt(board, bucket.end);
  return closes === null || now.getTime() < closes.getTime();
}

/**
 * Every bucket a result achieved at `achievedAt` falls in: each period the board keeps, globally
 * and, with a region, regionally too (on the region's calendar, which may be another zone's, so the
 * two days may differ). Buckets already closed (their end plus the board's grace has passed) are
 * left out: a late result counts in the board's open buckets but leaves a closed one as it was
 * frozen. A SEASON result goes to the one of the board's live `seasons` whose
 * [startsAt, endsAt) holds achievedAt; its key is kept until the season is closed and frozen
 * (expiresAt null). O(periods).
 */
export function bucketsOfResult(board: Board, achievedAt: Date, region: string | null, now: Date, seasons: readonly Season[] = []): ResultBucket[] {
  const out: ResultBucket[] = [];
  for (const period of board.periods) {
    for (const list of region === null ? [null] : [null, region]) {
      const bucket = period === 'SEASON' ? seasonBucketHolding(seasons, achievedAt) : bucketAt(board, period, achievedAt, list);
      if (!bucket || !isKept(bucket, board.retention, now, CLOCK_SKEW_MS) || !takesResults(board, bucket, now)) continue;
      out.push({ board, bucket, region: list, expiresAt: keptUntil(bucket, board.retention) });
    }
  }
  return out;
}

/** The board's live seasons when it keeps SEASON buckets; none, without asking, when it does not. */
export async function liveSeasonsOf(deps: Pick<BucketDeps, 'seasons'>, board: Board): Promise<Season[]> {
  return board.periods.includes('SEASON') ? deps.seasons.live(board.id) : [];
}

/**
 * The SEASON bucket a read names: the current season when `label` is left out, or the live season
 * (current, or scheduled ahead) with that id. A closed season's index is gone (seasonResults serves its final standings), so it
 * is NOT_FOUND here, as is an unknown one. O(1) while cached, one query otherwise.
 */
async function requireSeasonBucket(deps: BucketDeps, board: Board, label: string | null | undefined): Promise<Bucket> {
  if (label === null || label === undefined) {
    const open = currentOf(await deps.seasons.live(board.id), deps.now());
    if (!open) throw notFound(`Board "${board.id}" has no open season.`);
    return seasonBucket(open);
  }
  // Season ids are opaque to clients: one of another form than the service gives (s1, s2, ...) names no season, and is not asked about.
  if (!SEASON_LABEL.test(label)) throw notFound(`Board "${board.id}" has no season "${label}".`);
  // A season not live (closed, or none) is remembered as a live one is (season-directory.ts), not asked of PostgreSQL each read.
  const season = await deps.seasons.named(board.id, label);
  if (!season) throw notFound(`Board "${board.id}" has no season "${label}".`);
  if (season.closedAt) throw notFound(`Season "${label}" of board "${board.id}" is closed; seasonResults serves its final standings.`);
  return seasonBucket(season);
}
