/**
 * A service of a bench script's own, on stores nobody else uses: a database made and migrated for
 * the run (`lb_<name>_<random>`) and a key prefix of its own (`<name>-<random>:`), both removed
 * by `remove()` whatever the script did. For the scripts that measure what the service leaves in
 * its stores (Redis memory), which must not share the bench database with anything.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { type AppDeps, buildApp } from '../../src/app.js';
import { createDatabase, ensureDatabase, migrateDatabase } from '../../src/db/client.js';
import { createLogger } from '../../src/logger.js';
import { subscriberFor } from '../../src/pubsub/top-feed.js';
import { createRedisClient, deleteKeysUnder } from '../../src/redis.js';
import { POSTGRES_URL, REDIS_URL } from './env.js';

/**
 * Makes the stores and builds the app on them (not started). `deps` adds to or overrides the app's
 * dependencies (a clock, a closer interval). Commands may take two minutes: a bench moves big sets.
 */
export async function scratchApp(name: string, deps: Partial<AppDeps> = {}) {
  const id = randomBytes(4).toString('hex');
  const url = new URL(POSTGRES_URL);
  url.pathname = `/lb_${name.replaceAll('-', '_')}_${id}`;
  const prefix = `${name}-${id}:`;
  await ensureDatabase(url.toString());
  await migrateDatabase(url.toString());
  const database = createDatabase(url.toString(), { timeouts: null });
  const redis = createRedisClient(REDIS_URL, { keyPrefix: prefix, commandTimeoutMs: 120_000 });
  await redis.connect();
  const subscriber = subscriberFor(redis);
  await subscriber.connect();
  const app = buildApp({ database, redis, subscriber, log: createLogger('warn'), adminKey: 'a'.repeat(24), serverKeys: ['s'.repeat(24)], port: 0, ...deps });
  return {
    app,
    database,
    redis,
    /** The key prefix: MEMORY USAGE takes a key's full name. */
    prefix,
    /** The database's URL, for a connection of the script's own. */
    databaseUrl: url.toString(),
    /** Stops the app, closes its connections, deletes its keys and drops its database. */
    async remove(): Promise<void> {
      await app.stop();
      await subscriber.quit();
      await database.close();
      await deleteKeysUnder(REDIS_URL, prefix);
      await redis.quit();
      const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
      await admin`drop database if exists ${admin(url.pathname.slice(1))}`;
      await admin.end();
    },
  };
}
