import type { RedisClient } from './redis.js';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { createDatabase, ensureDatabase, migrateDatabase } from './db/client.js';
import { createLogger } from './logger.js';
import { survivePostgresWriteAfterClose } from './db/postgres-guard.js';
import { createRedis } from './redis.js';
import { subscriberFor } from './pubsub/top-feed.js';

/** The entry: config, then clients, then the app; and the reverse on SIGTERM or SIGINT. */
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
  survivePostgresWriteAfterClose(log);

  await ensureDatabase(config.DATABASE_URL);
  await migrateDatabase(config.DATABASE_URL);
  const database = createDatabase(config.DATABASE_URL);
  const redis: RedisClient = createRedis(config.REDIS_URL, { keyPrefix: config.REDIS_KEY_PREFIX });
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
  });
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
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
