import { hasClosed, isKept, parseBucketLabel } from '../model/buckets.js';
import { type BoardBucket, RebuildRunningError } from '../ranking/index.js';
import type { GenerationCheck } from '../ranking/generation.js';
import { bucketKey } from '../ranking/keys.js';
import { CLOCK_SKEW_MS } from '../services/buckets.js';
import type { Logger } from 'pino';
import type { Storage } from '../db/storage.js';
import type { RankingIndex } from '../ranking/index.js';
import type { TopCache } from '../ranking/top-cache.js';
import type { BoardDirectory } from '../services/board-directory.js';
import type { SeasonDirectory } from '../services/season-directory.js';
import type { IndexGeneration } from '../ranking/generation.js';
import { seasonBucket } from '../services/season-directory.js';
import { rebuildBucket } from '../writes/rebuild-bucket.js';
import { keptDerivedBuckets } from '../writes/board-buckets.js';

/** What the index recovery takes (8 members). */
export interface IndexRecoveryDeps {
  storage: Pick<Storage, 'boardScores' | 'readSourceMark' | 'whileHoldingSessionLock'>;
  index: RankingIndex;
  indexGeneration: IndexGeneration;
  topCache: Pick<TopCache, 'invalidate'>;
  boards: BoardDirectory;
  seasons: SeasonDirectory;
  now(): Date;
  log: Logger;
}

/** The advisory lock (bigint space) held by the one process that rebuilds a lost index. */
export const RECOVERY_LOCK = 7_361_203;

export interface IndexRecoveryOptions {
  /** How often the generation marker is read (it is also read at once after every reconnect). Default 1,000 ms. */
  intervalMs?: number;
  /** Buckets rebuilt at once during a recovery, each read by one connection of the pool. Default 4. */
  concurrency?: number;
}

export interface IndexRecovery {
  /** Settles once the first check is done and, when this process leads a recovery, its plan is set. */
  ready: Promise<void>;
  /** Stops watching; a recovery under way finishes its current buckets first. */
  stop(): Promise<void>;
}

const PERIOD_ORDER: Record<string, number> = { ALL_TIME: 0, SEASON: 1, DAILY: 2, WEEKLY: 3, MONTHLY: 4 };

/**
 * Every bucket PostgreSQL holds board scores for that is still live: ALL_TIME, the open seasons,
 * and calendar buckets within their retention and not closed (for those derived from the log, every one the
 * calendar keeps: an empty one is rebuilt empty, at the cost of a look at its span). Most wanted first: ALL_TIME, then the season, then
 * the newest calendar buckets, each global list before its regions. One query for the lists; board
 * definitions and open seasons come from the process's directories. O(L log N).
 */
export async function liveBucketsWithScores(deps: Pick<IndexRecoveryDeps, 'storage' | 'boards' | 'seasons' | 'now'>): Promise<BoardBucket[]> {
  const now = deps.now();
  const out: BoardBucket[] = [];
  for (const board of await deps.boards.list()) out.push(...(await keptDerivedBuckets(deps, board)));
  for (const list of await deps.storage.boardScores.lists()) {
    const board = await deps.boards.find(list.boardId);
    if (!board) continue;
    const region = list.region === '' ? null : list.region;
    if (list.period === 'SEASON') {
      const season = (await deps.seasons.live(board.id)).find((live) => live.id === list.bucket);
      if (season) out.push({ board, bucket: seasonBucket(season), region });
      continue;
    }
    const bucket = parseBucketLabel(board, list.period, list.bucket, region);
    if (bucket && isKept(bucket, board.retention, now, CLOCK_SKEW_MS)) out.push({ board, bucket, region });
  }
  // A closed bucket's standings are frozen in PostgreSQL and read from there: its index is not
  // rebuilt, so Redis holds open buckets only (docs/closing.md).
  return out
    .filter((at) => !hasClosed(at.board, at.bucket, now))
    .sort(
      (a, b) =>
        PERIOD_ORDER[a.bucket.period]! - PERIOD_ORDER[b.bucket.period]! ||
        b.bucket.start.getTime() - a.bucket.start.getTime() ||
        Number(a.region !== null) - Number(b.region !== null),
    );
}

/** Runs `work` over `items`, `concurrency` at a time, stopping early when `keepGoing` turns false. */
async function eachLimited<T>(items: T[], concurrency: number, keepGoing: () => boolean, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length && keepGoing()) await work(items[next++]!);
  });
  await Promise.all(lanes);
}

/**
 * Rebuilds what the masters in `lost` lost, when this process wins the recovery lock: plans each
 * one's recovery (the live buckets PostgreSQL holds scores for with a key on that master) and
 * rebuilds each bucket still pending on any of them once, most wanted first, marking it readable
 * on each once swapped in. The buckets of the other masters are not touched. A bucket that fails
 * (a store away, a rebuild of it already running) stays pending and is tried again at the next
 * pass. The lock is a session lock on a connection of its own: should this process die, it is let
 * go and another process's next pass takes the recovery over where it stands. `planned` is called
 * once the plans are set. O(N log N) over the board scores of the buckets rebuilt.
 */
