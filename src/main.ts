import cluster from 'node:cluster';
import type { Logger } from 'pino';
import type { RedisClient } from './redis.js';
import { buildApp } from './app.js';
import { type Config, ConfigError, loadConfig, redisReplicas, redisTarget } from './config.js';
import { createDatabase, ensureDatabase, migrateDatabase, sessionTimeoutsFor, unsetServerTimeouts } from './db/client.js';
import { hostLabel, parsePostgresUrl } from './db/postgres-url.js';
import { createLogger, exitAfterFlush } from './logger.js';
import { createRedisClient } from './redis.js';
import { subscriberFor } from './pubsub/top-feed.js';
import { openReplicaReads } from './ranking/replicas.js';
import { superviseWorkers } from './workers.js';
import { answerWorkersMetricsRequests, joinWorkerMetrics } from './http/cluster-metrics.js';

/**
 * The entry: config, then either the app in this process (WORKERS=1, and every worker), or a
 * primary that forks WORKERS workers running this same script (see src/workers.ts).
 */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const log = createLogger(config.LOG_LEVEL);
  if (config.WORKERS > 1 && cluster.isPrimary) {
    answerWorkersMetricsRequests();
    // A worker's own deadline is SHUTDOWN_TIMEOUT_MS + 5 s (below); the primary waits a little longer.
    const code = await superviseWorkers({ workers: config.WORKERS, log, stopTimeoutMs: config.SHUTDOWN_TIMEOUT_MS + 10_000 });
    log.info({ code }, 'every worker stopped');
    exitAfterFlush(log, code);
    return;
  }
  await serve(config, cluster.isWorker ? log.child({ worker: cluster.worker?.id }) : log);
}

/** Clients, then the app; and the reverse on SIGTERM or SIGINT. */
async function serve(config: Config, log: Logger): Promise<void> {
  // A worker's /metrics answers for every worker (see http/cluster-metrics.ts).
  const workerMetrics = cluster.isWorker ? joinWorkerMetrics() : undefined;

  const postgresFailure = startupFailure(
    `PostgreSQL at ${postgresAddress(config.DATABASE_URL)}`,
    'DATABASE_URL',
    'that PostgreSQL is running there and accepts this user and database',
  );
  await postgresFailure.around(() => ensureDatabase(config.DATABASE_URL, config.DATABASE_POOLING));
  await postgresFailure.around(() => migrateDatabase(config.DATABASE_URL, config.DATABASE_POOLING));
  const database = createDatabase(config.DATABASE_URL, { timeouts: sessionTimeoutsFor(config.REQUEST_TIMEOUT_MS), pooling: config.DATABASE_POOLING });
  if (config.DATABASE_POOLING === 'transaction') {
    const unset = await unsetServerTimeouts(database.sql).catch(() => []);
    if (unset.length > 0)
      log.warn(
        { unset },
        "PostgreSQL enforces none of these timeouts behind transaction pooling: set them on PgBouncer's server connections (connect_query; see docs/production-topology.md)",
      );
  }
  // One node (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES): everything below works on both.
  const redis: RedisClient = createRedisClient(redisTarget(config), { keyPrefix: config.REDIS_KEY_PREFIX });
  const redisFailure = config.REDIS_CLUSTER_NODES
    ? startupFailure('the Redis Cluster', 'REDIS_CLUSTER_NODES', 'that its nodes are running and reachable from here')
    : startupFailure(`Redis at ${redisAddress(config.REDIS_URL)}`, 'REDIS_URL', 'that Redis is running there (and its password, if any)');
  await redisFailure.around(() => connectQuietly(redis));
  // topChanged's own connection: once subscribed it can run nothing else.
  const subscriber = subscriberFor(redis);
  await redisFailure.around(() => connectQuietly(subscriber));
  // Reads that may be a little stale go to replicas that keep up: REDIS_REPLICA_URLS, or the Cluster's.
  const replicas = redisReplicas(config);
  const replicaReads = replicas
    ? await redisFailure.around(() => openReplicaReads(redis, { replicas, keyPrefix: config.REDIS_KEY_PREFIX, maxLagMs: config.REDIS_REPLICA_MAX_LAG_MS, log }))
    : undefined;

  const app = buildApp({
    database,
    redis,
    subscriber,
    replicaReads,
    log,
    adminKey: config.ADMIN_API_KEY,
    serverKeys: config.SERVER_API_KEYS,
    cursorSecret: config.CURSOR_SECRET,
    host: config.HOST,
    port: config.PORT,
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
    bucketCloseSettleMs: config.BUCKET_CLOSE_SETTLE_MS,
    rateLimits: {
      submissionsPerSecond: config.RATE_LIMIT_SUBMISSIONS_PER_SECOND,
      readsPerSecond: config.RATE_LIMIT_READS_PER_SECOND,
      readRowsPerSecond: config.RATE_LIMIT_READ_ROWS_PER_SECOND,
      authFailuresPerSecond: config.RATE_LIMIT_AUTH_FAILURES_PER_SECOND,
      validationMsPerSecond: config.RATE_LIMIT_VALIDATION_MS_PER_SECOND,
    },
    requestLimits: {
      maxDocumentBytes: config.MAX_DOCUMENT_BYTES,
      maxOperationRows: config.MAX_OPERATION_ROWS,
      subscriptionsPerClient: config.SUBSCRIPTIONS_PER_CLIENT,
      subscriptionsPerSocket: config.SUBSCRIPTIONS_PER_SOCKET,
      operationsPerSocket: config.WS_OPERATIONS_PER_SOCKET,
      maxSocketBufferedBytes: config.WS_MAX_BUFFERED_BYTES,
      requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
      maxConnections: config.MAX_CONNECTIONS,
      maxBodyBytesInFlight: config.MAX_BODY_BYTES_IN_FLIGHT,
      maxBodyBytesInFlightPerClient: config.MAX_BODY_BYTES_IN_FLIGHT_PER_CLIENT,
      maxConnectionsPerClient: config.MAX_CONNECTIONS_PER_CLIENT,
      keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    },
    indexDrift: { intervalMs: config.INDEX_DRIFT_INTERVAL_MS },
    metricsOfEveryWorker: workerMetrics?.everyWorker,
    metricsToken: config.METRICS_TOKEN,
    graphiql: config.GRAPHIQL,
    webhooks: { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE },
    introspection: config.INTROSPECTION,
    persistedDocuments: { only: config.PERSISTED_DOCUMENTS_ONLY },
    trustedProxies: config.TRUSTED_PROXIES,
    corsOrigins: config.CORS_ORIGINS,
  });
  workerMetrics?.share(app.parts.metrics.registry);
  await startupFailure(`port ${config.PORT} on ${config.HOST}`, 'PORT', 'that no other process listens there (or set PORT, HOST to a free address)').around(
    () => app.start(),
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      log.error('shutdown took too long; exiting');
      exitAfterFlush(log, 1);
    }, config.SHUTDOWN_TIMEOUT_MS + 5_000);
    deadline.unref();
    await app.stop();
    await database.close();
    await replicaReads?.close();
    await subscriber.quit();
    await redis.quit();
    exitAfterFlush(log, 0);
  };
  // `on`, not `once`: a worker may get a signal twice (from a terminal's Ctrl-C, or systemd, and
  // again from its primary), and a second one must not fall back to the default of dying at once.
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/**
 * A start-up failure an operator can act on: one line naming what could not be reached, the
 * setting that points at it and what to check. The stack of its cause is for LOG_LEVEL=debug.
 */
