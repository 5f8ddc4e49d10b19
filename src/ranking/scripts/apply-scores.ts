import { recountPositionLua } from './recount-position.js';

/**
 * applyScores: writes a batch's packed board scores into one sorted set (a bucket's, or one shard's
 * of a sharded bucket), in the batch's order, each exactly as one write on its own would go:
 *
 * 1. into the key's rebuild key while a rebuild fills it. A rebuild reads a snapshot of the
 *    database; a result committed after that snapshot reaches the index only through its own
 *    write, and that write must land in the key about to be swapped in, or the swap would drop
 *    it. Nothing is written when no rebuild runs: a ZADD would create a key nobody swaps in or
 *    deletes. The write lifts the member's tombstone: it is newer than the removal (an unflag after
 *    a flag; see rebuild-remove.ts);
 * 2. into the live set, never moving the member backwards (ZADD GT or LT), setting the key's
 *    expiry from its bucket, and reading the member's place right after its own write, before the
 *    next write of the batch, so each write is placed as of its own moment.
 *
 * One call carries what took two script calls per write before: the client's cost per command,
 * not Redis's, dominated the write path's CPU. The rebuild write and the live write are now one
 * atomic step, so a swap can no longer fall between them either.
 *
 * A live write is three commands: ZSCORE (the value before), ZADD … CH (whether it moved) and
 * ZREVRANK (the place after). The size is read once a call and counted on; the expiry, the same for
 * every write of a call, is set once; the rank before a write is read only where it can tell
 * anything (below). Why: in a bucket of a million members each walk of the skiplist misses the
 * CPU's caches, and Redis spent about a quarter more a write reading the rank before every write
 * and the size and expiry after it.
 *
 * On a sharded board KEYS[1] is one shard, and rank, size and top are the shard's: a change of a
 * shard's top is a candidate change of the bucket's (every member of the bucket's top is in its
 * shard's top), which the watchers settle by reading the merged top.
 *
 * KEYS[1]  the sorted set
 * KEYS[2]  its rebuild key (see rebuildKey in rebuild.ts: same hash tag, so same Cluster slot)
 * KEYS[3]  its rebuild's tombstone set (see rebuildTombstoneKey in rebuild.ts)
 * ARGV[1]  'GT' or 'LT': the direction this board's packed values only move in
 * ARGV[2]  unix time (seconds) at which the key expires, or 0 for a key kept until it is dropped
 * ARGV[3]  the board's topSize: how many places topChanged watches
 * ARGV[4.. ] (player id, packed score) pairs, in the order the writes apply
 *
 * Returns a flat array of five replies per write, in the writes' order: the member's 0-based rank
 * in REV order (false when the key has already expired), its packed score after the write (as
 * sent when the write moved it, as stored otherwise; the same number either way), the number of
 * members, 1 when the write changed the top else 0, and its packed score before the write (false
 * when it was not there; a sharded bucket's write path uses it to place each write of a batch as
 * of its own moment, see shardedPlaces in index.ts).
 *
 * A write changed the top when the member is inside it after the write and its packed value
 * moved (it entered the top, or moved or changed inside it); or when it was inside the top before
 * and is not after. Only two writes can leave the top: one that moves its member down (a SUM on a
 * LOW_FIRST board, direction LT) and one whose key's expiry has passed (EXPIREAT then deletes the
 * key); only those read the rank before the write, and a write moving up (GT) that ends outside
 * the top was outside it before. Then, once for the whole call, the script SPUBLISHes (sharded
 * pub/sub, on one node as on a Cluster) on the key's top channel, KEYS[1] .. '#top' (see
 * shardTopChannel in keys.ts): KEYS[1] carries the client's key prefix already, and the channel
 * keeps the key's hash tag. A batch far below the top publishes nothing. The checks and the writes
 * are one atomic step, so no other write can slip between them.
 *
 * Because each write only ever moves a member in its board's direction, a replayed or reordered
 * call is harmless: the index converges on the best (or the total) whatever the order of arrival,
 * and a replay changes nothing, so it announces nothing.
 *
 * O(k log N) for k writes into a set of N members.
 */
const applyScoresScript = (dense: { setup: string; perWrite: string; end: string } | null) => `
${dense?.setup ?? ''}local key = KEYS[1]
local direction = ARGV[1]
local expireAt = ARGV[2]
local topSize = tonumber(ARGV[3])
-- Only a write that can move its member down (LT) can take it out of the top; only for such a
-- write is the rank before it read.
local movesDown = direction == 'LT'
local rebuilding = redis.call('EXISTS', KEYS[2]) == 1
local size = redis.call('ZCARD', key)
local expired = false
local replies = {}
local anyChanged = false
for i = 4, #ARGV - 1, 2 do
  local member = ARGV[i]
  local packedIn = ARGV[i + 1]
  if rebuilding then
    redis.call('SREM', KEYS[3], member)
    redis.call('ZADD', KEYS[2], direction, packedIn, member)
  end
  local first = i == 4
  local packedBefore = redis.call('ZSCORE', key, member)
  local rankBefore = false
  -- The first write of a call with an expiry also reads it: the expiry may be past already.
  if packedBefore and (movesDown or (first and expireAt ~= '0')) then
    rankBefore = redis.call('ZREVRANK', key, member)
  end
  local moved = redis.call('ZADD', key, direction, 'CH', packedIn, member) == 1
  -- Every write of a call shares its expiry: set once, unless it is past, when EXPIREAT deletes the
  -- key, as it does again after each later write recreates it.
  if expireAt ~= '0' and (first or expired) then
    redis.call('EXPIREAT', key, expireAt)
    expired = redis.call('EXISTS', key) == 0
  end
  local rank, packed = false, false
  if expired then
    size = 0
  else
    if not packedBefore then size = size + 1 end
    rank = redis.call('ZREVRANK', key, member)
    packed = moved and packedIn or packedBefore
  end
  local changed = 0
  if rank ~= false and rank < topSize then
    if moved then changed = 1 end
  elseif rankBefore ~= false and rankBefore < topSize then
    changed = 1
  end
  if changed == 1 then anyChanged = true end
  local n = #replies
  replies[n + 1] = rank
  replies[n + 2] = packed
  replies[n + 3] = size
  replies[n + 4] = changed
  replies[n + 5] = packedBefore
${dense?.perWrite ?? ''}end
if anyChanged then
  redis.call('SPUBLISH', key .. '#top', '')
end
${dense?.end ?? ''}return replies
`;

export const applyScoresLua = applyScoresScript(null);

/**
 * applyDenseScores: applyScores for a DENSE board's shard (see ranking/dense.ts), which also says,
 * for each write, whether a recount of its bucket running now has counted the member's position
 * before and after the write (see recount-position.ts), so the counts can be moved exactly
 * (dense-apply.ts). Other boards' writes never run it.
 *
 * KEYS[1..3]  as applyScores
 * KEYS[4]     the shard's recount position (see recountPositionKey in dense.ts)
 * ARGV        as applyScores
 *
 * Returns applyScores's five replies per write plus two: 1 when the recount had counted the
 * position before the write (0 when not, or when the member was not there), and the same after
 * it; then, once at the end, the recount's id ('' when none ever ran).
 *
 * O(k log N) for k writes.
 */
export const applyDenseScoresLua = applyScoresScript({
  setup: `${recountPositionLua}
local recount = recountState(KEYS[4])
`,
  perWrite: `  replies[n + 6] = (packedBefore and counted(recount, packedBefore, member)) and 1 or 0
  replies[n + 7] = (packed and counted(recount, packed, member)) and 1 or 0
`,
  end: `replies[#replies + 1] = recount.id
`,
});
