/**
 * Lua shared by the scripts that read a shard of a sharded bucket at a position: not a script by
 * itself, but the start of each (see count-ahead.ts, read-after.ts, read-near.ts). A position is a
 * (packed, id) pair, which need not be a member of the shard read: the scatter-gather reads in
 * src/ranking/shards.ts ask every shard where another shard's member would stand, so that the sum
 * over the shards equals the rank one sorted set of every member would give.
 *
 * Defines:
 * - bytesAfter(a, b): a sorts after b in byte order, as Redis orders members of equal score. Lua's
 *   '<' on strings follows the server's collation locale (Redis sets LC_COLLATE from its
 *   environment), which need not be byte order.
 * - countAhead(key, packed, id): how many members rank strictly ahead of (packed, id) in REV order
 *   (packed descending, then member bytes descending): every higher packed value, then the members
 *   tied on exactly `packed` whose bytes sort after id. The ties hold consecutive REV ranks and are
 *   themselves in member-descending order there, so a binary search over those ranks finds the cut
 *   without listing them: O(log N) without ties, O(log T · log N) with T ties.
 * - atOrAhead(key, packed, id, ahead): `ahead` (what countAhead answered for the same position),
 *   plus one when the shard holds id at exactly `packed`.
 */
export const positionLua = `
local function bytesAfter(a, b)
  if a == b then return false end
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return #a > #b
end

local function countAhead(key, packed, id)
  local lo = redis.call('ZCOUNT', key, '(' .. packed, '+inf')
  local hi = lo + redis.call('ZCOUNT', key, packed, packed)
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local member = redis.call('ZRANGE', key, mid, mid, 'REV')[1]
    if bytesAfter(member, id) then lo = mid + 1 else hi = mid end
  end
  return lo
end

local function atOrAhead(key, packed, id, ahead)
  local stored = redis.call('ZSCORE', key, id)
  if stored and tonumber(stored) == tonumber(packed) then
    return ahead + 1
  end
  return ahead
end
`;
