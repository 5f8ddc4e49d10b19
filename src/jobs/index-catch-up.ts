import { setTimeout as sleep } from 'node:timers/promises';
import type { BacklogBoardScore } from '../db/index-backlog.js';
import type { BoardBucket, BoardScoreWrite } from '../ranking/index.js';
import type { Logger } from 'pino';
import type { Storage } from '../db/storage.js';
import type { RankingIndex } from '../ranking/index.js';
import type { TopCache } from '../ranking/top-cache.js';
import type { BoardDirectory } from '../services/board-directory.js';
import type { FlagChanges } from '../services/flag-changes.js';
import type { Metrics } from '../services/metrics.js';
import { takeOutFlaggedMeanwhile } from '../writes/flag-recheck.js';
import { takeOutSuspect } from '../writes/flags.js';
import { announceLeagueChanges } from '../pubsub/league-signal.js';
import { heldBuckets } from '../services/player-buckets.js';
import { hasClosed } from '../model/buckets.js';

/** What the index catch-up takes (8 members). */
export interface IndexCatchUpDeps {
  storage: Pick<Storage, 'backlog' | 'players'>;
  index: RankingIndex;
  boards: BoardDirectory;
  topCache: Pick<TopCache, 'invalidate'>;
  flagChanges: Pick<FlagChanges, 'read' | 'raised'>;
  metrics: Pick<Metrics, 'indexBacklog'>;
  now(): Date;
  log: Logger;
}

/**
 * The catch-up of the index outbox (see services/backlog-confirmer.ts, which has why an outbox):
 * the rows of committed batches the write path could not confirm, replayed into the index.
 */

export interface IndexCatchUpOptions {
  /** How often the backlog is looked at. Default 1,000 ms. */
  intervalMs?: number;
  /** How old a row must be before the job takes it: the write path confirms its own rows within milliseconds. Default 2,000 ms. */
  graceMs?: number;
  /** Backlog rows per transaction, each a committed group (up to the group commit's maxGroupWeight pairs). Default 10. */
  chunk?: number;
}

export interface IndexCatchUp {
  /** Stops the job and waits for a pass in progress. */
  stop(): Promise<void>;
}

/**
 * One chunk: claims the oldest backlog rows (FOR UPDATE SKIP LOCKED, so several processes share
 * the work), reads those players' current board scores on those boards (flagged players left
 * out), writes every one whose bucket is still kept and open (not closed: docs/closing.md) into the index with ZADD GT/LT (a replay is
 * harmless), and deletes the rows, in one transaction: should Redis fail, the rows stay for the
 * next pass; then tells cohortChanged watchers of the league rounds it wrote. Answers the rows handled.
 *
 * A player flagged while this runs: taken out again after the write, as the write path does (see
 * flag-recheck.ts), after the commit so that no backlog row lock is held while a player lock is awaited. A player erased
 * while this runs: the erasure deletes the player's backlog rows, which waits for this
 * transaction's row locks, so its removal from the index comes after this write.
 * O(R + S log N) for R rows and S board scores.
 */
export async function catchUpOnce(deps: IndexCatchUpDeps, { graceMs, chunk }: { graceMs: number; chunk: number }): Promise<number> {
  const { storage, index, log } = deps;
  const written = new Map<string, BoardBucket[]>();
  let claimedPlayers: string[] = [];
  const handled = await storage.backlog.replay({ graceMs, limit: chunk, keptAt: deps.now() }, async (scores, players) => {
    claimedPlayers = players;
    const byPlayer = new Map<string, BacklogBoardScore[]>();
    for (const row of scores) byPlayer.set(row.playerId, [...(byPlayer.get(row.playerId) ?? []), row]);
    const writes: BoardScoreWrite[] = [];
    const now = deps.now();
    for (const [playerId, rows] of byPlayer) {
      // A closed bucket is frozen from PostgreSQL, not from the index, and its keys are let go: not written back.
      const held = (await heldBuckets(deps, playerId, rows)).filter((at) => !hasClosed(at.board, at.bucket, now));
      written.set(playerId, held);
      for (const { board, bucket, region, expiresAt, score } of held) writes.push({ at: { board, bucket, region }, score, expiresAt });
    }
    await index.writeBoardScores(writes);
  });
  if (handled === 0) return 0;
  for (const buckets of written.values()) for (const at of buckets) deps.topCache.invalidate(at);
  // The index announced the tops it moved; a cohort can move anywhere below them, so its watchers are told as the write path tells them.
  await announceLeagueChanges(
    deps,
    [...written].flatMap(([playerId, buckets]) => buckets.map((at) => ({ at, playerId }))),
  );
  await takeOutFlaggedMeanwhile(deps, written);
  await takeOutFlaggedClaimed(deps, claimedPlayers);
  log.info({ rows: handled, players: written.size }, 'index caught up on committed results');
  return handled;
}

/**
 * The rows' players flagged now (their kept board scores were left out above), taken out of every view
 * as flagPlayer does: a group that flagged a player itself (a board's suspectAbove or suspectJump,
 * db/result-guards.ts) and stopped before it took them out leaves its backlog row unconfirmed, so
 * here is where their earlier board scores leave the index. A player flagged by hand was taken out
 * by flagPlayer already: removing them again changes nothing. One query a pass that handled rows
 * (the backlog is empty but after a failure); O(B log N) for each flagged player.
 */
async function takeOutFlaggedClaimed(deps: IndexCatchUpDeps, players: readonly string[]): Promise<void> {
  for (const playerId of await deps.storage.players.flaggedAmong(players)) await takeOutSuspect(deps, playerId);
}

/**
 * Runs {@link catchUpOnce} every `intervalMs`, chunk after chunk while there is more, until
 * stopped; a pass that fails (a store away) is logged and tried again at the next tick. Every
 * process may run it. Sets the leaderboard_index_backlog gauge after each pass.
 */
export function startIndexCatchUp(deps: IndexCatchUpDeps, options: IndexCatchUpOptions = {}): IndexCatchUp {
  const intervalMs = options.intervalMs ?? 1_000;
  const graceMs = options.graceMs ?? 2_000;
  const chunk = options.chunk ?? 10;
  const stopping = new AbortController();
  let failing = false;

  async function pass(): Promise<void> {
    try {
      for (let handled = chunk; handled === chunk && !stopping.signal.aborted;) {
        handled = await catchUpOnce(deps, { graceMs, chunk });
      }
      deps.metrics.indexBacklog.set(await deps.storage.backlog.count());
      failing = false;
    } catch (error) {
      // Logged once per outage, not once a second.
      if (!failing) deps.log.warn({ err: error }, 'index catch-up cannot run yet; tried again every second');
      failing = true;
    }
  }

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      await pass();
      await sleep(intervalMs, undefined, { signal: stopping.signal, ref: false }).catch(() => undefined);
    }
  })();

  return {
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}
