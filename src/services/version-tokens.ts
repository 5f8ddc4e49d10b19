import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis.js';

/**
 * Version tokens in one Redis hash, for caches kept in each process that must never serve what
 * another process changed before it answered (player profiles, a board's seasons). The hash holds
 * `epoch`, set once (again after Redis lost it), and one field per thing cached, rewritten with a
 * fresh random token after every change to it:
 *
 * - a change answers only after `changed` rewrote its token (after its commit);
 * - a lookup reads the tokens first, uses a kept value only when it was read under the same token,
 *   and keeps what it reads from the database under the token read before. A value read under a
 *   token is at least as new as every change whose token write came before; a change after it
 *   writes a new token, and the next lookup sees that token and reads again;
 * - tokens are random, so a Redis that lost the hash never matches an old one: a missing epoch is
 *   set afresh, and nothing is trusted until it is.
 *
 * Why not a notification (LISTEN/NOTIFY, pub/sub): it reaches the other processes some time after
 * the change answered, and one sent while a listener reconnects is lost; a token read per lookup
 * costs one Redis round trip and leaves no window.
 */
export function createVersionTokens(redis: RedisClient, key: string) {
  return {
    /**
     * The current token of each field, in their order; undefined when they cannot be trusted
     * (Redis away, or the epoch not set yet): the caller then keeps nothing. One HMGET.
     */
    async read(fields: readonly string[]): Promise<string[] | undefined> {
      try {
        const [epoch = null, ...tokens] = await redis.hmget(key, 'epoch', ...fields);
        if (epoch === null) {
          await redis.hsetnx(key, 'epoch', randomUUID());
          return undefined;
        }
        return fields.map((_, i) => `${epoch}:${tokens[i] ?? ''}`);
      } catch {
        return undefined;
      }
    },

    /** Marks these fields changed in every process. Throws when Redis does not take it. One HSET. */
    async changed(fields: readonly string[]): Promise<void> {
      const distinct = [...new Set(fields)];
      if (distinct.length > 0) await redis.hset(key, ...distinct.flatMap((field) => [field, randomUUID()]));
    },
  };
}

export type VersionTokens = ReturnType<typeof createVersionTokens>;
