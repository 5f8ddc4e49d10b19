/**
 * applyScore: writes a member's packed board score into a bucket's sorted set, never moving it
 * backwards, sets the key's expiry from its bucket, reads the member's place after the write, and
 * tells every API process when the write changed the bucket's watched top.
 *
 * On a sharded board KEYS[1] is the player's shard, and rank, size and top are the shard's: a
 * change of a shard's top is a candidate change of the bucket's (every member of the bucket's top
 * is in its shard's top), which the watchers settle by reading the merged top.
 *
 * KEYS[1]  the bucket's sorted set
 * ARGV[1]  player id (the member)
 * ARGV[2]  packed score
 * ARGV[3]  'GT' or 'LT': the direction this board's packed values only move in
 * ARGV[4]  unix time (seconds) at which the key expires, or 0 for a key kept until it is dropped
 * ARGV[5]  the board's topSize: how many places topChanged watches
 *
 * Returns {rank, packed, size, changed, packedBefore}: the member's 0-based rank in REV order
 * (false when the key has already expired), its packed score as stored, the number of members, 1
 * when the top changed (and was announced) else 0, and its packed score before the write (false
 * when it was not there; a sharded bucket's write path uses it to place each write of a batch as of
 * its own moment, see bucketPlaces in index.ts).
 *
 * The top changed when the member is inside it after the write and was outside before, or moved,
 * or changed its packed value; or when it left the top (a SUM on a LOW_FIRST board moves its
 * members down). Then the script SPUBLISHes (sharded pub/sub, on one node as on a Cluster) on the
 * bucket's top channel, KEYS[1] .. '#top' (see
 * shardTopChannel in keys.ts): KEYS[1] carries the client's key prefix already, and the channel keeps
 * the key's hash tag. A result far below the top publishes nothing. The check and the write are
 * one atomic step, so no other write can slip between them.
 *
 * Because the write only ever moves a member in its board's direction, a replayed or reordered
 * call is harmless: the index converges on the best (or the total) whatever the order of arrival,
 * and a replay changes nothing, so it announces nothing.
 *
 * O(log N).
 */
export const applyScoreLua = `
local key = KEYS[1]
local member = ARGV[1]
local topSize = tonumber(ARGV[5])
local rankBefore = redis.call('ZREVRANK', key, member)
local packedBefore = redis.call('ZSCORE', key, member)
redis.call('ZADD', key, ARGV[3], ARGV[2], member)
if ARGV[4] ~= '0' then
  redis.call('EXPIREAT', key, ARGV[4])
end
local rank = redis.call('ZREVRANK', key, member)
local packed = redis.call('ZSCORE', key, member)
local wasIn = rankBefore ~= false and rankBefore < topSize
local isIn = rank ~= false and rank < topSize
local changed = 0
if (isIn and (not wasIn or rank ~= rankBefore or packed ~= packedBefore)) or (wasIn and not isIn) then
  redis.call('SPUBLISH', key .. '#top', '')
  changed = 1
end
return {rank, packed, redis.call('ZCARD', key), changed, packedBefore}
`;
