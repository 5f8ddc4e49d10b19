import { NO_WRITES } from './read-only.js';

/**
 * readFrom: the members of a bucket of one sorted set from a 0-based position on, with its size,
 * read together: a page that starts at a rank (fromRank) without walking to it. A sharded bucket
 * finds the member at the position from its shards' counts instead (shards.ts memberAt).
 *
 * KEYS[1]  the bucket's sorted set
 * ARGV[1]  the 0-based position of the first member (0 or more)
 * ARGV[2]  how many members (at least 1)
 *
 * Returns {size, id1, packed1, id2, packed2, ...} in rank order; only the size past the end.
 *
 * O(log N + count): the skip list finds a rank in O(log N).
 *
 * Read-only (`#!lua flags=no-writes`, see read-only.ts): replicas run it.
 */
export const readFromLua = `${NO_WRITES}
local key = KEYS[1]
local out = {redis.call('ZCARD', key)}
local from = tonumber(ARGV[1])
local rows = redis.call('ZRANGE', key, from, from + tonumber(ARGV[2]) - 1, 'REV', 'WITHSCORES')
for i = 1, #rows do
  out[#out + 1] = rows[i]
end
return out
`;
