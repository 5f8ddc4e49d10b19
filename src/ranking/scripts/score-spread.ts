import type { Result } from 'ioredis';
import type { RedisClient } from '../../redis.js';
import { NO_WRITES } from './read-only.js';

/**
 * readScoreEnds: a shard's size and its two end members' packed values, read in one atomic step:
 * the first step of a score distribution (see scoreBins in ranking/index.ts), which takes the
 * lowest and the highest over every shard.
 *
 * KEYS[1]  the shard's sorted set
 * ARGV     none
 *
 * Returns {size, lowestPacked, highestPacked}, or {0} when the set is empty.
 *
 * O(log N).
 *
 * Read-only (`#!lua flags=no-writes`, see read-only.ts): replicas run it.
 */
export const readScoreEndsLua = `${NO_WRITES}
local key = KEYS[1]
local size = redis.call('ZCARD', key)
if size == 0 then return {0} end
local lowest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
local highest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
return {size, lowest[2], highest[2]}
`;

/**
 * countScoreRanges: a shard's size and how many of its members lie in each of several packed
 * ranges, read in one atomic step, so the counts and the size are of one moment: the second step
 * of a score distribution, one ZCOUNT per bin edge.
 *
 * KEYS[1]  the shard's sorted set
 * ARGV     pairs: min1, max1, min2, max2, ... as ZCOUNT takes them (-inf, +inf, a value, or `(` then a value for an open end)
 *
 * Returns {size, count1, count2, ...}.
 *
 * O(k log N) for k ranges.
 *
 * Read-only (`#!lua flags=no-writes`, see read-only.ts): replicas run it.
 */
export const countScoreRangesLua = `${NO_WRITES}
local key = KEYS[1]
local out = {redis.call('ZCARD', key)}
for i = 1, #ARGV, 2 do
  out[#out + 1] = redis.call('ZCOUNT', key, ARGV[i], ARGV[i + 1])
end
return out
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** See score-spread.ts. Returns [size, lowestPacked, highestPacked], or [0] for an empty set. */
    readScoreEnds(key: string): Result<(number | string)[], Context>;
    /** See score-spread.ts. Returns [size, count1, count2, ...] for the (min, max) pairs given. */
    countScoreRanges(key: string, ...minMaxPairs: string[]): Result<number[], Context>;
  }
}

/** Registers the score distribution's two read scripts on a client, once (with the index's: see createRankingIndex). */
export function defineScoreSpreadScripts(redis: RedisClient): void {
  redis.defineCommand('readScoreEnds', { numberOfKeys: 1, lua: readScoreEndsLua, readOnly: true });
  redis.defineCommand('countScoreRanges', { numberOfKeys: 1, lua: countScoreRangesLua, readOnly: true });
}
