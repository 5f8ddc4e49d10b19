import { positionLua } from './position.js';
import { NO_WRITES } from './read-only.js';

/**
 * readAfter: the members of one shard that follow a position (packed, id) in REV order, with the
 * shard's size and how many members are at or ahead of the position, read in one atomic step: a
 * bucket's page is the merge of every shard's readAfter (one call for a bucket of one sorted set),
 * and its first rank the sum of their counts.
 *
 * KEYS[1]  the shard's sorted set
 * ARGV[1]  how many members (at least 1)
 * ARGV[2]  the position's packed score
 * ARGV[3]  the position's player id (a member of this shard or not)
 *
 * Returns {size, before, id1, packed1, id2, packed2, ...} in rank order, where `before` is the
 * number of members at or ahead of the position (so the 0-based shard rank of id1).
 *
 * The position is a key, never an offset, so it need not be a member: whether or not its player
 * is here (or still holds that packed value), the rows start strictly after it.
 *
 * O(log N + count), O(log T · log N + count) when T members tie on the position's packed value.
 *
 * Read-only (`#!lua flags=no-writes`, see read-only.ts): replicas run it.
 */
export const readAfterLua = `${NO_WRITES}${positionLua}
local key = KEYS[1]
local before = atOrAhead(key, ARGV[2], ARGV[3], countAhead(key, ARGV[2], ARGV[3]))
local out = {redis.call('ZCARD', key), before}
local rows = redis.call('ZRANGE', key, before, before + tonumber(ARGV[1]) - 1, 'REV', 'WITHSCORES')
for i = 1, #rows do
  out[#out + 1] = rows[i]
end
return out
`;
