import { positionLua } from './position.js';

/**
 * Lua shared by the scripts that change or scan a DENSE board's shard while its bucket's distinct
 * scores may be being recounted (see recountDense in ranking/dense.ts): not a script by itself, but
 * the start of each (apply-scores.ts's DENSE variant, remove-member.ts's, recount-chunk.ts).
 *
 * A recount scans each shard in rank order, chunk by chunk; the shard's recount position, a hash
 * {id, done, packed, member} in the shard's slot, says how far: every position at or ahead of
 * (packed, member) in REV order has been counted (none while packed is ''; all once done is 1, and
 * all when no recount ever ran, id ''). Because a write and a chunk of the scan are each one
 * atomic step on the shard, each write can tell exactly which of its member's old and new
 * positions the recount has counted, and so what to move in the recount's counts: a count that
 * follows every change and every chunk, whatever order they reach the counts in.
 *
 * Defines (after position.ts's):
 * - recountState(key): {id, done, packed, member} of the shard's recount position.
 * - counted(state, packed, member): whether that position has been counted.
 */
export const recountPositionLua = `${positionLua}
local function recountState(key)
  local state = redis.call('HMGET', key, 'id', 'done', 'packed', 'member')
  if not state[1] then
    return {id = '', done = true}
  end
  return {id = state[1], done = state[2] == '1', packed = state[3] or '', member = state[4] or ''}
end

local function counted(state, packed, member)
  if state.done then return true end
  if state.packed == '' then return false end
  local p, c = tonumber(packed), tonumber(state.packed)
  if p ~= c then return p > c end
  return member == state.member or bytesAfter(member, state.member)
end
`;
