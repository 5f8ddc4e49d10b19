import { deleteKeysUnder } from '../../src/redis.js';

/** The Redis the tests use: TEST_REDIS_URL, or the shared one on 127.0.0.1:6379. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Deletes every key under a prefix of the test Redis. */
export const deleteKeys = (prefix: string) => deleteKeysUnder(TEST_REDIS_URL, prefix);
