import { setInterval as every } from 'node:timers/promises';
import type { FrozenBucket } from '../db/frozen.js';
import { type Board, type CalendarPeriod, DEFAULT_CLOSE_GRACE_SECONDS, closesAt } from '../model/board.js';
import { type Bucket, keptBuckets, keptUntil } from '../model/buckets.js';
import type { BoardBucket } from '../ranking/index.js';
import type { BoardDirectory } from '../services/board-directory.js';
import type { ClosedLists } from '../services/closed-lists.js';
import { type CloseBucketDeps, closeCalendarLists, closeSeason, dropClosedKeys, seasonBuckets } from '../writes/close-buckets.js';
import { closePendingLeagueRounds, pruneLeagueRounds } from '../writes/close-league-rounds.js';

/**
 * The bucket closer: the one job that closes buckets, calendar ones and seasons alike (see
 * docs/closing.md). Every process runs it; freezeLists lets exactly one freeze each list.
 */

/**
 * How long after a close the closer keeps dropping the bucket's keys. A write already in flight
 * when the bucket closed (its buckets chosen before) may still bring a dropped key back, and so may
 * a process that has not seen a season's close (SEASON_CACHE_MAX_AGE_MS, a second) or a board's
 * lowered grace (BOARD_REFRESH_MS); this is far longer than all of them plus a slow write. It also
 * retries a drop that failed while Redis was away.
 */
export const CLOSED_KEY_SWEEP_MS = 5 * 60_000;

const CALENDAR_PERIODS: readonly CalendarPeriod[] = ['DAILY', 'WEEKLY', 'MONTHLY'];

/** What the bucket closer takes (6 members). */
export interface BucketCloserDeps extends CloseBucketDeps {
  boards: Pick<BoardDirectory, 'find' | 'list'>;
  /** Where the write path learns which lists are frozen (see closed-lists.ts). Default: nowhere. */
  closedLists?: ClosedLists | undefined;
}

export interface BucketCloserOptions {
  /** How often a pass runs; null: never by itself, only when pass() is called (a test's own closer). Default 5,000 ms. */
  intervalMs?: number | null;
  /**
   * How long after a bucket closes (its end plus the board's grace) the closer waits before it
   * freezes it: every write that chose its buckets before the close has committed by then, so the
   * freeze holds all of them (see docs/closing.md). At least the longest a write can take
   * (REQUEST_TIMEOUT_MS) plus a margin. Default: {@link settleMsFor}(10,000).
   */
  settleMs?: number;
}

/** @default REQUEST_TIMEOUT_MS + 5,000: a write answers (or gives up) within REQUEST_TIMEOUT_MS; its COMMIT is on the wire by then. */
export const settleMsFor = (requestTimeoutMs: number): number => requestTimeoutMs + 5_000;

/** One closed list, remembered so that a pass never asks about it again. */
interface Known {
  at: BoardBucket;
  /** Until when its keys are dropped again at each pass. */
  sweepUntil: number;
  /** When its frozen standings go (past the board's retention). */
  dropAt: number | null;
}

/** What the closer remembers of one board. */
interface Watched {
  /** The definition last seen (the directory keeps one object while the board is unchanged). */
  board: Board;
  /** Its closed calendar lists, by listKey. */
  closed: Map<string, Known>;
  /** Nothing can fall due before this instant (ms) unless the board changes. */
  nextMs: number;
  /**
   * When this process saw the board's grace lowered: a process that has not seen it yet may still
   * write into a list the new grace closes, so nothing is frozen before this plus the settle margin.
   */
  loweredAt: number;
}

const graceOf = (board: Board) => board.closeGraceSeconds ?? DEFAULT_CLOSE_GRACE_SECONDS;

const listKey = (period: string, label: string, region: string | null) => `${period}\u0000${label}\u0000${region ?? ''}`;

/** The bucket a frozen_buckets row names (its span is all a calendar bucket needs). */
function bucketOf(row: FrozenBucket): Bucket {
  return { period: row.period, label: row.bucket, start: row.startsAt, end: row.endsAt };
}

export interface BucketCloser {
  /** One pass (after one under way): what the timer runs every intervalMs; a test calls it with its clock set. */
  pass(): Promise<void>;
  /** Stops the timer (when started) and waits for a pass in progress to finish. */
  stop(): Promise<void>;
}

