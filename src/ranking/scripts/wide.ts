import { writeRepliesLua } from './apply-scores.js';
import { positionLua } from './position.js';
import { recountPositionLua } from './recount-position.js';

/**
 * The scripts of a board whose time is in the member (packing.ts `timeInMember`; see
 * ranking/members.ts): the sorted set's member is the time then the player id, and a hash beside
 * each set (memberHashKey in keys.ts) maps each player id to its member. Every script here that is
 * given a player id finds its member through the hash, and every change of a member changes the
 * hash in the same step, so the set holds one member per player and the hash names exactly it.
 * Every other board runs the scripts beside these (apply-scores.ts, remove-member.ts, rebuild-*.ts,
 * remove-inactive.ts) unchanged. The position reads (count-ahead.ts, read-after.ts, read-near.ts,
 * recount-chunk.ts) and read-top.ts take and answer members as they are, so they serve both.
 */

/**
 * Lua: placeMember(key, hash, id, packed, member), the write of one result into one set and its
 * hash: the member replaces the one the hash names only when it ranks ahead of it (a higher
 * double, or an equal one and a member later in byte order: an earlier time, then a player id
 * later in byte order; what ZADD GT decides on one member, decided across the two). Answers
 * memberBefore, packedBefore (false, false when the player was not there) and whether it moved.
 * Needs positionLua's bytesAfter.
 */
const placeMemberLua = `
local function placeMember(key, hash, id, packed, member)
  local memberBefore = redis.call('HGET', hash, id)
  local packedBefore = memberBefore and redis.call('ZSCORE', key, memberBefore)
  if not packedBefore then memberBefore = false end
  if packedBefore then
    local p, q = tonumber(packed), tonumber(packedBefore)
    if p < q or (p == q and not bytesAfter(member, memberBefore)) then
      return memberBefore, packedBefore, false
    end
    redis.call('ZREM', key, memberBefore)
  end
  redis.call('ZADD', key, packed, member)
  redis.call('HSET', hash, id, member)
  return memberBefore, packedBefore, true
end
`;

/**
 * applyWideScores: applyScores (see apply-scores.ts) for one set of a board whose time is in the
 * member: each write goes into a running rebuild first (its tombstone lifted), then the live set,
 * through placeMember, never moving a player backwards; the key and its hash expire together; the
 * place is read right after the write, and the set's top channel is told once when any write
 * changed its top. Boards with tie-break columns are BEST boards, whose results only ever move
 * up: no write can leave the top but one whose key's expiry has passed.
 *
 * KEYS[1]  the sorted set
 * KEYS[2]  its rebuild key
 * KEYS[3]  its rebuild's tombstone set (player ids)
 * KEYS[4]  the set's member hash
 * KEYS[5]  the rebuild key's member hash
 * ARGV[1]  unix time (seconds) at which the key expires, or 0 for a key kept until it is dropped
 * ARGV[2]  the board's topSize
 * ARGV[3.. ] (player id, packed, member) triples, in the order the writes apply
 *
 * Returns, per write, applyScores's six replies (rank, packed, size, changed, packedBefore, rank
 * held before), then the member after the write and the one before it (false when none).
 *
 * O(k log N) for k writes.
 */
const applyWideScript = (dense: { setup: string; perWrite: string } | null) => `${dense?.setup ?? positionLua}${placeMemberLua}
local key, rebuildKey, tombstoneKey, hash, rebuildHash = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local expireAt, topSize = ARGV[1], tonumber(ARGV[2])
local rebuildTtl = redis.call('PTTL', rebuildKey)
local rebuilding = rebuildTtl ~= -2
local size = redis.call('ZCARD', key)
local expired = false
local anyChanged = false
local replies = {}
for i = 3, #ARGV - 2, 3 do
  local id, packedIn, memberIn = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if rebuilding then
    redis.call('SREM', tombstoneKey, id)
    placeMember(rebuildKey, rebuildHash, id, packedIn, memberIn)
    if rebuildTtl > 0 then redis.call('PEXPIRE', rebuildHash, rebuildTtl) end
  end
  local first = i == 3
  -- Unlike applyScores, every write of a player already there reads the rank before it: the
  -- answer's previousRank (whether the write moves the member is placeMember's to decide, across
  -- two members), and the check of an expiry that may be past. Such boards are few (members.ts).
  local held = redis.call('HGET', hash, id)
  local rankBefore = held and redis.call('ZREVRANK', key, held) or false
  local memberBefore, packedBefore, moved = placeMember(key, hash, id, packedIn, memberIn)
  if expireAt ~= '0' and (first or expired) then
    redis.call('EXPIREAT', key, expireAt)
    redis.call('EXPIREAT', hash, expireAt)
    expired = redis.call('EXISTS', key) == 0
  end
  local rank, packed, member = false, false, false
  if expired then
    size = 0
  else
    if not packedBefore then size = size + 1 end
    member = moved and memberIn or memberBefore
    rank = redis.call('ZREVRANK', key, member)
    packed = moved and packedIn or packedBefore
  end
${writeRepliesLua('  ')}  replies[n + 7] = member
  replies[n + 8] = memberBefore
${dense?.perWrite ?? ''}end
if anyChanged then
  redis.call('SPUBLISH', key .. '#top', '')
end
${dense ? 'replies[#replies + 1] = recount.id\n' : ''}return replies
`;

