import { setTimeout as sleep } from 'node:timers/promises';
import { activeSince } from '../db/activity.js';
import type { Board } from '../model/board.js';
import { keptUntil } from '../model/buckets.js';
import { liveBuckets } from '../writes/board-buckets.js';
import { boardScoreList } from '../services/buckets.js';
import type { Logger } from 'pino';
import type { Storage } from '../db/storage.js';
import type { RankingIndex } from '../ranking/index.js';
import type { TopCache } from '../ranking/top-cache.js';
import type { BoardDirectory } from '../services/board-directory.js';
import type { SeasonDirectory } from '../services/season-directory.js';
import type { Metrics } from '../services/metrics.js';
import type { BoardBucket, BoardScoreWrite } from '../ranking/index.js';
import { bucketKey } from '../ranking/keys.js';

/**
 * Inactive players out of memory (issue 54): on a board with inactiveAfterDays, a player with no
 * result on the board achieved in that many days leaves its ALL_TIME and SEASON sorted sets (every
 * region's, every shard's). Their scores stay in PostgreSQL. While out they are neither ranked nor
 * counted: every read (size, ranks, around, pages, friends, a DENSE board's distinct scores) reads
 * the sorted sets. They come back with their next result (the write path writes the board score as
 * it stands after it, their stored best) or a rebuild (which reads the whole list from PostgreSQL;
 * the next pass takes them out again). DAILY, WEEKLY and MONTHLY keys expire on their own.
 *
 * A pass scans each such sorted set with ZSCAN, `batch` members a step, asks PostgreSQL which of
 * them are still active (db/activity.ts), and removes the others in one script call per step, each
 * only while it holds the value the scan read (remove-inactive.ts), then pauses `pauseMs`: Redis
 * is never busy with this for more than one small script at a time. A result recorded meanwhile
 * cannot be lost: the removed players are asked about once more after the removal, and those
 * active by then are written back from PostgreSQL; a result committed after that second look is
 * written to the index after its commit, so after the removal.
 *
 * One process of the deployment runs a pass at a time (a PostgreSQL session advisory lock); the
 * others skip their turn while it is held.
 */

/** The advisory lock (bigint space) held by the one process running a pass. */
export const INACTIVE_PLAYERS_LOCK = 7_361_254;

export interface InactivePlayersOptions {
  /** How often a pass runs; one also runs at start. Default 3,600,000 ms (hourly). */
  intervalMs?: number;
  /**
   * How soon a pass that skipped a bucket (Redis or PostgreSQL away, or the index being recovered,
   * whose rebuild brings every inactive player back) is followed by the next. Default 60,000 ms.
   */
  retryMs?: number;
  /** Members read and checked per step (one ZSCAN, one query, one script call). Default 500. */
  batch?: number;
  /** The pause between two steps, so that the job never holds Redis for long. Default 20 ms. */
  pauseMs?: number;
}

/** What one pass did. */
export interface InactivePass {
  /** False when another process held the lock: this one did nothing. */
  ran: boolean;
  /** Members taken out (each bucket's, region's and shard's counted apart), those written back at once not counted. */
  removed: number;
  /** Members written back because a result arrived between the check and the removal. */
  returned: number;
  /** Buckets not passed over (a store away, or the bucket not readable yet): the next pass comes sooner. */
  skipped: number;
}

export interface PassOptions {
  /** See InactivePlayersOptions.batch. */
  batch?: number | undefined;
  /** See InactivePlayersOptions.pauseMs. */
  pauseMs?: number | undefined;
  signal?: AbortSignal;
  /** Called between a step's check and its removal, with the ids about to be removed: for tests that land a result there. */
  beforeRemoval?: (playerIds: string[]) => Promise<void> | void;
  /** Called after each step, with the bucket key: for tests that hold a pass open. */
  afterStep?: (key: string) => Promise<void> | void;
}

/** What the inactive-players job takes (8 members). */
export interface InactivePlayersDeps {
  storage: Pick<Storage, 'players' | 'boardScores' | 'whileHoldingSessionLock'>;
  /** Its removals and write-backs, and the scans that find whom to remove, on the masters. */
  masterIndex: RankingIndex;
  topCache: Pick<TopCache, 'invalidate'>;
  boards: Pick<BoardDirectory, 'list'>;
  seasons: SeasonDirectory;
  metrics: Pick<Metrics, 'inactivePlayersRemoved'>;
  now(): Date;
  log: Logger;
}

/** The buckets inactive players leave: the board's ALL_TIME and open SEASON, globally and per region. */
async function bucketsOf(deps: InactivePlayersDeps, board: Board): Promise<BoardBucket[]> {
  return (await liveBuckets(deps, board)).filter((at) => at.bucket.period === 'ALL_TIME' || at.bucket.period === 'SEASON');
}

/**
 * Writes back, from PostgreSQL, the players of `playerIds` that are ranked there (flagged players
 * left out): those who turned active between the job's check and its removal. O(k log N).
 */
async function writeBack(deps: InactivePlayersDeps, at: BoardBucket, playerIds: string[]): Promise<number> {
  const flagged = await deps.storage.players.flaggedAmong(playerIds);
  const shown = playerIds.filter((id) => !flagged.has(id));
  const scores = await deps.storage.boardScores.find(boardScoreList(at), shown);
  const expiresAt = keptUntil(at.bucket, at.board.retention);
  const writes: BoardScoreWrite[] = [...scores.values()].map((score) => ({ at, score, expiresAt }));
  await deps.masterIndex.writeBoardScores(writes);
  return writes.length;
}

