/**
 * checkGeneration: reads one node's generation marker, and sets a new generation when the marker
 * is missing or was set by another node. The marker is a hash {generation, owner}, written when
 * the node holds no index yet and never set to expire; `owner` is the id of the node that wrote it
 * (CLUSTER MYID, read here, so it is always the id of the node running the script; empty on a node
 * without cluster support). A node without the marker (a restart without persistence, a flush) has
 * lost every sorted set with it; a marker written by another node came with replication to a
 * replica that has since taken over, and the last writes acknowledged by the old master may not
 * have. Either way a new generation is set together with its pending set holding '*' ("every
 * bucket with a key on this node is still to be rebuilt"), in the same atomic step, so that no
 * process ever sees the new generation without its pending set; the old generation's pending set,
 * if any came over, is dropped.
 *
 * KEYS[1]  the node's generation marker (lb:{generation:v2:<n>}, see markerKey in generation.ts)
 * ARGV[1]  a fresh random generation id, used only when a new generation is set
 *
 * Returns {generation, recovering, claimed}: the generation now in force, 1 while its pending set
 * exists (some bucket is still to be rebuilt), and why this call set it: 0 it did not, 1 the
 * marker was missing, 2 another node had set it.
 *
 * The pending set's name is built here from KEYS[1] (which carries the client's key prefix) as
 * KEYS[1] .. ':' .. generation .. ':pending', the name pendingKey() gives in generation.ts; it
 * follows the marker's hash tag, so both live in one Cluster slot.
 *
 * O(1).
 */
export const checkGenerationLua = `
local myid = redis.pcall('CLUSTER', 'MYID')
if type(myid) ~= 'string' then
  myid = ''
end
local marker = redis.call('HMGET', KEYS[1], 'generation', 'owner')
local generation = marker[1]
local claimed = 0
if not generation then
  claimed = 1
elseif marker[2] ~= myid then
  claimed = 2
  redis.call('DEL', KEYS[1] .. ':' .. generation .. ':pending')
end
if claimed ~= 0 then
  generation = ARGV[1]
  redis.call('HSET', KEYS[1], 'generation', generation, 'owner', myid)
  redis.call('SADD', KEYS[1] .. ':' .. generation .. ':pending', '*')
end
return {generation, redis.call('EXISTS', KEYS[1] .. ':' .. generation .. ':pending'), claimed}
`;
