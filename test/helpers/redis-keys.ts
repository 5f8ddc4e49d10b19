import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, inject } from 'vitest';
import { type RedisClient, createRedis, deleteKeysUnder } from '../../src/redis.js';

/** The Redis the tests use: TEST_REDIS_URL, or the shared one on 127.0.0.1:6379. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Deletes every key under a prefix of the test Redis. */
export const deleteKeys = (prefix: string) => deleteKeysUnder(TEST_REDIS_URL, prefix);

/**
 * A client of the test Redis on a key prefix of its own (under this run's, named after `name`),
 * connected before the file's tests; it quits, and every key under its prefix is deleted, after them.
 */
export function scratchRedis(name: string): { redis: RedisClient; prefix: string } {
  const prefix = `${inject('redisRunPrefix')}${name}-${randomBytes(4).toString('hex')}:`;
  const redis = createRedis(TEST_REDIS_URL, { keyPrefix: prefix });
  beforeAll(() => redis.connect());
  afterAll(async () => {
    await redis.quit();
    await deleteKeys(prefix);
  });
  return { redis, prefix };
}
