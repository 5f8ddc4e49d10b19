/**
 * readAround: for each of several players of one bucket, the player and up to `radius` members
 * either side, cut at the edges of the bucket, all read in one atomic step (the requests of one
 * turn of the service's event loop that read around players of a bucket share one call: see
 * operations/place-reads.ts).
 *
 * KEYS[1]  the bucket's sorted set
 * ARGV     (player id, radius) pairs, radius 0 or more
 *
 * Returns {size, then per pair: count, firstRank, id1, packed1, ..., id<count>, packed<count>} in
 * rank order, where firstRank is the 0-based rank of id1; a pair whose player is not ranked there
 * is the count 0 alone (a ranked player's run holds at least the player).
 *
 * O(k (log N + radius)) for k pairs.
 */
export const readAroundLua = `
local key = KEYS[1]
local out = {redis.call('ZCARD', key)}
for i = 1, #ARGV - 1, 2 do
  local rank = redis.call('ZREVRANK', key, ARGV[i])
  if rank then
    local radius = tonumber(ARGV[i + 1])
    local first = math.max(0, rank - radius)
    local rows = redis.call('ZRANGE', key, first, rank + radius, 'REV', 'WITHSCORES')
    out[#out + 1] = #rows / 2
    out[#out + 1] = first
    for r = 1, #rows do
      out[#out + 1] = rows[r]
    end
  else
    out[#out + 1] = 0
  end
end
return out
`;
