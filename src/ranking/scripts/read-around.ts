/**
 * readAround: a member and up to `radius` members either side, cut at the edges of the bucket.
 *
 * KEYS[1]  the bucket's sorted set
 * ARGV[1]  player id
 * ARGV[2]  radius (0 or more)
 *
 * Returns {size, firstRank, id1, packed1, id2, packed2, ...} in rank order, where firstRank is the
 * 0-based rank of id1; or {size} alone when the player is not ranked there.
 *
 * O(log N + radius).
 */
export const readAroundLua = `
local key = KEYS[1]
local size = redis.call('ZCARD', key)
local rank = redis.call('ZREVRANK', key, ARGV[1])
if not rank then
  return {size}
end
local radius = tonumber(ARGV[2])
local first = math.max(0, rank - radius)
local out = {size, first}
local rows = redis.call('ZRANGE', key, first, rank + radius, 'REV', 'WITHSCORES')
for i = 1, #rows do
  out[#out + 1] = rows[i]
end
return out
`;
