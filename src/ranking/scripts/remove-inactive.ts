import { recountPositionLua } from './recount-position.js';

/**
 * removeInactive: takes a batch of inactive players out of one shard of a bucket (see
 * jobs/inactive-players.ts), each only while it still holds the packed value the job's scan read:
 * a member written since (a new result that changed its board score) stays. Tells where each
 * removed member stood, so the caller knows whether the shard's top changed.
 *
 * KEYS[1]  the shard's sorted set
 * ARGV     (player id, packed) pairs, as the scan read them
 *
 * Returns, per pair, the member's 0-based rank in REV order just before its removal, or false when
 * it was not removed (gone already, or holding another value now).
 *
 * O(k log N) for k pairs.
 */
export const removeInactiveLua = `
local out = {}
for i = 1, #ARGV, 2 do
  local id, packed = ARGV[i], ARGV[i + 1]
  local held = redis.call('ZSCORE', KEYS[1], id)
  if held and tonumber(held) == tonumber(packed) then
    out[#out + 1] = redis.call('ZREVRANK', KEYS[1], id)
    redis.call('ZREM', KEYS[1], id)
  else
    out[#out + 1] = false
  end
end
return out
`;

/**
 * removeInactiveDense: removeInactive for a DENSE board's shard (see ranking/dense.ts), which also
 * answers, for each member removed, whether a recount of the bucket running now had counted it
 * (see recount-position.ts), so the bucket's distinct-score counts lose exactly its score.
 *
 * KEYS[1]  the shard's sorted set
 * KEYS[2]  the shard's recount position
 * ARGV     (player id, packed) pairs, as the scan read them
 *
 * Returns {rank1, counted1, rank2, counted2, ..., recount id}: per pair the 0-based rank in REV
 * order the member held (false when not removed) and 1 when the recount had counted it (else 0);
 * last, the recount's id ('' when none ever ran).
 *
 * O(k log N) for k pairs.
 */
export const removeInactiveDenseLua = `${recountPositionLua}
local recount = recountState(KEYS[2])
local out = {}
for i = 1, #ARGV, 2 do
  local id, packed = ARGV[i], ARGV[i + 1]
  local held = redis.call('ZSCORE', KEYS[1], id)
  if held and tonumber(held) == tonumber(packed) then
    out[#out + 1] = redis.call('ZREVRANK', KEYS[1], id)
    out[#out + 1] = counted(recount, held, id) and 1 or 0
    redis.call('ZREM', KEYS[1], id)
  else
    out[#out + 1] = false
    out[#out + 1] = 0
  end
end
out[#out + 1] = recount.id
return out
`;
