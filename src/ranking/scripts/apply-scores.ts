import { recountPositionLua } from './recount-position.js';

/**
 * applyScores: writes a batch's packed board scores into one or more sorted sets (buckets, or
 * shards of sharded buckets), set after set in the order given and, in each, in the batch's order,
 * each exactly as one write on its own would go:
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
 * One call carries every sorted set of a group that lives on one node (on a Redis Cluster one set,
 * each bucket and shard being a hash slot of its own; see applyWrites in index.ts): a single submission writes its five or so
 * buckets and reads its places back in one command, where it took one command a bucket before
 * (issue 54: the client's cost per command, not Redis's work, dominated the write path's CPU).
 * The rebuild write and the live write are one atomic step, so a swap can no longer fall between
 * them either.
 *
 * A live write is three commands: ZSCORE (the value before), ZADD … CH (whether it moved) and
 * ZREVRANK (the place after). The size is read once a set and counted on; the expiry, the same for
 * every write of a set, is set once; the rank before a write is read only where it can tell
 * anything (below). Why: in a bucket of a million members each walk of the skiplist misses the
 * CPU's caches, and Redis spent about a quarter more a write reading the rank before every write
 * and the size and expiry after it.
 *
 * On a sharded board a set is one shard, and rank, size and top are the shard's: a change of a
 * shard's top is a candidate change of the bucket's (every member of the bucket's top is in its
 * shard's top), which the watchers settle by reading the merged top.
 *
 * Every key the script touches is in KEYS (the sets, their rebuild keys and tombstone sets), so on
 * a Cluster one call's keys are one slot's. The sets of one call on one node may be of many slots:
 * Redis checks that only in cluster mode.
 *
 * KEYS[3s-2]  set s's sorted set (s = 1 .. ARGV[1])
 * KEYS[3s-1]  its rebuild key (see rebuildKey in rebuild.ts: same hash tag, so same Cluster slot)
 * KEYS[3s]    its rebuild's tombstone set (see rebuildTombstoneKey in rebuild.ts)
 * ARGV[1]     how many sets, S
 * then, for each set in the order of KEYS:
 *   'GT' or 'LT': the direction this board's packed values only move in
 *   unix time (seconds) at which the key expires, or 0 for a key kept until it is dropped
 *   the board's topSize: how many places topChanged watches
 *   n, the number of writes into the set
 *   n (player id, packed score) pairs, in the order the writes apply
 *
 * Returns a flat array of six replies per write, set after set, in the writes' order: the
 * member's 0-based rank in REV order (false when the key has already expired), its packed score
 * after the write (as sent when the write moved it, as stored otherwise; the same number either
 * way), the number of members of its set, 1 when the write changed the top else 0, and its packed
 * score before the write (false when it was not there; a sharded bucket's write path uses it to
 * place each write of a batch as of its own moment, see shardedPlaces in index.ts), and its
 * 0-based rank just before the write (false when it was not there): the submit answer's
 * previousRank (issue 60), read by one more ZREVRANK only for a write that moves a member already
 * there (a BEST score improved, every SUM write); a write that leaves its member where it was
 * answers the rank after, which is the same.
 *
 * A write changed the top when the member is inside it after the write and its packed value
 * moved (it entered the top, or moved or changed inside it); or when it was inside the top before
 * and is not after. Only two writes can leave the top: one that moves its member down (a SUM on a
 * LOW_FIRST board, direction LT) and one whose key's expiry has passed (EXPIREAT then deletes the
 * key); only those read the rank before the write, and a write moving up (GT) that ends outside
 * the top was outside it before. Then, once a set, the script SPUBLISHes (sharded pub/sub, on one
 * node as on a Cluster) on the set's top channel, its key .. '#top' (see shardTopChannel in
 * keys.ts): the key carries the client's key prefix already, and the channel keeps the key's hash
 * tag. A batch far below the top publishes nothing. The checks and the writes are one atomic
 * step, so no other write can slip between them.
 *
 * Because each write only ever moves a member in its board's direction, a replayed or reordered
 * call is harmless: the index converges on the best (or the total) whatever the order of arrival,
 * and a replay changes nothing, so it announces nothing.
 *
 * O(k log N) for k writes into sets of N members.
 */
