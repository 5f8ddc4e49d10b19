import { Cluster, type ClusterOptions, Redis } from 'ioredis';

/**
 * A connection to the index's Redis: one node, or a Redis Cluster. Everything outside this module
 * takes this type, so each piece works on both.
 */
export type RedisClient = Redis | Cluster;

/** One node of a Redis Cluster: the seeds REDIS_CLUSTER_NODES lists. */
export interface RedisNodeAddress {
  host: string;
  port: number;
}

/**
 * Where the index lives: one node's URL (`redis://` or `rediss://`), or the seed nodes of a Redis
 * Cluster (any few of its nodes; the client learns the rest from them).
 */
export type RedisTarget = string | { cluster: RedisNodeAddress[] };

export interface RedisClientOptions {
  /** Prefix of every key, so that several deployments (or test runs) share one Redis. Default ''. */
  keyPrefix?: string;
  /** How long a command may take before it fails. Default 2,000 ms. */
  commandTimeoutMs?: number;
  /**
   * A Cluster client only: which node of a slot a read-only command goes to (ioredis's
   * `scaleReads`). Default 'master'. A client that reads from replicas is the replicas' own (see
   * ranking/replicas.ts), never the one that writes.
   */
  scaleReads?: ClusterOptions['scaleReads'];
}

/** Reconnection backoff, shared by both kinds of client: 100 ms more per attempt, at most 2 s. */
const backoff = (attempt: number) => Math.min(attempt * 100, 2_000);

/**
 * A Redis client that fails fast while the server is away instead of queueing commands: a
 * submission is then answered from PostgreSQL alone and a read answers UNAVAILABLE, rather than
 * both hanging. It reconnects by itself. Call connect() before use.
 */
export function createRedis(url: string, options: RedisClientOptions = {}): Redis {
  return new Redis(url, {
    lazyConnect: true,
    // Commands issued in the same tick go out in one write: fewer, larger socket writes (see bench/RESULTS.md);
    // reads already gathered per turn are sent at once instead (sendAtOnce).
    enableAutoPipelining: true,
    keyPrefix: options.keyPrefix ?? '',
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: options.commandTimeoutMs ?? 2_000,
    retryStrategy: backoff,
  });
}

/**
 * A Redis Cluster client with the same fail-fast behaviour as {@link createRedis}: no offline
 * queue (a command while the cluster is not ready fails at once), the same command timeout per
 * node, and reconnection by itself. A command to a master that went away is retried for about
 * 1.6 s (16 redirections 100 ms apart, ioredis's defaults), the time a replica needs to take over
 * with a short cluster-node-timeout, then fails. Reads go to masters only (`scaleReads: 'master'`)
 * unless `options.scaleReads` says otherwise: a replica lags, and the writes' ranks must be exact,
 * so only the replica reads' own client (ranking/replicas.ts) sends read-only commands to replicas,
 * which ioredis then connects in READONLY mode. Auto-pipelining batches the commands of one tick
 * per node. Call connect() before use.
 */
export function createRedisCluster(nodes: RedisNodeAddress[], options: RedisClientOptions = {}): Cluster {
  return new Cluster(nodes, {
    lazyConnect: true,
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    scaleReads: options.scaleReads ?? 'master',
    clusterRetryStrategy: backoff,
    redisOptions: {
      keyPrefix: options.keyPrefix ?? '',
      maxRetriesPerRequest: 1,
      commandTimeout: options.commandTimeoutMs ?? 2_000,
    },
  });
}

/** A client of `target`: {@link createRedis} for a URL, {@link createRedisCluster} for cluster nodes. Call connect() before use. */
export function createRedisClient(target: RedisTarget, options: RedisClientOptions = {}): RedisClient {
  return typeof target === 'string' ? createRedis(target, options) : createRedisCluster(target.cluster, options);
}

/**
 * Sends these commands the moment they are called, outside ioredis's auto-pipelining, which holds
 * every command for a setImmediate to gather the tick's others into one write. For a command that
 * is already one call for many requests (a turn's reads, gathered by services/batch-loader.ts at
 * setImmediate), that hold gathers nothing more and costs each of those requests a turn of the
 * event loop: under load, a whole poll phase of other requests' work before the command leaves
 * (bench/RESULTS.md, 2026-12-05). Each call is then a socket write of its own. Idempotent. O(commands).
 * Such a command leaves ahead of auto-pipelined ones called before it in the same tick.
 */
export function sendAtOnce(redis: RedisClient, commands: readonly string[]): void {
  const ignored = redis.options.autoPipeliningIgnoredCommands ?? [];
  redis.options.autoPipeliningIgnoredCommands = [...ignored, ...commands.filter((command) => !ignored.includes(command))];
}

/** Whether a client is a Redis Cluster's. O(1). */
export function isCluster(redis: RedisClient): redis is Cluster {
  return redis.isCluster;
}

/** The masters of a client: every master of a Cluster (as of its last slot refresh), or the node itself. O(masters). */
export function mastersOf(redis: RedisClient): Redis[] {
  return isCluster(redis) ? redis.nodes('master') : [redis];
}

/**
 * Deletes every key under a prefix (a test run's, a benchmark's), on every master of a Cluster. It
 * lists them with a client of its own, without a key prefix, because ioredis does not prefix SCAN
 * patterns. On a Cluster each key is unlinked by a command of its own (the keys of one node span
 * many slots, which one UNLINK may not), sent down that node's connection in one pipeline of
 * single-key commands per SCAN page. O(keys).
 */
export async function deleteKeysUnder(target: RedisTarget, prefix: string, options: Pick<RedisClientOptions, 'commandTimeoutMs'> = {}): Promise<void> {
  const plain = createRedisClient(target, options);
  await plain.connect();
  try {
    await Promise.all(
      mastersOf(plain).map(async (node) => {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          if (keys.length > 0 && !isCluster(plain)) await node.unlink(...keys);
          else if (keys.length > 0) {
            const pipeline = node.pipeline();
            for (const key of keys) pipeline.unlink(key);
            await pipeline.exec();
          }
          cursor = next;
        } while (cursor !== '0');
      }),
    );
  } finally {
    await plain.quit();
  }
}
