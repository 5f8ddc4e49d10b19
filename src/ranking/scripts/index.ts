import type { Redis, Result } from 'ioredis';
import { applyScoreLua } from './apply-score.js';
import { readAroundLua } from './read-around.js';
import { readStandingsLua } from './read-standings.js';
import { readTopLua } from './read-top.js';

/** A member's place as a script reports it: 0-based rank and packed score as Redis prints it, or nulls. */
export type RawPlace = [rank: number | null, packed: string | null];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** See apply-score.ts. Returns [rank, packed, size]. */
    applyScore(
      key: string,
      playerId: string,
      packed: string,
      direction: 'GT' | 'LT',
      expireAt: number,
    ): Result<[number | null, string | null, number], Context>;
    /** See read-standings.ts. Returns [size, rank1, packed1, rank2, packed2, ...]. */
    readStandings(key: string, ...playerIds: string[]): Result<(number | string | null)[], Context>;
    /** See read-top.ts. Returns [size, id1, packed1, id2, packed2, ...]. */
    readTop(key: string, limit: number): Result<(number | string)[], Context>;
    /** See read-around.ts. Returns [size, firstRank, id1, packed1, ...], or [size] when the player is not ranked. */
    readAround(key: string, playerId: string, radius: number): Result<(number | string)[], Context>;
  }
}

/**
 * Registers every ranking script on a client once. ioredis then sends each by EVALSHA and falls
 * back to EVAL only when the server does not know the script yet (after a restart, say).
 */
export function defineRankingScripts(redis: Redis): void {
  redis.defineCommand('applyScore', { numberOfKeys: 1, lua: applyScoreLua });
  redis.defineCommand('readStandings', { numberOfKeys: 1, lua: readStandingsLua });
  redis.defineCommand('readTop', { numberOfKeys: 1, lua: readTopLua });
  redis.defineCommand('readAround', { numberOfKeys: 1, lua: readAroundLua });
}
