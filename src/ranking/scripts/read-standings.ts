import { profileValuesLua } from '../../profiles/scripts.js';
import { NO_WRITES, tokenReadOnly } from './read-only.js';

/**
 * readStandings: the places of several members of one bucket, read in one atomic step so that
 * every rank and the size belong to the same moment.
 *
 * KEYS[1]  the bucket's sorted set
 * ARGV     the player ids
 *
 * Returns {size, rank1, packed1, rank2, packed2, ...}: for each id, its 0-based rank in REV
 * order and its packed score, or false and false when the player is not ranked there.
 *
 * O(k log N) for k ids.
 *
 * Read-only (`#!lua flags=no-writes`, see read-only.ts): replicas run it.
 */
export const readStandingsLua = `${NO_WRITES}${standingsOf(1)}return out
`;

/** readStandings' work, its ids from ARGV[first]: fills `out` with what readStandings returns. */
function standingsOf(first: number): string {
  return `
local key = KEYS[1]
local out = {redis.call('ZCARD', key)}
for i = ${first}, #ARGV do
  local rank = redis.call('ZREVRANK', key, ARGV[i])
  if rank then
    out[#out + 1] = rank
    out[#out + 1] = redis.call('ZSCORE', key, ARGV[i])
  else
    out[#out + 1] = false
    out[#out + 1] = false
  end
end
`;
}

/**
 * readStandingsNamed: readStandings, with the profiles of the players ranked there read in the
 * same step, so that a player's standing and name are one call (see profileValuesLua; one node
 * only: the profile hashes are not declared).
 *
 * KEYS[1]  the bucket's sorted set
 * KEYS[2]  the profiles' changes token (profiles/store.ts PROFILE_CHANGES_KEY)
 * ARGV[1]  a fresh random token, the changes token when there is none
 * ARGV[2]  how many hashes the profiles are spread over
 * ARGV     from ARGV[3]: the player ids
 *
 * Returns what readStandings returns, then the changes token, then each id's held profile value
 * (nil for none, and for a player not ranked there).
 *
 * O(k log N) for k ids.
 */
export const readStandingsNamedLua = `${profileValuesLua}${standingsOf(3)}
local ranked = {}
for i = 3, #ARGV do
  if out[2 * i - 4] then ranked[#ranked + 1] = ARGV[i] end
end
local token, values = profileValues(KEYS[2], ARGV[1], tonumber(ARGV[2]), ranked)
out[#out + 1] = token
local next = 1
for i = 3, #ARGV do
  if out[2 * i - 4] then
    out[#out + 1] = values[next]
    next = next + 1
  else
    out[#out + 1] = false
  end
end
return out
`;

/**
 * readStandingsNamedOnReplica: readStandingsNamed declared read-only, for a replica: the same KEYS, ARGV and reply, but
 * the changes token is only read, answered false when there is none (see tokenReadOnly in
 * read-only.ts), since a replica takes no write. Read-only (`#!lua flags=no-writes`).
 */
export const readStandingsNamedOnReplicaLua = `${NO_WRITES}${tokenReadOnly(readStandingsNamedLua)}`;
