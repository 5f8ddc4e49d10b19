import { NO_WRITES, ONE_NODE_READ } from './read-only.js';

/**
 * readAround: for each of several players of one bucket, the player and up to `radius` members
 * either side, cut at the edges of the bucket, all read in one atomic step (the requests of one
 * turn of the service's event loop that read around players of a bucket share one call: see
 * reads/place-loader.ts). With `fill`, a player near either end still gets 2 × radius + 1 members
 * (the whole set when smaller): the window starts at clamp(rank − radius, 0, max(0, size −
 * (2 × radius + 1))), shifted inward by what the edge cut off, in the same step as the rank.
 *
 * KEYS[1]  the bucket's sorted set
 * ARGV     (player id, radius, fill) triples, radius 0 or more, fill 1 to shift the window
 *          inward at the edges, 0 to cut it there
 *
 * Returns {size, then per triple: count, firstRank, id1, packed1, ..., id<count>, packed<count>}
 * in rank order, where firstRank is the 0-based rank of id1; a triple whose player is not ranked
 * there is the count 0 alone (a ranked player's run holds at least the player).
 *
 * O(k (log N + radius)) for k triples.
 *
 * Read-only (`#!lua flags=no-writes`, see read-only.ts): replicas run it.
 */
export const readAroundLua = `${NO_WRITES}${aroundRuns(1)}return out
`;

/** readAround's work, its triples from ARGV[first]: fills `out` with what readAround returns. */
function aroundRuns(first: number, memberHash: string | null = null): string {
  // On a set whose members carry the time (ranking/members.ts), the player's member is found through its hash.
  const rankOf =
    memberHash === null
      ? `  local rank = redis.call('ZREVRANK', key, ARGV[i])`
      : `  local member = redis.call('HGET', ${memberHash}, ARGV[i])
  local rank = member and redis.call('ZREVRANK', key, member)`;
  return `
local key = KEYS[1]
local size = redis.call('ZCARD', key)
local out = {size}
for i = ${first}, #ARGV - 2, 3 do
${rankOf}
  if rank then
    local radius = tonumber(ARGV[i + 1])
    local first, last = math.max(0, rank - radius), rank + radius
    if ARGV[i + 2] == '1' then
      -- As centred as the edges allow: 2 × radius + 1 members, fewer only when the set holds fewer.
      first = math.max(0, math.min(rank - radius, size - (2 * radius + 1)))
      last = first + 2 * radius
    end
    local rows = redis.call('ZRANGE', key, first, last, 'REV', 'WITHSCORES')
    out[#out + 1] = #rows / 2
    out[#out + 1] = first
    for r = 1, #rows do
      out[#out + 1] = rows[r]
    end
  else
    out[#out + 1] = 0
  end
end
`;
}

/**
 * hashedField, a Lua function: the field `id` of the hash that holds it among `hashes` hashes
 * named `prefix` then a number (fieldHash), found as profiles/store.ts profileHashKey finds a
 * profile's hash: FNV-1a over the id's UTF-16 code units (the UTF-8 Redis holds decoded back to them), modulo
 * `hashes`. Lua's numbers are doubles and its bit operations signed 32-bit: the product of x by
 * the FNV prime 2^24 + 403, modulo 2^32, is x · 403 plus (x mod 2^8) · 2^24, a sum below 2^42 and
 * so exact (one C call a code unit, the xor: this runs for every player a screen names).
 * O(length of the id).
 */
