import { positionLua } from './position.js';
import { NO_WRITES } from './read-only.js';

/**
 * readNear: for each of several positions (packed, id), the members of one shard just ahead of and
 * just after it, with how many members are ahead, and the shard's size, read in one atomic step. A
 * sharded bucket's around-me merges one such window per shard: the `radius` members closest ahead
 * of the player over every shard are among the union of each shard's `radius` closest, and
 * likewise after. The positions of the around reads of one turn go in one call per shard.
 *
 * KEYS[1]  the shard's sorted set
 * ARGV     (packed score, player id, radius) triples: a position (its player a member of this
 *          shard or not) and how many members either side (0 or more)
 *
 * Returns {size, then per triple: ahead, countBefore, idB1, packedB1, ..., countAfter, idA1,
 * packedA1, ...}: `ahead` members rank strictly ahead of the position; then up to `radius` of
 * them, the closest, in rank order (the first at 0-based rank ahead - countBefore); then up to
 * `radius` members strictly after the position, in rank order. A member at exactly the position
 * (the player itself) is in neither.
 *
 * O(k (log N + radius)) for k triples, O(log T · log N + radius) a triple when T members tie on
 * its packed value.
 *
 * Read-only (`#!lua flags=no-writes`, see read-only.ts): replicas run it.
 */
export const readNearLua = `${NO_WRITES}${positionLua}
local key = KEYS[1]
local out = {redis.call('ZCARD', key)}
local function append(rows)
  out[#out + 1] = #rows / 2
  for i = 1, #rows do
    out[#out + 1] = rows[i]
  end
end
for t = 1, #ARGV - 2, 3 do
  local packed, member, radius = ARGV[t], ARGV[t + 1], tonumber(ARGV[t + 2])
  local ahead = countAhead(key, packed, member)
  local after = atOrAhead(key, packed, member, ahead)
  out[#out + 1] = ahead
  local before, rows = {}, {}
  if radius > 0 then
    if ahead > 0 then
      before = redis.call('ZRANGE', key, math.max(0, ahead - radius), ahead - 1, 'REV', 'WITHSCORES')
    end
    rows = redis.call('ZRANGE', key, after, after + radius - 1, 'REV', 'WITHSCORES')
  end
  append(before)
  append(rows)
end
return out
`;
