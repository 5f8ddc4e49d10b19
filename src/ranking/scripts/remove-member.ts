/**
 * removeMember: takes a member out of a bucket's sorted set and tells where it stood, so the
 * caller knows whether the removal changed the bucket's top.
 *
 * KEYS[1]  the bucket's sorted set
 * ARGV[1]  player id (the member)
 *
 * Returns the member's 0-based rank in REV order just before the removal, or nil when it was not
 * there (nothing changed).
 *
 * O(log N).
 */
export const removeMemberLua = `
local rank = redis.call('ZREVRANK', KEYS[1], ARGV[1])
if rank then
  redis.call('ZREM', KEYS[1], ARGV[1])
end
return rank
`;
