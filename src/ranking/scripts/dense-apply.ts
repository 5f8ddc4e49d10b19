/**
 * applyDense: moves a DENSE bucket's counts of distinct scores (see ranking/dense.ts) by the
 * changes its shards reported: for each score, how many members came to hold it (+) or left it (-).
 *
 * KEYS[1]  the bucket's distinct scores: a sorted set whose members are the scores' order values
 *          (see scoreOrder in packing.ts), each scored by itself, so ZCOUNT above a score counts the
 *          distinct better ones
 * KEYS[2]  how many members hold each score: a hash, order value → count
 * KEYS[3]  a running recount's distinct scores (KEYS[1] plus '#recount')
 * KEYS[4]  a running recount's counts (KEYS[2] plus '#recount')
 * KEYS[5]  the lineage: a hash {live, previous}, the recounts that made the live counts and the ones before
 * KEYS[6]  the running recount's id, a string that expires when the recount stops renewing it
 * ARGV[1]  unix time (seconds) at which the live keys expire, or 0 for keys kept until dropped
 * ARGV[2]  the recount the changes were read against (the shard's recount position's id, '' for none)
 * ARGV[3.. ] (order value, live delta, recounted delta) triples: the member's whole change, and the
 *          part of it at positions the recount had counted
 *
 * Where the changes go, by the recount they were read against:
 * - the running one: the live counts take the whole change, the recount's counts the counted part;
 * - the one that made the live counts (it has been swapped in, or it is done: then both parts are
 *   the same): the live counts take the counted part;
 * - the one before it: nothing, since the change was made before that shard was recounted, so the
 *   recount read it (a change that left its shard before and reaches here after the swap);
 * - any other (a recount that died): the live counts take the whole change.
 *
 * A score is listed exactly while its count is above zero. Counts are sums, so the changes of
 * writers racing on one bucket (each shard reports its own, in any order) commute and converge;
 * one that arrives before the change it follows (a member's -x before its +x) leaves a negative
 * count for a moment, and the score unlisted, until the other arrives. A count back at zero is
 * deleted, so the hash holds only the scores held (and the few in flight).
 *
 * Returns the number of distinct scores listed live.
 *
 * O(k log D) for k changes over D distinct scores.
 */
export const applyDenseLua = `
local function move(scores, counts, value, delta)
  if delta == '0' then return end
  local count = redis.call('HINCRBY', counts, value, delta)
  if count > 0 then
    redis.call('ZADD', scores, value, value)
  else
    redis.call('ZREM', scores, value)
    if count == 0 then
      redis.call('HDEL', counts, value)
    end
  end
end
local lineage = redis.call('HMGET', KEYS[5], 'live', 'previous')
local live, previous = lineage[1] or '', lineage[2]
local running = redis.call('GET', KEYS[6])
local epoch = ARGV[2]
local toLive, toRecount = nil, false
if running and epoch == running then
  toLive, toRecount = 1, true
elseif epoch == live then
  toLive = 2
elseif previous and epoch == previous then
  toLive = nil
else
  toLive = 1
end
for i = 3, #ARGV - 2, 3 do
  if toLive then
    move(KEYS[1], KEYS[2], ARGV[i], ARGV[i + toLive])
  end
  if toRecount then
    move(KEYS[3], KEYS[4], ARGV[i], ARGV[i + 2])
  end
end
if toRecount then
  local ttl = redis.call('PTTL', KEYS[6])
  for k = 3, 4 do
    if ttl > 0 and redis.call('EXISTS', KEYS[k]) == 1 then
      redis.call('PEXPIRE', KEYS[k], ttl)
    end
  end
end
if toLive and ARGV[1] ~= '0' then
  for k = 1, 2 do
    if redis.call('EXISTS', KEYS[k]) == 1 then
      redis.call('EXPIREAT', KEYS[k], ARGV[1])
    end
  end
end
return redis.call('ZCARD', KEYS[1])
`;
