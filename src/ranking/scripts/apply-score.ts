/**
 * applyScore: writes a member's packed board score into a bucket's sorted set, never moving it
 * backwards, sets the key's expiry from its bucket, and reads the member's place after the write.
 *
 * KEYS[1]  the bucket's sorted set
 * ARGV[1]  player id (the member)
 * ARGV[2]  packed score
 * ARGV[3]  'GT' or 'LT': the direction this board's packed values only move in
 * ARGV[4]  unix time (seconds) at which the key expires, or 0 for a key kept until it is dropped
 *
 * Returns {rank, packed, size}: the member's 0-based rank in REV order (false when the key has
 * already expired), its packed score as stored, and the number of members.
 *
 * Because the write only ever moves a member in its board's direction, a replayed or reordered
 * call is harmless: the index converges on the best (or the total) whatever the order of arrival.
 */
export const applyScoreLua = `
local key = KEYS[1]
redis.call('ZADD', key, ARGV[3], ARGV[2], ARGV[1])
if ARGV[4] ~= '0' then
  redis.call('EXPIREAT', key, ARGV[4])
end
local rank = redis.call('ZREVRANK', key, ARGV[1])
local packed = redis.call('ZSCORE', key, ARGV[1])
return {rank, packed, redis.call('ZCARD', key)}
`;
