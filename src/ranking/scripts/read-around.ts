import { profileValuesLua } from '../../profiles/scripts.js';
import { NO_WRITES, tokenReadOnly } from './read-only.js';

/**
 * readAround: for each of several players of one bucket, the player and up to `radius` members
 * either side, cut at the edges of the bucket, all read in one atomic step (the requests of one
 * turn of the service's event loop that read around players of a bucket share one call: see
 * operations/place-reads.ts).
 *
 * KEYS[1]  the bucket's sorted set
 * ARGV     (player id, radius) pairs, radius 0 or more
 *
 * Returns {size, then per pair: count, firstRank, id1, packed1, ..., id<count>, packed<count>} in
 * rank order, where firstRank is the 0-based rank of id1; a pair whose player is not ranked there
 * is the count 0 alone (a ranked player's run holds at least the player).
 *
 * O(k (log N + radius)) for k pairs.
 *
 * Read-only (`#!lua flags=no-writes`, see read-only.ts): replicas run it.
 */
export const readAroundLua = `${NO_WRITES}${aroundRuns(1)}return out
`;

/** readAround's work, its pairs from ARGV[first]: fills `out` with what readAround returns. */
function aroundRuns(first: number): string {
  return `
local key = KEYS[1]
local out = {redis.call('ZCARD', key)}
for i = ${first}, #ARGV - 1, 2 do
  local rank = redis.call('ZREVRANK', key, ARGV[i])
  if rank then
    local radius = tonumber(ARGV[i + 1])
    local first = math.max(0, rank - radius)
    local rows = redis.call('ZRANGE', key, first, rank + radius, 'REV', 'WITHSCORES')
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
 * readAroundNamed: readAround, with the profiles of the players it read in the same step, so that
 * a client's board screen (its standing, the players around it) needs no second call for their
 * names (see profileValuesLua; one node only: the profile hashes are not declared).
 *
 * KEYS[1]  the bucket's sorted set
 * KEYS[2]  the profiles' changes token (profiles/store.ts PROFILE_CHANGES_KEY)
 * ARGV[1]  a fresh random token, the changes token when there is none
 * ARGV[2]  how many hashes the profiles are spread over
 * ARGV     from ARGV[3]: (player id, radius) pairs, radius 0 or more
 *
 * Returns what readAround returns, then the changes token, then each run's players' held profile
 * values (nil for none), in the order of the runs and their places.
 *
 * O(k (log N + radius)) for k pairs.
 */
export const readAroundNamedLua = `${profileValuesLua}${aroundRuns(3)}
local ids = {}
local at = 2
while at <= #out do
  local count = out[at]
  for r = 1, count do ids[#ids + 1] = out[at + 2 * r] end
  at = at + (count == 0 and 1 or 2 + 2 * count)
end
local token, values = profileValues(KEYS[2], ARGV[1], tonumber(ARGV[2]), ids)
out[#out + 1] = token
for i = 1, #ids do out[#out + 1] = values[i] end
return out
`;

/**
 * readAroundNamedOnReplica: readAroundNamed declared read-only, for a replica: the same KEYS, ARGV and reply, but
 * the changes token is only read, answered false when there is none (see tokenReadOnly in
 * read-only.ts), since a replica takes no write. Read-only (`#!lua flags=no-writes`).
 */
export const readAroundNamedOnReplicaLua = `${NO_WRITES}${tokenReadOnly(readAroundNamedLua)}`;