export const hashedFieldLua = `
local bxor, byte, floor = bit.bxor, string.byte, math.floor

local function fieldHash(id, hashes)
  local hash = 2166136261
  local bytes = {byte(id, 1, -1)}
  local i, n = 1, #bytes
  while i <= n do
    local point = bytes[i]
    if point < 0x80 then
      i = i + 1
    else
      local width = point < 0xE0 and 2 or (point < 0xF0 and 3 or 4)
      point = point % (width == 2 and 0x20 or (width == 3 and 0x10 or 0x08))
      for k = 1, width - 1 do point = point * 64 + (bytes[i + k] or 0x80) % 64 end
      i = i + width
      if point >= 0x10000 then
        point = point - 0x10000
        local x = bxor(hash, 0xD800 + floor(point / 1024)) % 4294967296
        hash = (x * 403 + x % 256 * 16777216) % 4294967296
        point = 0xDC00 + point % 1024
      end
    end
    local x = bxor(hash, point) % 4294967296
    hash = (x * 403 + x % 256 * 16777216) % 4294967296
  end
  return hash % hashes
end

local function hashedField(prefix, hashes, id)
  return redis.call('HGET', prefix .. fieldHash(id, hashes), id)
end
`;

/**
 * readAroundNamed: readAround, with a field of each player it read taken in the same step from
 * the hash holding it, and a token beside them: the players' profiles and their changes token
 * (profiles/store.ts), so that a client's board screen (its standing, the players around it) needs
 * no second call for their names. The players are found as it runs, so their hashes cannot be
 * declared: it is for one node (ONE_NODE_READ, `no-cluster`), and never registered on a Cluster.
 *
 * KEYS[1]  the bucket's sorted set
 * KEYS[2]  the token read beside the places (the profiles' changes token); only read
 * ARGV[1]  the hashes' name before their number, with the client's key prefix (not declared)
 * ARGV[2]  how many hashes the fields are spread over (see hashedField)
 * ARGV     from ARGV[3]: (player id, radius, fill) triples, as readAround's
 *
 * Returns what readAround returns, then the token (false when there is none), then each run's
 * players' fields (false for none), in the order of the runs and their places.
 *
 * O(k (log N + radius)) for k triples.
 */
export const readAroundNamedLua = `${ONE_NODE_READ}${hashedFieldLua}${aroundRuns(3)}${namedRuns('out[at + 2 * r]')}`;

/** The named reads' tail: the token, then each run's players' fields, `idAt` being the Lua of the r-th place's player id. */
function namedRuns(idAt: string): string {
  return `
out[#out + 1] = redis.call('GET', KEYS[2])
local prefix, hashes = ARGV[1], tonumber(ARGV[2])
local at, runsEnd = 2, #out - 1
while at <= runsEnd do
  local count = out[at]
  for r = 1, count do out[#out + 1] = hashedField(prefix, hashes, ${idAt}) end
  at = at + (count == 0 and 1 or 2 + 2 * count)
end
return out
`;
}

/**
 * readWideAround: readAround for a sorted set whose members carry the time (see
 * ranking/members.ts): each player is found through the set's member hash; the runs' rows are
 * members, which the index reads the player id and the time from.
 *
 * KEYS[1]  the bucket's sorted set
 * KEYS[2]  its member hash (player id → member)
 * ARGV     (player id, radius, fill) triples, as readAround's
 *
 * Returns what readAround returns, the rows' ids being members. O(k (log N + radius)).
 *
 * Read-only (`#!lua flags=no-writes`): replicas run it.
 */
export const readWideAroundLua = `${NO_WRITES}${aroundRuns(1, 'KEYS[2]')}return out
`;

/**
 * readWideAroundNamed: readAroundNamed for a sorted set whose members carry the time: each run's
 * players' fields are read by the player id after the member's time (ranking/members.ts
 * TIME_DIGITS, 10 characters). One node only (`no-cluster`), as readAroundNamed.
 *
 * KEYS[1]  the bucket's sorted set
 * KEYS[2]  the token read beside the places; only read
 * KEYS[3]  the set's member hash
 * ARGV     as readAroundNamed's: the hashes' prefix, their number, then (player id, radius, fill) triples
 *
 * Returns what readAroundNamed returns, the rows' ids being members. O(k (log N + radius)).
 */
export const readWideAroundNamedLua = `${ONE_NODE_READ}${hashedFieldLua}${aroundRuns(3, 'KEYS[3]')}${namedRuns('string.sub(out[at + 2 * r], 11)')}`;