export const applyWideScoresLua = applyWideScript(null);

/**
 * applyWideDenseScores: applyWideScores for a DENSE board's shard, which also says, per write,
 * whether a running recount had counted the member's position before and after it (as
 * applyDenseScores does; see recount-position.ts).
 *
 * KEYS[1..5]  as applyWideScores
 * KEYS[6]     the shard's recount position
 * ARGV        as applyWideScores
 *
 * Returns applyWideScores's eight replies per write plus countedBefore and countedAfter (1 or 0);
 * then, once at the end, the recount's id ('' when none ever ran). O(k log N).
 */
export const applyWideDenseScoresLua = applyWideScript({
  setup: `${recountPositionLua}
local recount = recountState(KEYS[6])
`,
  perWrite: `  replies[n + 9] = (packedBefore and counted(recount, packedBefore, memberBefore)) and 1 or 0
  replies[n + 10] = (packed and counted(recount, packed, member)) and 1 or 0
`,
});

/**
 * removeWideMember: removeMember (see remove-member.ts) for a set whose members carry the time:
 * takes the player's member out of the set and its field out of the hash.
 *
 * KEYS[1]  the sorted set
 * KEYS[2]  its member hash
 * ARGV[1]  player id
 *
 * Returns the member's 0-based rank in REV order just before the removal, or nil when the player
 * was not there (the hash's field, if any, is dropped either way). O(log N).
 */
export const removeWideMemberLua = `
local member = redis.call('HGET', KEYS[2], ARGV[1])
if not member then return false end
redis.call('HDEL', KEYS[2], ARGV[1])
local rank = redis.call('ZREVRANK', KEYS[1], member)
if rank then
  redis.call('ZREM', KEYS[1], member)
end
return rank
`;

/**
 * removeWideDenseMember: removeDenseMember for a DENSE board's shard whose members carry the time.
 *
 * KEYS[1]  the shard's sorted set
 * KEYS[2]  the shard's recount position
 * KEYS[3]  the set's member hash
 * ARGV[1]  player id
 *
 * Returns {rank, packed, counted, recount id} as removeDenseMember. O(log N).
 */
export const removeWideDenseMemberLua = `${recountPositionLua}
local recount = recountState(KEYS[2])
local member = redis.call('HGET', KEYS[3], ARGV[1])
local rank = member and redis.call('ZREVRANK', KEYS[1], member)
if member then redis.call('HDEL', KEYS[3], ARGV[1]) end
if not rank then
  return {false, false, 0, recount.id}
end
local packed = redis.call('ZSCORE', KEYS[1], member)
redis.call('ZREM', KEYS[1], member)
return {rank, packed, counted(recount, packed, member) and 1 or 0, recount.id}
`;

/** removeWideInactive's and its DENSE variant's loop: `perRemoved` is the Lua run after a member is taken out. */
const removeWideInactiveScript = (setup: string, hash: string, perRemoved: string, perKept: string, tail: string) => `${setup}
local out = {}
for i = 1, #ARGV, 2 do
  local id, read = ARGV[i], ARGV[i + 1]
  local cut = string.find(read, ' ', 1, true)
  local packed, readMember = string.sub(read, 1, cut - 1), string.sub(read, cut + 1)
  local member = redis.call('HGET', ${hash}, id)
  local held = member == readMember and redis.call('ZSCORE', KEYS[1], member)
  if held and tonumber(held) == tonumber(packed) then
    out[#out + 1] = redis.call('ZREVRANK', KEYS[1], member)
${perRemoved}    redis.call('ZREM', KEYS[1], member)
    redis.call('HDEL', ${hash}, id)
  else
    out[#out + 1] = false
${perKept}  end
end
${tail}return out
`;

/**
 * removeWideInactive: removeInactive (see remove-inactive.ts) for a set whose members carry the
 * time: each player, as the scan read it (see scanShard in index.ts: the player id, then the packed
 * value and the member, a space between), is taken out only while the hash still names that member
 * and it still holds that value (a result since, even an equal one reached earlier, stays).
 *
 * KEYS[1]  the shard's sorted set
 * KEYS[2]  its member hash
 * ARGV     (player id, 'packed member') pairs
 *
 * Returns per pair the 0-based rank in REV order the member held, or false when not removed.
 * O(k log N).
 */
export const removeWideInactiveLua = removeWideInactiveScript('', 'KEYS[2]', '', '', '');

/**
 * removeWideInactiveDense: removeInactiveDense for a DENSE shard whose members carry the time.
 *
 * KEYS[1]  the shard's sorted set
 * KEYS[2]  the shard's recount position
 * KEYS[3]  its member hash
 * ARGV     (player id, 'packed member') pairs, as removeWideInactive's
 *
 * Returns {rank1, counted1, ..., recount id} as removeInactiveDense. O(k log N).
 */
