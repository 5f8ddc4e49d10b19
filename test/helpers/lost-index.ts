import postgres from 'postgres';
import { RECOVERY_LOCK } from '../../src/jobs/index-recovery.js';
import { type OwnRedis, startOwnRedis } from './redis-server.js';
import { type TestApp, startTestApp } from './test-app.js';
import { until } from './wait.js';

/**
 * Two API processes on one database and one Redis of their own, a Redis the test may kill and
 * bring back empty, and a direct connection to the database, one of whose sessions can hold the
 * index recovery's lock, so that the test decides when a lost index is rebuilt.
 */
export interface LostIndexFixture {
  redis: OwnRedis;
  t: TestApp;
  second: TestApp;
  /** The test's own connection to the apps' database. */
  direct: postgres.Sql;
  /** Takes the recovery lock: no process rebuilds a lost index until releaseRecovery(). */
  holdRecovery(): Promise<void>;
  releaseRecovery(): Promise<void>;
  /**
   * Empties Redis (killed and started again) with the recovery held, and waits until both apps
   * know the index is lost. Answers Date.now() at the loss.
   */
  loseIndex(): Promise<number>;
  close(): Promise<void>;
}

export async function startLostIndexFixture(): Promise<LostIndexFixture> {
  const redis = await startOwnRedis();
  const t = await startTestApp({ redisUrl: redis.url });
  const second = await startTestApp({ redisUrl: redis.url, shareStoresOf: { databaseUrl: t.databaseUrl, keyPrefix: t.keyPrefix } });
  // One session for the lock (reserved, so it is the one that holds it), one for the test's queries.
  const direct = postgres(t.databaseUrl, { max: 2, onnotice: () => {} });
  const lock = await direct.reserve();
  const holdRecovery = async () => {
    await lock`select pg_advisory_lock(${RECOVERY_LOCK})`;
  };
  return {
    redis,
    t,
    second,
    direct,
    holdRecovery,
    async releaseRecovery() {
      await lock`select pg_advisory_unlock(${RECOVERY_LOCK})`;
    },
    async loseIndex() {
      // The recovery waits on its lock while the test holds it, as it would behind another process.
      await holdRecovery();
      await redis.kill();
      const lostAt = Date.now();
      await redis.start();
      await until(
        () => t.app.parts.indexGeneration.state() === 'recovering' && second.app.parts.indexGeneration.state() === 'recovering',
        5_000,
        'both apps noticed the index lost',
      );
      return lostAt;
    },
    async close() {
      lock.release();
      await second.close();
      await t.close();
      await direct.end();
      await redis.kill();
    },
  };
}
