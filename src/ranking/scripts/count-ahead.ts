import { positionLua } from './position.js';
import { NO_WRITES } from './read-only.js';

/**
 * countAhead: how many members of one shard rank ahead of each of several positions, and the
 * shard's size, read in one atomic step. A player's rank in a sharded bucket is its rank in its
 * own shard plus these counts from every other shard.
 *
 * KEYS[1]  the shard's sorted set
 * ARGV     pairs: packed1, id1, packed2, id2, ... (none: the size alone)
 *
 * Returns {size, ahead1, ahead2, ...}: the number of members, then for each position the number
 * of members strictly ahead of it in REV order (see countAhead in position.ts).
 *
 * O(k log N) for k positions, O(k log T · log N) when T members tie on a position's packed value.
 *
 * Read-only (`#!lua flags=no-writes`, see read-only.ts): replicas run it.
 */
export const countAheadLua = `${NO_WRITES}${positionLua}
local key = KEYS[1]
local out = {redis.call('ZCARD', key)}
for i = 1, #ARGV, 2 do
  out[#out + 1] = countAhead(key, ARGV[i], ARGV[i + 1])
end
return out
`;