/**
 * The end of a write in applyScores and applyWideScores (wide.ts), each line indented by `indent`:
 * whether it changed the top (from rank, rankBefore and moved), noted in anyChanged, and its six
 * replies appended (rank, packed, size, changed, packedBefore, rank held before); `n` is where they
 * start. The rank held before is rankBefore where it was read, else the rank after: a write that
 * was not read before it did not move its member, so nothing else changed its place either.
 */
export function writeRepliesLua(indent: string): string {
  return `local changed = 0
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
if packedBefore then
  replies[n + 6] = rankBefore ~= false and rankBefore or rank
else
  replies[n + 6] = false
end
`.replace(/^(?=.)/gm, indent);
}

const applyScoresScript = (dense: { setup: string; perWrite: string; main: string } | null) => `
${dense?.setup ?? ''}local replies = {}
-- Writes ARGV[from], ARGV[from + 1], ... ARGV[last] as (member, packed) pairs into one set.
local function applySet(key, rebuildKey, tombstoneKey, direction, expireAt, topSize, from, last)
  -- Only a write that can move its member down (LT) can take it out of the top; only for such a
  -- write is the rank before it read.
  local movesDown = direction == 'LT'
  local rebuilding = redis.call('EXISTS', rebuildKey) == 1
  local size = redis.call('ZCARD', key)
  local expired = false
  local anyChanged = false
  for i = from, last - 1, 2 do
    local member = ARGV[i]
    local packedIn = ARGV[i + 1]
    if rebuilding then
      redis.call('SREM', tombstoneKey, member)
      redis.call('ZADD', rebuildKey, direction, packedIn, member)
    end
    local first = i == from
    local packedBefore = redis.call('ZSCORE', key, member)
    local rankBefore = false
    -- The first write of a set with an expiry also reads it: the expiry may be past already. So
    -- does a write that will move its member (the rank it held is then not the one after it, and
    -- the answer's previousRank needs it); one that does not move it held the rank it has after.
    if packedBefore and (movesDown or (first and expireAt ~= '0') or tonumber(packedIn) > tonumber(packedBefore)) then
      rankBefore = redis.call('ZREVRANK', key, member)
    end
    local moved = redis.call('ZADD', key, direction, 'CH', packedIn, member) == 1
    -- Every write of a set shares its expiry: set once, unless it is past, when EXPIREAT deletes the
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
${writeRepliesLua('    ')}${dense?.perWrite ?? ''}  end
  if anyChanged then
    redis.call('SPUBLISH', key .. '#top', '')
  end
end
${
  dense?.main ??
  `local at = 2
for s = 1, tonumber(ARGV[1]) do
  local from = at + 4
  local last = from + 2 * tonumber(ARGV[at + 3]) - 1
  applySet(KEYS[3 * s - 2], KEYS[3 * s - 1], KEYS[3 * s], ARGV[at], ARGV[at + 1], tonumber(ARGV[at + 2]), from, last)
  at = last + 1
end
`
}return replies
`;

export const applyScoresLua = applyScoresScript(null);

/**
 * applyDenseScores: applyScores for one DENSE board's shard (see ranking/dense.ts), which also
 * says, for each write, whether a recount of its bucket running now has counted the member's
 * position before and after the write (see recount-position.ts), so the counts can be moved
 * exactly (dense-apply.ts). Other boards' writes never run it. One set a call.
 *
 * KEYS[1]  the sorted set
 * KEYS[2]  its rebuild key
 * KEYS[3]  its rebuild's tombstone set
 * KEYS[4]  the shard's recount position (see recountPositionKey in dense.ts)
 * ARGV[1]  'GT' or 'LT', as applyScores's direction
 * ARGV[2]  the expiry, as applyScores's
 * ARGV[3]  the board's topSize
 * ARGV[4.. ] (player id, packed score) pairs, in the order the writes apply
 *
 * Returns applyScores's six replies per write plus two: 1 when the recount had counted the
 * position before the write (0 when not, or when the member was not there), and the same after
 * it; then, once at the end, the recount's id ('' when none ever ran).
 *
 * O(k log N) for k writes.
 */
export const applyDenseScoresLua = applyScoresScript({
  setup: `${recountPositionLua}
local recount = recountState(KEYS[4])
`,
  perWrite: `    replies[n + 7] = (packedBefore and counted(recount, packedBefore, member)) and 1 or 0
    replies[n + 8] = (packed and counted(recount, packed, member)) and 1 or 0
`,
  main: `applySet(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], tonumber(ARGV[3]), 4, #ARGV)
replies[#replies + 1] = recount.id
`,
});
