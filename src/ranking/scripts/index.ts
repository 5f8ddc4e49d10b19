import type { Redis, Result } from 'ioredis';
import { applyScoreLua } from './apply-score.js';
import { readAroundLua } from './read-around.js';
import { readPageLua } from './read-page.js';
import { readStandingsLua } from './read-standings.js';
import { readTopLua } from './read-top.js';
import { removeMemberLua } from './remove-member.js';
import { beginRebuildLua } from './rebuild-begin.js';
import { dropRebuildLua } from './rebuild-drop.js';
import { swapRebuiltLua } from './rebuild-swap.js';
import { writeIntoRebuildLua } from './write-into-rebuild.js';

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
    /** See remove-member.ts. Returns the 0-based rank the member held, or null when it was not there. */
    removeMember(key: string, playerId: string): Result<number | null, Context>;
    /** See read-page.ts. Returns [size, firstRank, id1, packed1, ...] (up to first + 1 members), or [size] when nothing follows. */
    readPage(key: string, first: number, packed: string, playerId: string): Result<(number | string)[], Context>;
    /** See rebuild-begin.ts. Returns 1 when claimed, 0 when another rebuild holds the key. */
    beginRebuild(rebuildKey: string, marker: string, ttlMs: number): Result<number, Context>;
    /** See rebuild-swap.ts. Returns the live size, or -1 when the marker is gone. */
    swapRebuilt(rebuildKey: string, liveKey: string, marker: string, expireAt: number): Result<number, Context>;
    /** See rebuild-drop.ts. Returns 1 when deleted. */
    dropRebuild(rebuildKey: string, marker: string): Result<number, Context>;
    /** See write-into-rebuild.ts. Returns 1 when written into a running rebuild. */
    writeIntoRebuild(rebuildKey: string, direction: 'GT' | 'LT', packed: string, playerId: string): Result<number, Context>;
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
  redis.defineCommand('removeMember', { numberOfKeys: 1, lua: removeMemberLua });
  redis.defineCommand('readPage', { numberOfKeys: 1, lua: readPageLua });
  redis.defineCommand('beginRebuild', { numberOfKeys: 1, lua: beginRebuildLua });
  redis.defineCommand('swapRebuilt', { numberOfKeys: 2, lua: swapRebuiltLua });
  redis.defineCommand('dropRebuild', { numberOfKeys: 1, lua: dropRebuildLua });
  redis.defineCommand('writeIntoRebuild', { numberOfKeys: 1, lua: writeIntoRebuildLua });
}
