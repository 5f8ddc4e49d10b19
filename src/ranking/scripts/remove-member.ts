/**
 * removeMember: takes a member out of a bucket's sorted set and tells where it stood, so the
 * caller knows whether the removal changed the bucket's top.
 *
 * KEYS[1]  the bucket's sorted set
 * ARGV[1]  player id (the member)
 *
 * Returns {rank, packed}: the member's 0-based rank in REV order just before the removal and the
 * packed score it held (a DENSE board's counts lose it, see dense.ts), or {false, false} when it
 * was not there (nothing changed).
 *
 * O(log N).
 */
export const removeMemberLua = `
local rank = redis.call('ZREVRANK', KEYS[1], ARGV[1])
if not rank then
  return {false, false}
end
local packed = redis.call('ZSCORE', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
return {rank, packed}
`;
