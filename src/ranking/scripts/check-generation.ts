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
 * It also keeps the system of record's mark beside the generation (fields pg_identity, pg_lsn,
 * pg_writes, pg_at: what the database is, how far its write-ahead log and its outbox sequence had
 * come, and the database's clock when it said so; see source-mark.ts). The mark kept is replaced
 * by a newer one only once it is more than a second older; before that, a new mark is compared
 * with it: another database, or one whose log or sequence went back while its clock went on, was
 * restored from a backup (or swapped), and the index holds what it no longer has, so a new
 * generation is set as for a lost index. Comparing only marks a second apart keeps processes that
 * read the database a moment apart from ever mistaking each other's readings for a step back.
 *
 * A generation's pending set is named after it (pendingKey in generation.ts, following the
 * marker's hash tag, so all live in one Cluster slot), and every key a script touches is declared:
 * the caller names the generation it expects to find (the one it last read, '' for none) and the
 * pending sets of that one and of the fresh one. When the marker holds another, nothing is changed
 * and the generation found is answered, for the caller to ask again naming it.
 *
 * KEYS[1]  the node's generation marker (lb:{generation:v2:<n>}, see markerKey in generation.ts)
 * KEYS[2]  the pending set of the generation expected (pendingKey(marker, ARGV[2]))
 * KEYS[3]  the pending set of the fresh generation (pendingKey(marker, ARGV[1]))
 * ARGV[1]  a fresh random generation id, used only when a new generation is set
 * ARGV[2]  the generation expected in the marker, '' for none
 * ARGV[3]  the database's identity, or '' when it could not be read (then nothing is compared)
 * ARGV[4]  its write-ahead log position (bytes)
 * ARGV[5]  its outbox sequence's last value
 * ARGV[6]  the database's clock when read (ms since the epoch)
 *
 * Returns {generation, recovering, claimed}: the generation now in force, 1 while its pending set
 * exists (some bucket is still to be rebuilt), and why this call set it: 0 it did not, 1 the
 * marker was missing, 2 another node had set it, 3 the database went back (restored). When the
 * marker holds another generation than ARGV[2]: {that generation, -1, 0}, and nothing changed.
 *
 * O(1).
 */
export const checkGenerationLua = `
local marker = redis.call('HMGET', KEYS[1], 'generation', 'owner', 'pg_identity', 'pg_lsn', 'pg_writes', 'pg_at')
local generation = marker[1]
if (generation or '') ~= ARGV[2] then
  return {generation, -1, 0}
end
local myid = redis.pcall('CLUSTER', 'MYID')
if type(myid) ~= 'string' then
  myid = ''
end
local claimed = 0
local marked = ARGV[3] ~= nil and ARGV[3] ~= ''
local newer = false
if marked and marker[3] then
  newer = tonumber(ARGV[6]) > tonumber(marker[6]) + 1000
end
if not generation then
  claimed = 1
elseif marker[2] ~= myid then
  claimed = 2
elseif marked and marker[3] and (marker[3] ~= ARGV[3] or (newer and (tonumber(ARGV[4]) < tonumber(marker[4]) or tonumber(ARGV[5]) < tonumber(marker[5])))) then
  claimed = 3
end
if claimed >= 2 then
  redis.call('DEL', KEYS[2])
end
local pending = KEYS[2]
if claimed ~= 0 then
  generation = ARGV[1]
  pending = KEYS[3]
  redis.call('HSET', KEYS[1], 'generation', generation, 'owner', myid)
  redis.call('SADD', pending, '*')
end
if marked and (claimed ~= 0 or not marker[3] or newer) then
  redis.call('HSET', KEYS[1], 'pg_identity', ARGV[3], 'pg_lsn', ARGV[4], 'pg_writes', ARGV[5], 'pg_at', ARGV[6])
end
return {generation, redis.call('EXISTS', pending), claimed}
`;