export const removeWideInactiveDenseLua = removeWideInactiveScript(
  `${recountPositionLua}
local recount = recountState(KEYS[2])`,
  'KEYS[3]',
  `    out[#out + 1] = counted(recount, held, member) and 1 or 0
`,
  `    out[#out + 1] = 0
`,
  `out[#out + 1] = recount.id
`,
);

/**
 * beginWideRebuild: beginRebuild (see rebuild-begin.ts) for a set whose members carry the time: a
 * dead rebuild's member hash is cleared with its tombstones.
 *
 * KEYS[1]  the rebuild key
 * KEYS[2]  its tombstone set
 * KEYS[3]  its member hash
 * ARGV     as beginRebuild: the marker, the key's lifetime in ms
 *
 * Returns 1 when claimed, 0 when another rebuild holds the key. O(1).
 */
export const beginWideRebuildLua = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('ZADD', KEYS[1], 0, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/**
 * writeWideRebuild: a rebuild's chunk of one shard (see rebuild.ts), for a set whose members carry
 * the time: each result through placeMember, so that one written by the write path meanwhile (a
 * newer result, already in the rebuild key) is never doubled nor moved back by the snapshot's.
 *
 * KEYS[1]  the rebuild key
 * KEYS[2]  its member hash
 * ARGV[1]  the key's lifetime in ms, renewed on both
 * ARGV[2.. ] (player id, packed, member) triples
 *
 * Returns the number of players written or moved. O(k log N).
 */
export const writeWideRebuildLua = `${positionLua}${placeMemberLua}
local moved = 0
for i = 2, #ARGV - 2, 3 do
  local _, _, m = placeMember(KEYS[1], KEYS[2], ARGV[i], ARGV[i + 1], ARGV[i + 2])
  if m then moved = moved + 1 end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return moved
`;

/**
 * removeFromWideRebuild: removeFromRebuild (see rebuild-remove.ts) for a set whose members carry
 * the time: the player's member leaves the running rebuild and its hash, and the player id is
 * tombstoned.
 *
 * KEYS[1]  the rebuild key
 * KEYS[2]  its tombstone set
 * KEYS[3]  its member hash
 * ARGV[1]  player id
 *
 * Returns 1 when a rebuild is running, else 0 (nothing written). O(log N).
 */
export const removeFromWideRebuildLua = `
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then
  return 0
end
local member = redis.call('HGET', KEYS[3], ARGV[1])
if member then
  redis.call('ZREM', KEYS[1], member)
  redis.call('HDEL', KEYS[3], ARGV[1])
end
redis.call('SADD', KEYS[2], ARGV[1])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return 1
`;

/**
 * swapWideRebuilt: swapRebuilt (see rebuild-swap.ts) for a set whose members carry the time: the
 * tombstoned players' members leave the rebuild key and its hash, then both are renamed over the
 * live set and its hash in one step, with the live key's expiry.
 *
 * KEYS[1]  the rebuild key
 * KEYS[2]  the live sorted set
 * KEYS[3]  the tombstone set
 * KEYS[4]  the rebuild key's member hash
 * KEYS[5]  the live set's member hash
 * ARGV     as swapRebuilt: the marker, the expiry (unix seconds, 0 for none)
 *
 * Returns the number of members now live, or -1 when the marker is gone (nothing changes).
 * O(T log N) for T tombstones; the old set and hash are freed in the background.
 */
export const swapWideRebuiltLua = `
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return -1
end
redis.call('ZREM', KEYS[1], ARGV[1])
local removed = redis.call('SMEMBERS', KEYS[3])
for i = 1, #removed do
  local member = redis.call('HGET', KEYS[4], removed[i])
  if member then
    redis.call('ZREM', KEYS[1], member)
    redis.call('HDEL', KEYS[4], removed[i])
  end
end
redis.call('DEL', KEYS[3])
redis.call('UNLINK', KEYS[2], KEYS[5])
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[4])
  return 0
end
redis.call('RENAME', KEYS[1], KEYS[2])
if redis.call('EXISTS', KEYS[4]) == 1 then
  redis.call('RENAME', KEYS[4], KEYS[5])
end
for k = 2, 5, 3 do
  if ARGV[2] == '0' then
    redis.call('PERSIST', KEYS[k])
  else
    redis.call('EXPIREAT', KEYS[k], ARGV[2])
  end
end
return redis.call('ZCARD', KEYS[2])
`;

/**
 * dropWideRebuild: dropRebuild (see rebuild-drop.ts) for a set whose members carry the time: the
 * rebuild key, its tombstones and its member hash go, unless the key is another rebuild's now.
 *
 * KEYS[1]  the rebuild key
 * KEYS[2]  its tombstone set
 * KEYS[3]  its member hash
 * ARGV[1]  the failed rebuild's marker
 *
 * Returns 1 when deleted, 0 when left alone. O(1): freed in the background.
 */
export const dropWideRebuildLua = `
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('UNLINK', KEYS[1], KEYS[2], KEYS[3])
  return 1
end
return 0
`;
