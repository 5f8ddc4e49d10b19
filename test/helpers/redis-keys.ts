import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, inject } from 'vitest';
import { type RedisClient, type RedisTarget, createRedis, createRedisClient, deleteKeysUnder, mastersOf } from '../../src/redis.js';

/** The Redis the tests use: TEST_REDIS_URL, or the shared one on 127.0.0.1:6379. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Deletes every key under a prefix of the test Redis. */
export const deleteKeys = (prefix: string) => deleteKeysUnder(TEST_REDIS_URL, prefix);

/**
 * Deletes every key under a prefix (KEYS[0]: none; ARGV[1] the SCAN pattern) in one atomic step on
 * the node it runs on, and answers how many. Undeclared keys of many slots: allowed by the flag on
 * a Cluster node, where SCAN lists only the node's own keys.
 */
const LOSE_KEYS = `#!lua flags=allow-cross-slot-keys
local cursor, lost = '0', 0
repeat
  local page = redis.call('SCAN', cursor, 'MATCH', ARGV[1], 'COUNT', 1000)
  cursor = page[1]
  for _, key in ipairs(page[2]) do lost = lost + redis.call('UNLINK', key) end
until cursor == '0'
return lost`;

/**
 * Empties every key under a prefix at once on each master, as a flush or a restart without
 * persistence does to a running service. Why not deleteKeysUnder: its SCAN pages are separate
 * commands, so a service recovering meanwhile would see its new marker and rebuilt buckets
 * deleted by a later page, a half loss no real Redis suffers (and one only the drift check
 * finds). Blocks each master for the whole scan: for tests, not for a Redis anyone else uses.
 */
export async function loseKeysUnder(target: RedisTarget, prefix: string): Promise<void> {
  const plain = createRedisClient(target);
  await plain.connect();
  try {
    await Promise.all(mastersOf(plain).map((node) => node.eval(LOSE_KEYS, 0, `${prefix}*`)));
  } finally {
    await plain.quit();
  }
}

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
