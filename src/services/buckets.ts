import type { FreezeList, FrozenBucket } from '../db/frozen.js';
import { packingFor } from '../ranking/packing.js';
import { type Season } from '../db/seasons.js';
import { type Board, type Period, closesAt, keepsBoardScores } from '../model/board.js';
import type { BoardScoreList } from '../db/board-scores.js';
import { type Bucket, bucketAt, isKept, keptUntil, parseBucketLabel } from '../model/buckets.js';
import type { BoardBucket } from '../ranking/index.js';
import { badInput, notFound } from '../errors.js';
import type { BoardDirectory } from './board-directory.js';
import type { FrozenDirectory } from './frozen-directory.js';
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

/** A bucket a read names, and for a season whether it is closed. */
interface NamedBucket extends Bucket {
  /** A SEASON bucket's season is closed (its standings frozen); only when closed seasons were asked for. */
  seasonClosed?: boolean;
}

/**
 * A SEASON bucket may need a query (its board's live seasons); every other is worked out at once.
 * `closedSeasons`: a closed season is named too (a read serves its frozen standings), not NOT_FOUND.
 */
function requireBucket(
  deps: BucketDeps,
  board: Board,
  period: Period,
  label: string | null | undefined,
  region: string | null,
  closedSeasons = false,
): NamedBucket | Promise<NamedBucket> {
  if (!board.periods.includes(period)) throw notFound(`Board "${board.id}" keeps no ${period} buckets.`);
  if (period === 'SEASON') return requireSeasonBucket(deps, board, label, closedSeasons);
  const now = deps.now();
  if (label === null || label === undefined) return bucketAt(board, period, now, region);
  const bucket = parseBucketLabel(board, period, label, region);
  if (!bucket) throw badInput(`"${label}" is not a ${period} bucket; write it like ${LABEL_EXAMPLES[period]}.`);
  if (!isKept(bucket, board.retention, now, CLOCK_SKEW_MS)) throw notFound(`Bucket ${period} ${label} of board "${board.id}" is not kept.`);
  return bucket;
}

/**
 * The board bucket a write or an operator's command names, checked: NOT_FOUND for what does not
 * exist (a closed season included: its index is gone), BAD_USER_INPUT for what is malformed. A
 * known board's calendar bucket takes no wait but this function's own. Reads resolve theirs with
 * resolveReadBucket, which also tells a closed bucket.
 */
export async function resolveBoardBucket(deps: BucketDeps, args: BucketArgs): Promise<BoardBucket> {
  const board = deps.boards.known(args.board) ?? (await requireBoard(deps, args.board));
  const region = requireRegion(board, args.region);
  const bucket = requireBucket(deps, board, args.period, args.bucket, region);
  // Awaited only when it is a promise: an await of a plain value still costs a promise and a turn.
  return { board, bucket: bucket instanceof Promise ? await bucket : bucket, region };
}

/** What resolving a read's bucket takes: naming it, and telling whether it is closed. */
export interface ReadBucketDeps extends BucketDeps {
  frozen: FrozenDirectory;
}

/** The bucket a read names, and its close marker when it is closed (its reads are served from its frozen standings). */
export interface ReadBucket extends BoardBucket {
  /** Null while the bucket is open: its reads are the index's. */
  frozen: FrozenBucket | null;
}

/**
 * The board bucket a read names, checked as resolveBoardBucket checks it (but a closed season is
 * named too), and whether it is closed:
 * - a calendar bucket before its close time (its end plus the board's grace: the open bucket, and
 *   one still in its grace) is open, known without a query; from its close time on its close
 *   marker is looked up (frozen-directory.ts: remembered for good once found, never remembered
 *   while missing), and until the closer has frozen it, it is read live as before;
 * - a season is closed once its season is (the season directory tells, as it did before); a
 *   closed season without a frozen list for the region asked (closed before regional lists were
 *   frozen) is NOT_FOUND;
 * - ALL_TIME never closes.
 * O(1) for an open bucket; one remembered lookup (one primary-key probe the first time) for a
 * closed one.
 */
