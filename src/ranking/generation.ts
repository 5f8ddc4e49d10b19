import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import type { RankingIndex } from './index.js';
import { type BoardBucket, bucketKey } from './keys.js';

/**
 * The index's generation: how a process tells that Redis lost the index (a restart without
 * persistence, a failover to an empty node, a flush), and which buckets may be read meanwhile.
 *
 * `lb:{generation}` holds a random id, set when a Redis holds no index yet and never set to
 * expire. A Redis without it has lost everything with it: the first process to notice sets a new
 * id together with that generation's pending set (`lb:{generation}:<id>:pending`) holding '*',
 * "every bucket is to be rebuilt" (see check-generation.ts). One process then plans the recovery,
 * replacing '*' with the buckets PostgreSQL holds board scores for (plan-recovery.ts), and removes
 * each bucket from the set once its rebuild is swapped in; the set is gone when all are back.
 * Every process reads the same set, so each learns when a bucket is back, whoever rebuilt it.
 *
 * This process's state:
 * - `unverified`: the connection dropped (or was never made) and the marker has not been read
 *   since. Redis may have come back empty, so no read is trusted until it is.
 * - `ready`: the marker is the one known and no recovery is pending: reads cost nothing extra.
 * - `recovering`: a recovery is under way: a bucket is read only once it is out of the pending set
 *   (one SMISMEMBER per read until the recovery ends).
 *
 * Run Redis with `maxmemory-policy noeviction` (the default): an evicted marker reads as a lost index.
 */
export type IndexState = 'unverified' | 'ready' | 'recovering';

export const GENERATION_KEY = 'lb:{generation}';

/** Means "every bucket" in a pending set: the recovery is not planned yet. Never a bucket key. */
const EVERY_BUCKET = '*';

/** The pending set of a generation's recovery; shares the marker's hash tag. */
export const pendingKey = (generation: string) => `${GENERATION_KEY}:${generation}:pending`;

/** A read of a bucket whose index is not known to be whole: answer UNAVAILABLE and retry later. */
export class IndexRecoveringError extends Error {
  constructor(readonly key: string) {
    super(`the ranking index of ${key} is not known to be whole yet (Redis came back, or lost its data and it is being rebuilt)`);
    this.name = 'IndexRecoveringError';
  }
}

/** What a reading of the marker found. */
export interface GenerationCheck {
  generation: string;
  /** Some bucket of this generation is still to be rebuilt. */
  recovering: boolean;
  /** This call set the marker: RedisClient had lost the index (or never held one). */
  claimed: boolean;
}

export type IndexGeneration = ReturnType<typeof createIndexGeneration>;

/** The generation as this process sees it; `unverified` until {@link IndexGeneration.check} first answers. */
export function createIndexGeneration(redis: RedisClient) {
  let state: IndexState = 'unverified';
  let generation: string | null = null;
  let checking: Promise<GenerationCheck> | undefined;
  // Whatever answers after a reconnect may be an empty Redis: nothing is trusted until checked.
  redis.on('close', () => {
    state = 'unverified';
  });

  async function pendingAmong(keys: string[]): Promise<boolean[]> {
    if (state === 'ready') return keys.map(() => false);
    if (state === 'unverified' || generation === null) return keys.map(() => true);
    const [all, ...found] = await redis.smismember(pendingKey(generation), EVERY_BUCKET, ...keys);
    return found.map((member) => all === 1 || member === 1);
  }

  return {
    /** This process's view: see {@link IndexState}. O(1). */
    state: (): IndexState => state,
    /** The generation in force as last read, or null before the first check. */
    generation: (): string | null => generation,

    /**
     * Reads the marker (setting a new generation when it is missing) and whether a recovery is
     * pending, and updates this process's state from it. Concurrent calls share one read. O(1).
     */
    check(): Promise<GenerationCheck> {
      checking ??= (async () => {
        try {
          const [found, recovering, claimed] = await redis.checkGeneration(GENERATION_KEY, randomUUID());
          generation = found;
          state = recovering === 1 ? 'recovering' : 'ready';
          return { generation: found, recovering: recovering === 1, claimed: claimed === 1 };
        } finally {
          checking = undefined;
        }
      })();
      return checking;
    },

    /**
     * Plans a generation's recovery: `buckets` are those PostgreSQL holds board scores for now.
     * Answers the keys still pending among them (see plan-recovery.ts). O(P + B).
     */
    async plan(forGeneration: string, buckets: BoardBucket[]): Promise<Set<string>> {
      const pending = await redis.planRecovery(pendingKey(forGeneration), ...buckets.map(bucketKey));
      if (pending.length === 0 && forGeneration === generation) state = 'ready';
      return new Set(pending);
    },

    /** Marks a bucket rebuilt in a generation: readable everywhere from now on. O(1). */
    async rebuilt(forGeneration: string, at: BoardBucket): Promise<void> {
      await redis.srem(pendingKey(forGeneration), bucketKey(at));
      const left = await redis.scard(pendingKey(forGeneration));
      if (left === 0 && forGeneration === generation && state === 'recovering') state = 'ready';
    },

    /** Calls `listener` each time the connection is ready again (after a reconnect); answers how to stop. */
    onReconnect(listener: () => void): () => void {
      redis.on('ready', listener);
      return () => void redis.off('ready', listener);
    },

    /** Calls `listener` with each connection error (ioredis reconnects by itself); answers how to stop. */
    onConnectionError(listener: (error: Error) => void): () => void {
      redis.on('error', listener);
      return () => void redis.off('error', listener);
    },

    /** Throws {@link IndexRecoveringError} unless the bucket's sorted set can be trusted. O(1) when ready. */
    async assertReadable(at: BoardBucket): Promise<void> {
      const key = bucketKey(at);
      const [pending] = await pendingAmong([key]);
      if (pending) throw new IndexRecoveringError(key);
    },

    /** Whether each bucket's sorted set can be trusted; false for all when that cannot be asked. O(k). */
    async readable(at: BoardBucket[]): Promise<boolean[]> {
      if (state === 'ready') return at.map(() => true);
      try {
        return (await pendingAmong(at.map(bucketKey))).map((pending) => !pending);
      } catch {
        return at.map(() => false);
      }
    },
  };
}

/**
 * The index with every read refused (IndexRecoveringError) for a bucket that cannot be trusted
 * yet, and every place a write reads back dropped for such a bucket: an empty or half-rebuilt
 * sorted set must never answer a wrong rank. Writes, removals and rebuilds go through unchanged (a
 * write into a bucket about to be rebuilt is carried by the rebuild, see rebuild.ts). Costs
 * nothing while the generation is ready.
 */
export function guardReads(index: RankingIndex, generation: IndexGeneration): RankingIndex {
  return {
    ...index,
    async writeBoardScores(writes) {
      const written = await index.writeBoardScores(writes);
      const readable = await generation.readable(writes.map((write) => write.at));
      return written.map((result, i) => (readable[i] ? result : { ...result, place: null }));
    },
    async top(at, limit) {
      await generation.assertReadable(at);
      return index.top(at, limit);
    },
    async standings(at, playerIds) {
      await generation.assertReadable(at);
      return index.standings(at, playerIds);
    },
    async around(at, playerId, radius) {
      await generation.assertReadable(at);
      return index.around(at, playerId, radius);
    },
    async page(at, after, first) {
      await generation.assertReadable(at);
      return index.page(at, after, first);
    },
    async size(at) {
      await generation.assertReadable(at);
      return index.size(at);
    },
  };
}
