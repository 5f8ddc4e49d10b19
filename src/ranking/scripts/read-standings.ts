/**
 * readStandings: the places of several members of one bucket, read in one atomic step so that
 * every rank and the size belong to the same moment.
 *
 * KEYS[1]  the bucket's sorted set
 * ARGV     the player ids
 *
 * Returns {size, rank1, packed1, rank2, packed2, ...}: for each id, its 0-based rank in REV
 * order and its packed score, or false and false when the player is not ranked there.
 *
 * O(k log N) for k ids.
 */
export const readStandingsLua = `
local key = KEYS[1]
local out = {redis.call('ZCARD', key)}
for i = 1, #ARGV do
  local rank = redis.call('ZREVRANK', key, ARGV[i])
  if rank then
    out[#out + 1] = rank
    out[#out + 1] = redis.call('ZSCORE', key, ARGV[i])
  else
    out[#out + 1] = false
    out[#out + 1] = false
  end
end
return out
`;
