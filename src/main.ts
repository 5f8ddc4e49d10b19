import cluster from 'node:cluster';
import type { Logger } from 'pino';
import type { RedisClient } from './redis.js';
import { buildApp } from './app.js';
import { type Config, ConfigError, loadConfig, redisTarget } from './config.js';
import { createDatabase, ensureDatabase, migrateDatabase } from './db/client.js';
import { createLogger } from './logger.js';
import { survivePostgresWriteAfterClose } from './db/postgres-guard.js';
import { createRedisClient } from './redis.js';
import { subscriberFor } from './pubsub/top-feed.js';
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
    process.exit(code);
  }
  await serve(config, cluster.isWorker ? log.child({ worker: cluster.worker?.id }) : log);
}

/** Clients, then the app; and the reverse on SIGTERM or SIGINT. */
async function serve(config: Config, log: Logger): Promise<void> {
  survivePostgresWriteAfterClose(log);
  // A worker's /metrics answers for every worker (see http/cluster-metrics.ts).
  const workerMetrics = cluster.isWorker ? joinWorkerMetrics() : undefined;

  await ensureDatabase(config.DATABASE_URL);
  await migrateDatabase(config.DATABASE_URL);
  const database = createDatabase(config.DATABASE_URL);
  // One node (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES): everything below works on both.
  const redis: RedisClient = createRedisClient(redisTarget(config), { keyPrefix: config.REDIS_KEY_PREFIX });
  await redis.connect();
  // topChanged's own connection: once subscribed it can run nothing else.
  const subscriber = subscriberFor(redis);
  await subscriber.connect();

  const app = buildApp({
    database,
    redis,
    subscriber,
    log,
    adminKey: config.ADMIN_API_KEY,
    serverKeys: config.SERVER_API_KEYS,
    cursorSecret: config.CURSOR_SECRET,
    host: config.HOST,
    port: config.PORT,
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    rateLimits: {
      submissionsPerSecond: config.RATE_LIMIT_SUBMISSIONS_PER_SECOND,
      readsPerSecond: config.RATE_LIMIT_READS_PER_SECOND,
    },
    metricsOfEveryWorker: workerMetrics?.everyWorker,
    graphiql: config.GRAPHIQL,
    introspection: config.INTROSPECTION,
    trustedProxies: config.TRUSTED_PROXIES,
    corsOrigins: config.CORS_ORIGINS,
  });
  workerMetrics?.share(app.services.metrics.registry);
  await app.start();

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      log.error('shutdown took too long; exiting');
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS + 5_000);
    deadline.unref();
    await app.stop();
    await database.close();
    await subscriber.quit();
    await redis.quit();
    process.exit(0);
  };
  // `on`, not `once`: a worker may get a signal twice (from a terminal's Ctrl-C, or systemd, and
  // again from its primary), and a second one must not fall back to the default of dying at once.
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
