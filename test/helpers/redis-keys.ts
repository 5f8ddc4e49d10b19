import { createRedis } from '../../src/redis.js';

/** Deletes every key under a prefix, with a client of its own (patterns are not prefixed by ioredis). */
export async function deleteKeys(prefix: string): Promise<void> {
  const redis = createRedis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
  await redis.connect();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await redis.quit();
  }
}
