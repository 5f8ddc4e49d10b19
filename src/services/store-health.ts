import type { Storage } from '../db/storage.js';
import { type RedisClient, isCluster, mastersOf } from '../redis.js';

/** How long a probe waits for each store. */
const PROBE_TIMEOUT_MS = 1_000;

/** One store's answer to a probe. */
export interface StoreProbe {
  up: boolean;
  /** How long it took to answer (or to fail). */
  ms: number;
  /** Why it is down. */
  error: string | null;
}

export interface StoreProbes {
  postgres: StoreProbe;
  redis: StoreProbe;
}

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Whether Redis answers: the node PINGs; on a Cluster, the cluster says it is whole (cluster_state:ok,
 * every slot served) and every master PINGs, since a master away leaves its buckets unreadable.
 * O(masters).
 */
async function redisAnswers(redis: RedisClient): Promise<void> {
  if (!isCluster(redis)) {
    await redis.ping();
    return;
  }
  if (redis.status !== 'ready') throw new Error(`the cluster client is ${redis.status}`);
  const info = await redis.cluster('INFO');
  if (!/^cluster_state:ok\b/m.test(info)) throw new Error('the cluster is not whole');
  await Promise.all(mastersOf(redis).map((master) => master.ping()));
}

async function probe(work: () => Promise<unknown>): Promise<StoreProbe> {
  const started = performance.now();
  try {
    await within(work(), PROBE_TIMEOUT_MS);
    return { up: true, ms: performance.now() - started, error: null };
  } catch (error) {
    return { up: false, ms: performance.now() - started, error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Asks PostgreSQL (a transaction: BEGIN and COMMIT are what a submission needs to get through) and
 * Redis (see redisAnswers) at once, each within a second: what /readyz and the console show.
 */
export async function probeStores(stores: { storage: Pick<Storage, 'ping'>; redis: RedisClient }): Promise<StoreProbes> {
  const [postgres, redis] = await Promise.all([probe(() => stores.storage.ping()), probe(() => redisAnswers(stores.redis))]);
  return { postgres, redis };
}