/**
 * The bucket closer, its passes run every `intervalMs` until stopped (a pass that fails, a store
 * away, is logged and tried again at the next tick; the timer does not keep the process alive),
 * with what it remembers between them. A pass, for every board:
 *
 * - closes each calendar list (DAILY, WEEKLY, MONTHLY; globally and in each region, on the region's
 *   calendar) that is kept, whose end plus the board's grace plus the settle margin has passed, and
 *   that is not frozen yet: the first pass that sees a board reads its frozen lists once
 *   (storage.frozen.list), and freezes every past kept list not among them, empty ones too;
 * - deletes the frozen standings of calendar lists past the board's retention, and a league round's
 *   cohorts with them (seasons are kept);
 * - drops again the keys of the lists it closed lately (CLOSED_KEY_SWEEP_MS).
 *
 * Then it closes every season whose endsAt plus its board's grace plus the settle margin has
 * passed (closeSeason), drops the keys of seasons closed lately again, and closes the league rounds
 * frozen but not closed (writes/close-league-rounds.ts; a league round closes right after its
 * freeze, this finds one a crash left between the two).
 *
 * A board is looked at again only when something can have fallen due (its open lists' closes, its
 * frozen lists' retention) or it changed: a pass is one query for the boards and one for the due
 * seasons, plus O(boards) work, unless something falls due.
 */