async function recover(deps: IndexRecoveryDeps, lost: GenerationCheck[], concurrency: number, planned: () => void, stopping: AbortSignal): Promise<void> {
  const { storage, indexGeneration, log } = deps;
  await storage.whileHoldingSessionLock(RECOVERY_LOCK, async () => {
    const buckets = await liveBucketsWithScores(deps);
    const plans = await Promise.all(lost.map(async (node) => ({ node, pending: await indexGeneration.plan(node, buckets) })));
    planned();
    const todo = buckets.filter((at) => plans.some(({ pending }) => pending.has(bucketKey(at))));
    if (todo.length === 0) return;
    const started = performance.now();
    const nodes = lost.map(({ address, claimed }) => ({ address, claimed }));
    // Every result recorded leaves an ALL_TIME board score, the only source of ALL_TIME buckets
    // here: without one, nothing was recorded, so nothing was lost (a new deployment's first start).
    const level = buckets.some((at) => at.bucket.period === 'ALL_TIME') ? 'warn' : 'info';
    if (level === 'warn')
      log.warn({ nodes, buckets: todo.length }, 'the ranking index was lost on these Redis nodes; rebuilding their live buckets from PostgreSQL');
    else log.info({ nodes, buckets: todo.length }, 'nothing recorded in PostgreSQL yet: setting up the live buckets of a new ranking index');
    let rebuilt = 0;
    await eachLimited(
      todo,
      concurrency,
      () => !stopping.aborted && lost.some((node) => indexGeneration.isCurrent(node)),
      async (at) => {
        const key = bucketKey(at);
        try {
          // One reader a bucket: the lanes already read `concurrency` buckets at once, and two
          // readers each would hold most of the pool (see StreamBoardScoresOptions.readers).
          await rebuildBucket(deps, at, { readers: 1 });
          for (const { node, pending } of plans) if (pending.has(key)) await indexGeneration.rebuilt(node, at);
          rebuilt++;
        } catch (error) {
          const running = error instanceof RebuildRunningError;
          log[running ? 'info' : 'error']({ err: error, key }, 'a bucket of the lost index is not rebuilt yet; tried again shortly');
        }
      },
    );
    log[level]({ nodes, rebuilt, of: todo.length, ms: Math.round(performance.now() - started) }, 'ranking index recovery pass done');
  });
}

/**
 * Watches the index's generation (see ranking/generation.ts): every `intervalMs`, and at once
 * whenever the Redis connection is back, it reads the marker; when Redis lost the index, or a
 * recovery is pending, it takes part in the recovery (one process rebuilds, under a PostgreSQL
 * advisory lock; the others wait for their buckets to come back). Nothing to start by hand.
 */
export function startIndexRecovery(deps: IndexRecoveryDeps, options: IndexRecoveryOptions = {}): IndexRecovery {
  const intervalMs = options.intervalMs ?? 1_000;
  const concurrency = options.concurrency ?? 4;
  const { indexGeneration, log } = deps;
  const stopping = new AbortController();
  let recovering: Promise<void> | undefined;
  let passing: Promise<void> | undefined;

  /** Whether PostgreSQL holds any board score; when it cannot say, it may (so a loss is still a warning). */
  const recordedAny = () =>
    deps.storage.boardScores.lists().then(
      (lists) => lists.length > 0,
      () => true,
    );

  /** One check; starts a recovery when one is pending and none runs here. Settles once a started recovery is planned. */
  function pass(): Promise<void> {
    passing ??= (async () => {
      try {
        // PostgreSQL's mark, so that a database restored from a backup (behind the index) is noticed; when it does not answer, Redis alone is checked.
        const source = await deps.storage.readSourceMark().catch(() => undefined);
        const found = await indexGeneration.check(source);
        for (const { address, generation, claimed } of found) {
          if (claimed === 'restored') {
            log.warn(
              { node: address, generation },
              'PostgreSQL went back (restored from a backup, or another database): the index holds what it no longer has; a new generation begins and every live bucket is rebuilt from PostgreSQL',
            );
            // Before anything is rebuilt or written there (at start, before the process listens): buckets PostgreSQL has no scores for go.
            const dropped = await indexGeneration.dropUnbacked(address, await liveBucketsWithScores(deps));
            log.warn({ node: address, dropped }, 'dropped the buckets PostgreSQL no longer backs');
          }
          if (claimed === 'empty' && (await recordedAny()))
            log.warn({ node: address, generation }, 'a Redis node holds no ranking index (restarted empty, flushed, or new): a new generation begins there');
          else if (claimed === 'empty') log.info({ node: address, generation }, 'a new ranking index: nothing recorded in PostgreSQL yet, nothing lost');
          if (claimed === 'failed-over')
            log.warn({ node: address, generation }, 'a Redis replica took over a master and may lack its last writes: a new generation begins there');
        }
        const lost = found.filter((node) => node.recovering);
        if (lost.length === 0 || recovering || stopping.signal.aborted) return;
        let planned!: () => void;
        const plan = new Promise<void>((resolve) => (planned = resolve));
        recovering = recover(deps, lost, concurrency, planned, stopping.signal)
          .catch((error: unknown) => log.error({ err: error }, 'index recovery failed; tried again shortly'))
          .finally(() => {
            planned();
            recovering = undefined;
          });
        await plan;
      } catch (error) {
        log.debug({ err: error }, 'could not read the index generation');
      } finally {
        passing = undefined;
      }
    })();
    return passing;
  }

  const onReady = () => {
    if (lostAt !== undefined) log.warn({ downMs: Math.round(performance.now() - lostAt) }, 'Redis answers again');
    lostAt = undefined;
    void pass();
  };
  // Once per outage, not once per failed reconnect.
  let lostAt: number | undefined;
  const onError = (error: Error) => {
    if (lostAt === undefined) log.warn({ err: error }, 'lost the connection to Redis; reads of the index answer UNAVAILABLE until it is back');
    lostAt ??= performance.now();
  };
  const stopWatching = indexGeneration.onReconnect(onReady);
  const stopHearing = indexGeneration.onConnectionError(onError);
  const timer = setInterval(() => void pass(), intervalMs);
  timer.unref();
  return {
    ready: pass(),
    async stop() {
      stopping.abort();
      clearInterval(timer);
      stopWatching();
      stopHearing();
      await passing;
      await recovering;
    },
  };
}
