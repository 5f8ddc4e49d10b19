import { recountPositionLua } from './recount-position.js';

/**
 * recountChunk: reads the next chunk of a DENSE board's shard for a recount of its bucket's
 * distinct scores (see recountDense in ranking/dense.ts) and moves the shard's recount position
 * past it, in one atomic step, so every write to the shard is either before the chunk (and read in
 * it, or not, as its position says) or after it (and told so, see recount-position.ts).
 *
 * KEYS[1]  the shard's sorted set
 * KEYS[2]  the shard's recount position
 * ARGV[1]  the recount's id
 * ARGV[2]  how many members (at least 1)
 *
 * Returns {id1, packed1, id2, packed2, ...}: the members strictly after the position in REV order;
 * fewer than asked means the shard is done (the position says so from now on). False when the
 * position is another recount's (this one was taken over): nothing changes.
 *
 * O(log N + count), O(log T · log N + count) when T members tie on the position's packed value.
 */
export const recountChunkLua = `${recountPositionLua}
local key = KEYS[1]
local state = recountState(KEYS[2])
if state.id ~= ARGV[1] then
  return false
end
local count = tonumber(ARGV[2])
local from = 0
if state.packed ~= '' then
  from = atOrAhead(key, state.packed, state.member, countAhead(key, state.packed, state.member))
end
local rows = redis.call('ZRANGE', key, from, from + count - 1, 'REV', 'WITHSCORES')
if #rows < 2 * count then
  redis.call('HSET', KEYS[2], 'done', '1')
else
  redis.call('HSET', KEYS[2], 'packed', rows[#rows], 'member', rows[#rows - 1])
end
return rows
`;
