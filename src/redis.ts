import { type Cluster, Redis } from 'ioredis';

/**
 * A connection to the index's Redis: one node, or a Redis Cluster. Everything outside this module
 * takes this type, so each piece works on both.
 */
export type RedisClient = Redis | Cluster;

export interface RedisClientOptions {
  /** Prefix of every key, so that several deployments (or test runs) share one Redis. Default ''. */
  keyPrefix?: string;
  /** How long a command may take before it fails. Default 2,000 ms. */
  commandTimeoutMs?: number;
}

/**
 * A Redis client that fails fast while the server is away instead of queueing commands: a
 * submission is then answered from PostgreSQL alone and a read answers UNAVAILABLE, rather than
 * both hanging. It reconnects by itself. Call connect() before use.
 */
export function createRedis(url: string, options: RedisClientOptions = {}): Redis {
  return new Redis(url, {
    lazyConnect: true,
    keyPrefix: options.keyPrefix ?? '',
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: options.commandTimeoutMs ?? 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
  });
}

/**
 * Deletes every key under a prefix (a test run's, a benchmark's). It lists them with a client of
 * its own, without a key prefix, because ioredis does not prefix SCAN patterns. O(keys).
 */
export async function deleteKeysUnder(url: string, prefix: string, options: Pick<RedisClientOptions, 'commandTimeoutMs'> = {}): Promise<void> {
  const plain = createRedis(url, options);
  await plain.connect();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await plain.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await plain.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await plain.quit();
  }
}