export function startBucketCloser(deps: BucketCloserDeps, options: BucketCloserOptions = {}): BucketCloser {
  const settleMs = options.settleMs ?? settleMsFor(10_000);
  const watched = new Map<string, Watched>();

  /** When a list may be frozen: its close plus the settle margin, and not before a lowered grace has settled. */
  const freezableAt = (w: Pick<Watched, 'loweredAt'>, board: Board, bucket: Bucket): number =>
    Math.max(closesAt(board, bucket.end)!.getTime() + settleMs, w.loweredAt + settleMs);

  async function watch(board: Board, nowMs: number): Promise<Watched> {
    let w = watched.get(board.id);
    // A board deleted and made again under the same id (deleteBoard) is another board: what the old one closed is forgotten.
    if (w && w.board.createdAt.getTime() !== board.createdAt.getTime()) {
      watched.delete(board.id);
      w = undefined;
    }
    if (!w) {
      const closed = new Map<string, Known>();
      for (const row of await deps.storage.frozen.list({ boardId: board.id })) {
        if (row.period === 'SEASON') continue;
        const bucket = bucketOf(row);
        const at = { board, bucket, region: row.region === '' ? null : row.region };
        // Frozen by any process, under whatever grace: this process's write path and reads keep it closed too.
        deps.closedLists?.add(at);
        closed.set(listKey(row.period, row.bucket, at.region), {
          at,
          sweepUntil: row.closedAt.getTime() + CLOSED_KEY_SWEEP_MS,
          dropAt: dropAtOf(board, bucket),
        });
      }
      w = { board, closed, nextMs: -Infinity, loweredAt: -Infinity };
      watched.set(board.id, w);
    } else if (w.board !== board) {
      // A lowered grace closes lists at once for this process; the others follow within a second.
      if (graceOf(board) < graceOf(w.board)) w.loweredAt = nowMs;
      w.board = board;
      w.nextMs = -Infinity;
    }
    return w;
  }

  async function passBoard(board: Board, now: Date): Promise<void> {
    const nowMs = now.getTime();
    const w = await watch(board, nowMs);
    if (nowMs < w.nextMs && !sweeping(w, nowMs)) return;
    let nextMs = Infinity;
    const due: BoardBucket[] = [];
    for (const period of CALENDAR_PERIODS) {
      if (!board.periods.includes(period)) continue;
      for (const region of [null, ...board.regions]) {
        for (const bucket of keptBuckets(board, period, now, region)) {
          if (w.closed.has(listKey(period, bucket.label, region))) continue;
          const at = freezableAt(w, board, bucket);
          if (at <= nowMs) due.push({ board, bucket, region });
          else nextMs = Math.min(nextMs, at);
        }
      }
    }
    // Lists of one bucket (the same period and label) are frozen together, each bucket in a transaction of its own.
    const byBucket = new Map<string, BoardBucket[]>();
    for (const at of due) {
      const key = `${at.bucket.period}\u0000${at.bucket.label}`;
      const lists = byBucket.get(key);
      if (lists) lists.push(at);
      else byBucket.set(key, [at]);
    }
    for (const lists of byBucket.values()) {
      await closeCalendarLists(deps, lists);
      // Deleted meanwhile (deleteBoard; the directory forgot it), maybe made again under its id: none of its lists is remembered closed.
      if ((await deps.boards.find(board.id))?.createdAt.getTime() !== board.createdAt.getTime()) return;
      for (const at of lists) deps.closedLists?.add(at);
      for (const at of lists)
        w.closed.set(listKey(at.bucket.period, at.bucket.label, at.region), {
          at,
          sweepUntil: nowMs + CLOSED_KEY_SWEEP_MS,
          dropAt: dropAtOf(board, at.bucket),
        });
    }
    // Retention: a frozen calendar list is readable for as long as the live one was.
    const expired = [...w.closed.entries()].filter(([, known]) => known.dropAt !== null && known.dropAt <= nowMs);
    if (expired.length > 0) {
      // A league round's cohorts go with its frozen standings.
      await pruneLeagueRounds(
        deps,
        board,
        expired.map(([, { at }]) => at),
      );
      await deps.storage.frozen.drop(
        expired.map(([, { at }]) => ({ boardId: board.id, period: at.bucket.period, bucket: at.bucket.label, region: at.region ?? '' })),
      );
      for (const [key, { at }] of expired) {
        w.closed.delete(key);
        deps.closedLists?.delete(at);
      }
    }
    // Keys a late write brought back after the close.
    const recent = [...w.closed.values()].filter((known) => known.sweepUntil > nowMs).map((known) => known.at);
    await dropClosedKeys(deps, recent);
    for (const known of w.closed.values()) if (known.dropAt !== null) nextMs = Math.min(nextMs, known.dropAt);
    w.nextMs = nextMs;
  }

  const sweeping = (w: Watched, nowMs: number) => [...w.closed.values()].some((known) => known.sweepUntil > nowMs);

  async function pass(): Promise<void> {
    const now = deps.now();
    const nowMs = now.getTime();
    const boards = await deps.boards.list();
    for (const board of boards) await passBoard(board, now);
    for (const id of watched.keys()) if (!boards.some((board) => board.id === id)) watched.delete(id);
    // Seasons: findDue answers those whose endsAt has passed; each closes once its grace and the settle margin have too.
    for (const season of await deps.storage.seasons.findDue(new Date(nowMs - settleMs))) {
      const board = await deps.boards.find(season.boardId);
      if (!board) continue;
      const w = await watch(board, nowMs);
      if (freezableAt(w, board, { period: 'SEASON', label: season.id, start: season.startsAt, end: season.endsAt }) <= nowMs)
        await closeSeason(deps, board, season.id);
    }
    for (const season of await deps.storage.seasons.findClosedSince(new Date(nowMs - CLOSED_KEY_SWEEP_MS))) {
      const board = await deps.boards.find(season.boardId);
      if (board) await dropClosedKeys(deps, seasonBuckets(board, season));
    }
    // League rounds frozen but not closed (a crash between the freeze and the close), and players
    // who began to wait while a round's close was committing.
    await closePendingLeagueRounds(deps);
  }

  let running: Promise<void> | undefined;
  /** Passes never overlap: one asked for while another runs waits for it, then runs. */
  const serialPass = (): Promise<void> => {
    const next = (running ?? Promise.resolve()).then(pass);
    running = next.catch(() => undefined);
    return next;
  };
  const stopping = new AbortController();
  const loop =
    options.intervalMs === null
      ? Promise.resolve()
      : (async () => {
          try {
            // A first pass at once: the frozen lists are known (closedLists) from the start.
            await serialPass().catch((error: unknown) => deps.log.error({ err: error }, 'closing due buckets failed'));
            for await (const _ of every(options.intervalMs ?? 5_000, undefined, { signal: stopping.signal, ref: false })) {
              await serialPass().catch((error: unknown) => deps.log.error({ err: error }, 'closing due buckets failed'));
            }
          } catch (error) {
            // The timer ends with an AbortError when stopped; anything else is unexpected.
            if (!stopping.signal.aborted) deps.log.error({ err: error }, 'the bucket closer stopped');
          }
        })();
  return {
    pass: serialPass,
    async stop() {
      stopping.abort();
      await loop;
      await running;
    },
  };
}

/** When a frozen calendar list's standings go: its end plus the board's retention (null: kept for ever). */
function dropAtOf(board: Board, bucket: Bucket): number | null {
  return keptUntil(bucket, board.retention)?.getTime() ?? null;
}
