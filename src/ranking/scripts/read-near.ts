import { positionLua } from './position.js';

/**
 * readNear: the members of one shard just ahead of and just after a position (packed, id), with
 * the shard's size and how many members are ahead, read in one atomic step. A sharded bucket's
 * around-me merges one such window per shard: the `radius` members closest ahead of the player
 * over every shard are among the union of each shard's `radius` closest, and likewise after.
 *
 * KEYS[1]  the shard's sorted set
 * ARGV[1]  the position's packed score
 * ARGV[2]  the position's player id (a member of this shard or not)
 * ARGV[3]  radius (0 or more)
 *
 * Returns {size, ahead, count, idA1, packedA1, ..., idB1, packedB1, ...}: `ahead` members rank
 * strictly ahead of the position; then up to `radius` of them, the closest, in rank order (`count`
 * of them, the first at 0-based rank ahead - count); then up to `radius` members strictly after
 * the position, in rank order. A member at exactly the position (the player itself) is in neither.
 *
 * O(log N + radius), O(log T · log N + radius) when T members tie on the position's packed value.
 */
export const readNearLua = `${positionLua}
local key = KEYS[1]
local radius = tonumber(ARGV[3])
local ahead = countAhead(key, ARGV[1], ARGV[2])
local after = atOrAhead(key, ARGV[1], ARGV[2], ahead)
local before = {}
if radius > 0 and ahead > 0 then
  before = redis.call('ZRANGE', key, math.max(0, ahead - radius), ahead - 1, 'REV', 'WITHSCORES')
end
local out = {redis.call('ZCARD', key), ahead, #before / 2}
for i = 1, #before do
  out[#out + 1] = before[i]
end
if radius > 0 then
  local rows = redis.call('ZRANGE', key, after, after + radius - 1, 'REV', 'WITHSCORES')
  for i = 1, #rows do
    out[#out + 1] = rows[i]
  end
end
return out
`;
