import type { RedisClient } from '../redis.js';
import { createVersionTokens } from './version-tokens.js';

/** The version token of the players' flags (see version-tokens.ts): one field for every player. */
export const FLAG_VERSIONS_KEY = 'lb:{flags}:versions';

/**
 * Whether any player was flagged over a span of time: the same token at both ends says no. What
 * lets the write path skip its PostgreSQL check for players flagged while its group was written
 * (writes/flag-recheck.ts) when no flag was raised meanwhile, the common case by far. flagPlayer
 * rewrites the token after its flag committed and before it takes the player out of the index.
 */
export function createFlagChanges(redis: RedisClient) {
  const versions = createVersionTokens(redis, FLAG_VERSIONS_KEY);
  let seen: string | undefined;
  /**
   * The current token, as a span's end (and the next span's start). Undefined when it cannot be
   * trusted (Redis away, or the hash lost): ask PostgreSQL then. One HMGET.
   */
  async function read(): Promise<string | undefined> {
    seen = (await versions.read(['players']))?.[0];
    return seen;
  }
  return {
    /**
     * The token this process last read, as a span's start: Redis answered it before this call, so
     * it is at least as old as anything the caller does next. Undefined before the first read, and
     * after one that could not be trusted. Free: no Redis call.
     */
    lastRead: (): string | undefined => seen,
    /** The current token (see above). One HMGET. */
    read,
    /** Marks a flag raised, for every process. Throws when Redis does not take it. One HSET. */
    raised: (): Promise<void> => versions.changed(['players']),
  };
}

export type FlagChanges = ReturnType<typeof createFlagChanges>;
