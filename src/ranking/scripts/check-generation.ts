/**
 * checkGeneration: reads the index's generation marker, and sets it when it is missing. The marker
 * is written once, when a Redis holds no index yet, and is never set to expire; a Redis that comes
 * back without it (a restart without persistence, a failover to an empty node, a flush) has lost
 * every sorted set with it. Setting a new generation also opens its pending set holding '*'
 * ("every bucket is still to be rebuilt"), in the same atomic step, so that no process ever sees
 * the new generation without its pending set.
 *
 * KEYS[1]  the generation marker (lb:{generation})
 * ARGV[1]  a fresh random generation id, used only when the marker is missing
 *
 * Returns {generation, recovering, claimed}: the generation now in force, 1 while its pending set
 * exists (some bucket is still to be rebuilt), and 1 when this call set the marker.
 *
 * The pending set's name is built here from KEYS[1] (which carries the client's key prefix) as
 * KEYS[1] .. ':' .. generation .. ':pending', the name pendingKey() gives in generation.ts; it
 * shares the marker's hash tag, so both live in one Cluster slot.
 *
 * O(1).
 */
export const checkGenerationLua = `
local generation = redis.call('GET', KEYS[1])
local claimed = 0
if not generation then
  generation = ARGV[1]
  redis.call('SET', KEYS[1], generation)
  redis.call('SADD', KEYS[1] .. ':' .. generation .. ':pending', '*')
  claimed = 1
end
return {generation, redis.call('EXISTS', KEYS[1] .. ':' .. generation .. ':pending'), claimed}
`;
