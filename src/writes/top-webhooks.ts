import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { RedisClient } from '../redis.js';
import type { BoardBucket } from '../ranking/index.js';
import { bucketKey, topWebhookSentKey, topWebhookWindowKey } from '../ranking/keys.js';
import type { TopCache, TopView } from '../ranking/top-cache.js';
import type { OutboxEvent } from '../db/webhook-outbox.js';
import type { StandingData, TopChangedData, WebhookInterest } from '../model/webhooks.js';
import { type TopChangedDeps, topBoardOf } from '../pubsub/top-changed.js';
import { topFingerprint } from '../pubsub/top-feed.js';
import type { ReadSides } from '../reads/read-side.js';
import { type ReadBucketDeps, closedNow } from '../services/buckets.js';

/**
 * TOP_CHANGED webhooks (issue 58): when a bucket's top changes and some webhook wants TOP_CHANGED
 * of its board, one event carrying the view topChanged sends (limit = the board's topSize), at
 * most one a second per bucket across every process, trailing edge.
 *
 * The index tells this part of every top change made in this process, whatever its cause (a
 * result, a flag, an erasure, a rebuild, a close, inactive players: RankingIndexOptions.topChanged).
 * The first change of a window claims the bucket's window in Redis (SET NX PX, one key a bucket,
 * expiring at the window's end); the process that claimed it reads the top once the window has
 * passed and writes the event. A change in any process while the window is claimed is covered by
 * that read, which comes after it, so the last change of a burst is always sent, and a burst of a
 * thousand changes in a second is one read and one event. A process that lost a claim is told how
 * long the window has left (PTTL, in the same step) and asks Redis nothing more until then.
 *
 * Never on a submission's path: the hook only starts the claim and returns; failures are logged,
 * and an event lost to one (or to a crash before the window's end) is not written again (the
 * design's rule: derived after the commit). Nothing is written while no webhook wants TOP_CHANGED
 * of the board (WebhookInterest: asked before anything else, O(1)). A window whose top is the one
 * last sent (a shard's top changed but not the merged top; a rebuild that moved nothing) writes
 * nothing. A closed bucket writes none: its close is BUCKET_CLOSED.
 */

export interface TopWebhookOptions {
  /**
   * How long a bucket's window lasts: at most one TOP_CHANGED per bucket per this many milliseconds.
   * @default 1000
   */
  windowMs?: number | undefined;
}

export interface TopWebhookDeps extends Pick<TopChangedDeps, 'boards' | 'profiles'>, Pick<ReadBucketDeps, 'frozen' | 'seasons' | 'now'> {
  /** Whether some webhook wants a board's TOP_CHANGED (services/webhook-directory.ts). */
  interest: WebhookInterest;
  /** Where windows are claimed across processes, and the last top sent remembered. */
  redis: Pick<RedisClient, 'multi' | 'set' | 'del'>;
  /** The process's top cache: the window's read refreshes it, as a topChanged read does. */
  topCache: Pick<TopCache, 'refresh'>;
  /** The read side: the standings' achievedAt, as a topChanged subscriber's Standing.achievedAt is resolved. */
  reads: Pick<ReadSides, 'forRequest'>;
  /** Writes the event to the outbox (db/webhook-outbox.ts enqueueWebhookEvents). */
  enqueue: (events: OutboxEvent[]) => Promise<number>;
  log: Logger;
}

/** How long the fingerprint of the last top sent is kept: a top unchanged for longer may be sent again, once. */
const SENT_MEMORY_MS = 24 * 60 * 60_000;
/**
 * How long after the window's key expires its claimer reads: a timer may fire a millisecond early,
 * and a read before the key is gone could miss a change another process left to it.
 */
const EXPIRY_MARGIN_MS = 5;

/** What a window compares, as topChanged's viewers do (top-feed.ts), hashed. */
const fingerprint = (view: TopView) => createHash('sha1').update(topFingerprint(view)).digest('base64url');

/** What this process knows of one bucket's window. */
interface Window {
  at: BoardBucket;
  /** performance.now() until which a change here is covered by a claimed window: ours until its read starts, another's until its key expires. */
  coveredUntil: number;
  /** A claim on its way to Redis. */
  claiming: boolean;
  /** A change came while the claim was on its way (it may fall after another process's window). */
  again: boolean;
  /** This process's claimed window, ending in a read. */
  timer?: NodeJS.Timeout | undefined;
}

