import { recountPositionLua } from './recount-position.js';

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

/**
 * removeDenseMember: removeMember for a DENSE board's shard (see ranking/dense.ts), which also
 * answers what the bucket's distinct-score counts lose: the packed score removed, and whether a
 * recount of the bucket running now had counted it (see recount-position.ts). Other boards'
 * removals never run it.
 *
 * KEYS[1]  the shard's sorted set
 * KEYS[2]  the shard's recount position
 * ARGV[1]  player id (the member)
 *
 * Returns {rank, packed, counted, recount id}: the 0-based rank in REV order and packed score the
 * member held, 1 when the recount had counted it (else 0), and the recount's id ('' when none ever
 * ran); {false, false, 0, id} when it was not there (nothing changed).
 *
 * O(log N).
 */
export const removeDenseMemberLua = `${recountPositionLua}
local recount = recountState(KEYS[2])
local rank = redis.call('ZREVRANK', KEYS[1], ARGV[1])
if not rank then
  return {false, false, 0, recount.id}
end
local packed = redis.call('ZSCORE', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
return {rank, packed, counted(recount, packed, ARGV[1]) and 1 or 0, recount.id}
`;