/** One bucket's pass, shard by shard, `batch` members a step. */
async function passBucket(deps: InactivePlayersDeps, at: BoardBucket, since: Date, options: PassOptions & { batch: number; pauseMs: number }) {
  const { storage, masterIndex: index } = deps;
  const board = at.board;
  let removed = 0;
  let returned = 0;
  let topChanged = false;
  for (let shard = 0; shard < board.shards; shard++) {
    let cursor = '0';
    do {
      options.signal?.throwIfAborted();
      const step = await index.scanShard(at, shard, cursor, options.batch);
      cursor = step.cursor;
      const ids: string[] = [];
      for (let i = 0; i < step.pairs.length; i += 2) ids.push(step.pairs[i]!);
      if (ids.length > 0) {
        const active = await storage.boardScores.activeAmong(board.id, at.region, ids, since);
        const candidates: string[] = [];
        for (let i = 0; i < step.pairs.length; i += 2) if (!active.has(step.pairs[i]!)) candidates.push(step.pairs[i]!, step.pairs[i + 1]!);
        if (candidates.length > 0) {
          await options.beforeRemoval?.(candidates.filter((_, k) => k % 2 === 0));
          const out = await index.removeInactive(at, shard, candidates);
          topChanged ||= out.topChanged;
          // A result achieved since the cutoff and committed between the check and the removal:
          // its index write may have come before the removal. Asked again, and written back.
          const back = out.removed.length > 0 ? [...(await storage.boardScores.activeAmong(board.id, at.region, out.removed, since))] : [];
          if (back.length > 0) returned += await writeBack(deps, at, back);
          removed += out.removed.length - back.length;
        }
      }
      await options.afterStep?.(bucketKey(at));
      if (cursor !== '0' && options.pauseMs > 0) await sleep(options.pauseMs, undefined, { ref: false });
    } while (cursor !== '0');
  }
  if (topChanged) {
    deps.topCache.invalidate(at);
    await index.announceTopChanged([at]);
  }
  return { removed, returned };
}

/**
 * One pass over every board with inactiveAfterDays, when this process wins the lock (answers
 * ran: false at once otherwise). A bucket that cannot be read yet (the index is being recovered)
 * is skipped until the next pass. O(M) for M members of the buckets passed over, in M / batch
 * steps.
 */
export async function removeInactiveOnce(deps: InactivePlayersDeps, options: PassOptions = {}): Promise<InactivePass> {
  const settings = { ...options, batch: options.batch ?? 500, pauseMs: options.pauseMs ?? 20 };
  const pass: InactivePass = { ran: false, removed: 0, returned: 0, skipped: 0 };
  pass.ran = await deps.storage.whileHoldingSessionLock(INACTIVE_PLAYERS_LOCK, async () => {
    for (const board of await deps.boards.list()) {
      if (!board.inactiveAfterDays) continue;
      const since = activeSince(deps.now(), board.inactiveAfterDays);
      let removedHere = 0;
      for (const at of await bucketsOf(deps, board)) {
        try {
          const { removed, returned } = await passBucket(deps, at, since, settings);
          removedHere += removed;
          pass.returned += returned;
        } catch (error) {
          if (options.signal?.aborted) throw error;
          pass.skipped++;
          deps.log.warn({ err: error, key: bucketKey(at) }, 'inactive players: a bucket was not passed over; tried again at the next pass');
        }
      }
      pass.removed += removedHere;
      if (removedHere > 0) {
        deps.metrics.inactivePlayersRemoved.inc({ board: board.id }, removedHere);
        deps.log.info({ board: board.id, removed: removedHere, inactiveAfterDays: board.inactiveAfterDays }, 'inactive players taken out of the index');
      }
    }
  });
  return pass;
}

export interface InactivePlayers {
  /** Stops the job; a pass under way stops after its current step. */
  stop(): Promise<void>;
}

/** Runs {@link removeInactiveOnce} at start and every `intervalMs`, until stopped; after a pass that failed or skipped a bucket (a store away, an index recovery under way), again after `retryMs`. */
export function startInactivePlayers(deps: InactivePlayersDeps, options: InactivePlayersOptions = {}): InactivePlayers {
  const intervalMs = options.intervalMs ?? 3_600_000;
  const retryMs = options.retryMs ?? 60_000;
  const stopping = new AbortController();
  const loop = (async () => {
    while (!stopping.signal.aborted) {
      let wait = intervalMs;
      try {
        const pass = await removeInactiveOnce(deps, { batch: options.batch, pauseMs: options.pauseMs, signal: stopping.signal });
        if (pass.skipped > 0) wait = Math.min(intervalMs, retryMs);
      } catch (error) {
        if (!stopping.signal.aborted) deps.log.warn({ err: error }, 'inactive players: the pass failed; tried again shortly');
        wait = Math.min(intervalMs, retryMs);
      }
      await sleep(wait, undefined, { signal: stopping.signal, ref: false }).catch(() => undefined);
    }
  })();
  return {
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}