export function createTopWebhooks(deps: TopWebhookDeps, options: TopWebhookOptions = {}) {
  const windowMs = options.windowMs ?? 1_000;
  const windows = new Map<string, Window>();
  const inFlight = new Set<Promise<void>>();
  let stopped = false;

  const track = (work: Promise<void>) => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };

  /** Forgets a window no longer covering anything, so the map holds only buckets changing now. */
  function forgetAt(key: string, window: Window): void {
    const left = window.coveredUntil - performance.now();
    setTimeout(
      () => {
        if (windows.get(key) === window && !window.claiming && !window.timer) windows.delete(key);
      },
      Math.max(left, 0),
    ).unref();
  }

  function claim(key: string, window: Window): void {
    window.claiming = true;
    window.again = false;
    const sentAt = performance.now();
    const name = topWebhookWindowKey(window.at);
    const work = deps.redis
      .multi()
      .set(name, '1', 'PX', windowMs, 'NX')
      .pttl(name)
      .exec()
      .then((replies) => {
        window.claiming = false;
        if (replies?.[0]?.[1] === 'OK') return own(key, window);
        // Another process holds the window: its read comes after the key expires, so after every
        // change made here before then (measured from when the question was sent, never later).
        window.coveredUntil = sentAt + Math.max(Number(replies?.[1]?.[1] ?? 0), 0);
        if (window.again && performance.now() >= window.coveredUntil) return claim(key, window);
        forgetAt(key, window);
      })
      .catch((error: unknown) => {
        window.claiming = false;
        windows.delete(key);
        deps.log.warn({ err: error, bucket: key }, 'could not claim a TOP_CHANGED window; that change sends no webhook');
      });
    track(work);
  }

  /** This process claimed the window: it reads and sends at its end (at once when stopping). */
  function own(key: string, window: Window): void {
    window.coveredUntil = Infinity;
    if (stopped) return flush(key, window, true);
    window.timer = setTimeout(() => flush(key, window, false), windowMs + EXPIRY_MARGIN_MS);
    window.timer.unref();
  }

  /**
   * The window's end: from here a change claims a new window (this read may not see it). `early`
   * (stopping): the claim is released first, for the same reason.
   */
  function flush(key: string, window: Window, early: boolean): void {
    clearTimeout(window.timer);
    window.timer = undefined;
    if (windows.get(key) === window) windows.delete(key);
    const work = (async () => {
      if (early) await deps.redis.del(topWebhookWindowKey(window.at));
      await send(window.at);
    })().catch((error: unknown) => deps.log.error({ err: error, bucket: key }, 'could not write a TOP_CHANGED webhook event'));
    track(work);
  }

  /** Reads the bucket's top now and writes it as TOP_CHANGED, unless the bucket is closed or it is the top last sent. */
  async function send(at: BoardBucket): Promise<void> {
    if (await closedNow(deps, at)) return;
    // Every write before now, wherever the top is read from (a replica must have caught up).
    const view = await deps.topCache.refresh(at, at.board.topSize, { since: Date.now() });
    const seen = fingerprint(view);
    // A board deleted meanwhile (deleteBoard) gets no event, and no key of it is written again.
    if ((await deps.boards.find(at.board.id))?.createdAt.getTime() !== at.board.createdAt.getTime()) return;
    if ((await deps.redis.set(topWebhookSentKey(at), seen, 'PX', SENT_MEMORY_MS, 'GET')) === seen) return;
    const board = await topBoardOf(deps, { at, view, source: view });
    const read = deps.reads.forRequest(performance.now());
    const entries = await Promise.all(
      board.entries.map(async (standing): Promise<StandingData> => ({
        rank: standing.rank,
        playerId: standing.playerId,
        displayName: standing.player?.displayName ?? null,
        score: standing.score,
        achievedAt: (await read.achievedAt(standing)).toISOString(),
        ...(standing.tieBreakValues?.length && { tieBreakValues: [...standing.tieBreakValues] }),
      })),
    );
    const data: TopChangedData = {
      boardId: board.boardId,
      period: board.period,
      bucket: board.bucket,
      region: board.region,
      startsAt: board.startsAt?.toISOString() ?? null,
      endsAt: board.endsAt?.toISOString() ?? null,
      entries,
      size: board.size,
      asOf: board.asOf.toISOString(),
    };
    await deps.enqueue([{ type: 'TOP_CHANGED', boardId: at.board.id, data, at: deps.now() }]);
  }

  return {
    /**
     * Told of buckets whose top just changed (RankingIndexOptions.topChanged). Returns at once:
     * O(1) a bucket no webhook wants or whose window is claimed already; otherwise one Redis call
     * started, not awaited.
     */
    changed(buckets: readonly BoardBucket[]): void {
      for (const at of buckets) {
        if (stopped || !deps.interest.wants(at.board.id, 'TOP_CHANGED')) continue;
        const key = bucketKey(at);
        let window = windows.get(key);
        if (window && performance.now() < window.coveredUntil) continue;
        if (!window) windows.set(key, (window = { at, coveredUntil: -Infinity, claiming: false, again: false }));
        if (window.claiming) window.again = true;
        else claim(key, window);
      }
    },

    /**
     * Forgets the windows of a deleted board (deleteBoard, writes/board-deletion.ts): those this
     * process holds are not sent. O(windows).
     */
    forgetBoard(boardId: string): void {
      for (const [key, window] of [...windows]) {
        if (window.at.board.id !== boardId) continue;
        clearTimeout(window.timer);
        window.timer = undefined;
        windows.delete(key);
      }
    },

    /**
     * Stops: later changes are not followed; the windows this process holds are sent now, their
     * claims released first (so a change another process makes after that claims a window of its
     * own), and the claims and writes under way are waited for. So no claimed window is dropped.
     */
    async stop(): Promise<void> {
      stopped = true;
      for (const [key, window] of [...windows]) if (window.timer) flush(key, window, true);
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}

export type TopWebhooks = ReturnType<typeof createTopWebhooks>;