class StartupError extends Error {
  override name = 'StartupError';
}

function startupFailure(what: string, setting: string, check: string) {
  return {
    /** Runs `work`, turning its failure into a {@link StartupError} about `what`. */
    async around<T>(work: () => Promise<T>): Promise<T> {
      try {
        return await work();
      } catch (error) {
        throw new StartupError(`${what} (${setting}): ${reasonOf(error)}. Check ${check}.`, { cause: error });
      }
    },
  };
}

/** The library's own words for a failure, without its stack: `connect ECONNREFUSED 127.0.0.1:5433`, `listen EADDRINUSE ...`. */
function reasonOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return reasonOf(error.errors[0]);
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const message = error.message || (typeof code === 'string' ? code : error.name);
  return message.split('\n', 1)[0]!.replace(/\.+$/, '');
}

/** host:port/database of a postgres:// URL (host:port,host:port/database for several hosts), without its password. */
function postgresAddress(url: string): string {
  const parsed = parsePostgresUrl(url);
  return `${parsed.hosts.map(hostLabel).join(',')}/${parsed.database}`;
}

/** host:port of a redis:// URL, without its password. */
function redisAddress(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || 6379}`;
}

/**
 * connect(), with the connection's errors heard meanwhile: without a listener ioredis prints
 * "Unhandled error event" and a stack for each attempt. Fails with the first error heard (say
 * `connect ECONNREFUSED 127.0.0.1:6380`), which says more than connect()'s "Connection is closed".
 */
async function connectQuietly(redis: {
  connect(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  off(event: 'error', listener: (error: Error) => void): unknown;
}): Promise<void> {
  let first: Error | undefined;
  const heard = (error: Error) => void (first ??= error);
  redis.on('error', heard);
  try {
    await redis.connect();
  } catch (error) {
    throw first ?? error;
  } finally {
    redis.off('error', heard);
  }
}

main().catch((error: unknown) => {
  const debug = ['debug', 'trace'].includes(process.env.LOG_LEVEL ?? '');
  if (error instanceof StartupError) {
    process.stderr.write(`failed to start: ${error.message}\n`);
    if (debug && error.cause instanceof Error) process.stderr.write(`${error.cause.stack ?? error.cause.message}\n`);
  } else {
    process.stderr.write(`failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exit(1);
});
