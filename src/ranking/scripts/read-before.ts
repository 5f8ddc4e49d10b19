import { positionLua } from './position.js';
import { NO_WRITES } from './read-only.js';

/**
 * readBefore: the members of one shard just ahead of a position (packed, id) in REV order, with the
 * shard's size and how many members are ahead of the position, read in one atomic step: a
 * backward page of a bucket is the merge of every shard's readBefore (one call for a bucket of one
 * sorted set), its last `count` members, the mirror of readAfter (read-after.ts).
 *
 * KEYS[1]  the shard's sorted set
 * ARGV[1]  how many members (at least 1)
 * ARGV[2]  the position's packed score, or '' for the end of the set (a page of its last members)
 * ARGV[3]  the position's player id (a member of this shard or not; '' with the end)
 *
 * Returns {size, ahead, id1, packed1, id2, packed2, ...} in rank order: `ahead` members rank
 * strictly ahead of the position (all of them at the end), and the rows are the last `count` of
 * those, so id1's 0-based shard rank is ahead minus the number of rows.
 *
 * The position is a key, never an offset, so it need not be a member: whether or not its player
 * is here (or still holds that packed value), the rows end strictly before it.
 *
 * O(log N + count), O(log T · log N + count) when T members tie on the position's packed value.
 *
 * Read-only (`#!lua flags=no-writes`, see read-only.ts): replicas run it.
 */
export const readBeforeLua = `${NO_WRITES}${positionLua}
local key = KEYS[1]
local size = redis.call('ZCARD', key)
local ahead = size
if ARGV[2] ~= '' then
  ahead = countAhead(key, ARGV[2], ARGV[3])
end
local out = {size, ahead}
if ahead > 0 then
  local from = math.max(0, ahead - tonumber(ARGV[1]))
  local rows = redis.call('ZRANGE', key, from, ahead - 1, 'REV', 'WITHSCORES')
  for i = 1, #rows do
    out[#out + 1] = rows[i]
  end
end
return out
`;
