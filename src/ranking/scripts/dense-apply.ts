/**
 * applyDense: moves a DENSE bucket's count of distinct scores by the changes its sorted sets
 * reported (see dense.ts): for each score, how many members came to hold it (+) or left it (-).
 *
 * KEYS[1]  the bucket's distinct scores: a sorted set whose members are the scores' order values
 *          (see scoreOrder in packing.ts), each scored by itself, so ZCOUNT above a score counts the
 *          distinct better ones
 * KEYS[2]  how many members hold each score: a hash, order value → count
 * ARGV[1]  unix time (seconds) at which both keys expire, or 0 for keys kept until dropped
 * ARGV[2.. ] (order value, delta) pairs
 *
 * A score is listed exactly while its count is above zero. Counts are sums, so the changes of
 * writers racing on one bucket (each shard reports its own, in any order) commute and converge;
 * one that arrives before the change it follows (a member's -x before its +x) leaves a negative
 * count for a moment, and the score unlisted, until the other arrives. A count back at zero is
 * deleted, so the hash holds only the scores held (and the few in flight).
 *
 * Returns the number of distinct scores listed.
 *
 * O(k log D) for k changes over D distinct scores.
 */
export const applyDenseLua = `
local scores = KEYS[1]
local counts = KEYS[2]
for i = 2, #ARGV - 1, 2 do
  local value = ARGV[i]
  local count = redis.call('HINCRBY', counts, value, ARGV[i + 1])
  if count > 0 then
    redis.call('ZADD', scores, value, value)
  else
    redis.call('ZREM', scores, value)
    if count == 0 then
      redis.call('HDEL', counts, value)
    end
  end
end
if ARGV[1] ~= '0' then
  redis.call('EXPIREAT', scores, ARGV[1])
  redis.call('EXPIREAT', counts, ARGV[1])
end
return redis.call('ZCARD', scores)
`;