export async function resolveReadBucket(deps: ReadBucketDeps, args: BucketArgs): Promise<ReadBucket> {
  const board = deps.boards.known(args.board) ?? (await requireBoard(deps, args.board));
  const region = requireRegion(board, args.region);
  const named = requireBucket(deps, board, args.period, args.bucket, region, true);
  const bucket = named instanceof Promise ? await named : named;
  const marker = closedMarker(deps, { board, bucket, region }, bucket.seasonClosed === true);
  const frozen = marker instanceof Promise ? await marker : marker;
  if (bucket.seasonClosed && !frozen) {
    throw notFound(
      `Season "${bucket.label}" of board "${board.id}" was closed before regional standings were frozen: it has final standings for the whole board only (leave region out).`,
    );
  }
  return { board, bucket, region, frozen };
}

/**
 * The close marker of a bucket, or null while it is open: null at once (no query) for ALL_TIME,
 * a season not closed (`seasonClosed` false) and a calendar bucket before its close time (unless
 * the frozen directory knows it closed: frozen before its board's grace was raised); else the
 * frozen directory's lookup (null until the closer has frozen it). What a watched top checks
 * before each read too (pubsub/top-feed.ts).
 */
export function closedMarker(
  deps: Pick<ReadBucketDeps, 'frozen' | 'now'>,
  at: BoardBucket,
  seasonClosed = false,
): FrozenBucket | null | Promise<FrozenBucket | null> {
  const { period } = at.bucket;
  if (period === 'ALL_TIME') return null;
  if (period === 'SEASON') return seasonClosed ? deps.frozen.find(at) : null;
  // Before its close time a bucket is open, unless it was frozen under a shorter grace than its board has now.
  return takesResults(at.board, at.bucket, deps.now()) && !deps.frozen.knownClosed(at) ? null : deps.frozen.find(at);
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
      : {
          order: board.order,
          maxScore: board.maxScore,
          tieBreaks: board.tieBreaks,
          from: bucket.start,
          until: bucket.end,
          closesAt: closesAt(board, bucket.end),
        },
  };
}

/**
 * What freezing (or exporting from one snapshot) a list takes: where its board scores are
 * (boardScoreList), its span, and the index's order with its period's tie-break unit; and what its
 * close computes beside the standings: the board's reward bands, rank style and top size. O(1).
 */
export function freezeListOf(at: BoardBucket): FreezeList {
  const packing = packingFor(at.board, at.bucket.period);
  return {
    ...boardScoreList(at),
    startsAt: at.bucket.start,
    endsAt: at.bucket.end,
    order: at.board.order,
    maxScore: at.board.maxScore,
    tieBreaks: at.board.tieBreaks ?? [],
    // With the time in the member (ranking/packing.ts), the index breaks ties to the millisecond over 2^40 ms.
    tie: packing.timeInMember ? { unitMs: 1, slots: 2 ** 40 } : { unitMs: packing.unitMs, slots: 2 ** packing.timeBits },
    rankStyle: at.board.rankStyle,
    topSize: at.board.topSize,
    rewards: at.board.rewards ?? [],
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
export async function liveSeasonsOf(deps: { seasons: Pick<SeasonDirectory, 'live'> }, board: Board): Promise<Season[]> {
  return board.periods.includes('SEASON') ? deps.seasons.live(board.id) : [];
}

/**
 * The SEASON bucket a read names: the current season when `label` is left out, or the season with
 * that id. A closed one is NOT_FOUND unless `closedToo` (a read, which serves its frozen
 * standings), as is an unknown one. O(1) while cached, one query otherwise.
 */
async function requireSeasonBucket(deps: BucketDeps, board: Board, label: string | null | undefined, closedToo: boolean): Promise<NamedBucket> {
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
  if (!season.closedAt) return seasonBucket(season);
  if (!closedToo) throw notFound(`Season "${label}" of board "${board.id}" is closed: its index is gone, and reads serve its final standings.`);
  return { ...seasonBucket(season), seasonClosed: true };
}

/**
 * Whether a bucket read open has closed since (a watched top's, see pubsub/top-feed.ts): a season
 * once its season is closed (the season directory: one shared Redis read of its token); a calendar
 * bucket once its close marker is found (no query before its close time). O(1).
 */
export function closedNow(deps: Pick<ReadBucketDeps, 'frozen' | 'now' | 'seasons'>, at: BoardBucket): boolean | Promise<boolean> {
  if (at.bucket.period === 'SEASON') return deps.seasons.named(at.board.id, at.bucket.label).then((season) => Boolean(season?.closedAt));
  const marker = closedMarker(deps, at);
  return marker instanceof Promise ? marker.then((found) => found !== null) : marker !== null;
}
