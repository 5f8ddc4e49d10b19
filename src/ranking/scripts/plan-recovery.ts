/**
 * planRecovery: sets which buckets a node's generation recovery still has to rebuild. The first
 * plan replaces '*' ("every bucket with a key on this node") with the buckets PostgreSQL holds
 * board scores for whose keys hash into the node's slots; a later plan
 * (another process taking over a recovery whose rebuilder died) keeps only the members still
 * pending that are in its list, so a bucket that has since expired or closed does not stay pending
 * for ever. A bucket in no plan has no durable board score: empty is its right state.
 *
 * KEYS[1]  the generation's pending set on the node
 * ARGV     the bucket keys (without the client's key prefix) that hold board scores now and have a key on the node
 *
 * Returns the members still pending: the buckets to rebuild. An empty plan deletes the set, which
 * ends the recovery. Nothing is created when the set is gone already (the recovery is over).
 *
 * O(P + A) for P pending members and A arguments.
 */
export const planRecoveryLua = `
local key = KEYS[1]
if redis.call('SISMEMBER', key, '*') == 1 then
  for i = 1, #ARGV do
    redis.call('SADD', key, ARGV[i])
  end
  redis.call('SREM', key, '*')
else
  local wanted = {}
  for i = 1, #ARGV do
    wanted[ARGV[i]] = true
  end
  local members = redis.call('SMEMBERS', key)
  for i = 1, #members do
    if not wanted[members[i]] then
      redis.call('SREM', key, members[i])
    end
  end
end
return redis.call('SMEMBERS', key)
`;
