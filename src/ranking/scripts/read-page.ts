/**
 * readPage: the members that follow a position in a bucket's REV order (packed score descending,
 * then member descending, as Redis orders equal scores in reverse), with the size and the rank of
 * the first, read in one atomic step.
 *
 * KEYS[1]  the bucket's sorted set
 * ARGV[1]  `first`: the page size (at least 1); the script reads one member more, so the caller
 *          learns whether another page follows
 * ARGV[2]  the cursor's packed score, or '' for the first page
 * ARGV[3]  the cursor's player id, or '' for the first page
 *
 * Returns {size, firstRank, id1, packed1, id2, packed2, ...} holding up to first + 1 members in
 * rank order, where firstRank is the 0-based rank of id1; or {size} alone when nothing follows.
 *
 * The position is a key (packed, id), never an offset, and the page starts strictly after it
 * whether or not the cursor's own player is still there: members with the cursor's packed value
 * and a smaller id come first, then every member with a smaller packed value. So a member whose
 * score does not change is never skipped nor repeated, however others move between pages.
 *
 * O(log N + first) while the cursor's player still holds the cursor's packed value (the usual
 * case); otherwise O(log N + T + first), T being the members tied on exactly that packed value.
 */
export const readPageLua = `
local key = KEYS[1]
local want = tonumber(ARGV[1]) + 1
local packed = ARGV[2]
local after = ARGV[3]
local out = {redis.call('ZCARD', key)}
local rows

-- Byte order, as Redis orders members. Lua's '<' on strings follows the server's collation
-- locale (Redis sets LC_COLLATE from its environment), which need not be byte order.
local function bytesBefore(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

if packed == '' then
  rows = redis.call('ZRANGE', key, 0, want - 1, 'REV', 'WITHSCORES')
else
  local stored = redis.call('ZSCORE', key, after)
  if stored and tonumber(stored) == tonumber(packed) then
    -- The cursor's player has not moved: the page starts right after it.
    local rank = redis.call('ZREVRANK', key, after)
    rows = redis.call('ZRANGE', key, rank + 1, rank + want, 'REV', 'WITHSCORES')
  else
    -- It moved or left: find where (packed, after) would sit. Ties first (they come in
    -- member-descending order), keeping those that sort below the cursor's id ...
    rows = {}
    local ties = redis.call('ZRANGE', key, packed, packed, 'BYSCORE', 'REV', 'WITHSCORES')
    for i = 1, #ties, 2 do
      if #rows >= 2 * want then break end
      if bytesBefore(ties[i], after) then
        rows[#rows + 1] = ties[i]
        rows[#rows + 1] = ties[i + 1]
      end
    end
    -- ... then everything with a smaller packed value.
    local left = want - #rows / 2
    if left > 0 then
      local lower = redis.call('ZRANGE', key, '(' .. packed, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, left, 'WITHSCORES')
      for i = 1, #lower do
        rows[#rows + 1] = lower[i]
      end
    end
  end
end

if #rows == 0 then
  return out
end
out[2] = redis.call('ZREVRANK', key, rows[1])
for i = 1, #rows do
  out[#out + 1] = rows[i]
end
return out
`;
