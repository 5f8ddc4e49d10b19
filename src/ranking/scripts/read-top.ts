import { NO_WRITES } from './read-only.js';

/**
 * readTop: the first members of a bucket and its size, read together.
 *
 * KEYS[1]  the bucket's sorted set
 * ARGV[1]  how many members (at least 1)
 *
 * Returns {size, id1, packed1, id2, packed2, ...} in rank order.
 *
 * O(log N + limit).
 *
 * Read-only (`#!lua flags=no-writes`, see read-only.ts): replicas run it.
 */
export const readTopLua = `${NO_WRITES}
local key = KEYS[1]
local out = {redis.call('ZCARD', key)}
local rows = redis.call('ZRANGE', key, 0, tonumber(ARGV[1]) - 1, 'REV', 'WITHSCORES')
for i = 1, #rows do
  out[#out + 1] = rows[i]
end
return out
`;
