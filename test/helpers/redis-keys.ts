import { deleteKeysUnder } from '../../src/redis.js';

/** Deletes every key under a prefix of the test Redis. */
export const deleteKeys = (prefix: string) => deleteKeysUnder(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', prefix);
