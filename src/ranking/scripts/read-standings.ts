import { NO_WRITES } from './read-only.js';

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
export const readStandingsLua = `${NO_WRITES}${standingsOf()}return out
`;

/** readStandings' work: fills `out` with what readStandings returns. */
function standingsOf(): string {
  return `
local key = KEYS[1]
local out = {redis.call('ZCARD', key)}
for i = 1, #ARGV do
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
 * readStandingsNamed: readStandings, with a field of each ranked player read in the same step
 * from the hash the caller declares for it, and a token beside them: the players' profiles and
 * their changes token (the profile cache names the keys: profiles/store.ts), so that a player's
 * standing and name are one call. Every key it reads is declared; the bucket and the hashes are
 * slots apart on a Redis Cluster, so it is sent to one node only (see defineRankingScripts).
 *
 * KEYS[1]    the bucket's sorted set
 * KEYS[2]    the token read beside the places (the profiles' changes token); only read
 * KEYS[2+i]  the hash holding the i-th id's field (several ids may share one)
 * ARGV       the player ids, the i-th the field read in KEYS[2+i]
 *
 * Returns what readStandings returns, then the token (false when there is none), then each id's
 * field (false when its hash holds none, and for a player not ranked there).
 *
 * O(k log N) for k ids.
 *
 * Read-only (`#!lua flags=no-writes`): replicas run it.
 */
export const readStandingsNamedLua = `${NO_WRITES}${standingsOf()}
out[#out + 1] = redis.call('GET', KEYS[2])
for i = 1, #ARGV do
  out[#out + 1] = out[2 * i] and redis.call('HGET', KEYS[2 + i], ARGV[i])
end
return out
`;

/**
 * readWideStandings: readStandings for a sorted set whose members carry the time (see
 * ranking/members.ts): each id is found through the set's member hash, and its member is answered
 * too (the place's exact time is in it).
 *
 * KEYS[1]  the bucket's (or shard's) sorted set
 * KEYS[2]  its member hash (player id → member; see memberHashKey in keys.ts)
 * ARGV     the player ids
 *
 * Returns {size, rank1, packed1, member1, rank2, packed2, member2, ...}: false, false, false for a
 * player not ranked there.
 *
 * O(k log N) for k ids.
 *
 * Read-only (`#!lua flags=no-writes`): replicas run it.
 */
export const readWideStandingsLua = `${NO_WRITES}${wideStandingsOf('KEYS[2]')}return out
`;

/** readWideStandings' work, the member hash being `memberHash`: fills `out` with what readWideStandings returns. */
function wideStandingsOf(memberHash: string): string {
  return `
local key, members = KEYS[1], ${memberHash}
local out = {redis.call('ZCARD', key)}
for i = 1, #ARGV do
  local member = redis.call('HGET', members, ARGV[i])
  local rank = member and redis.call('ZREVRANK', key, member)
  if rank then
    out[#out + 1] = rank
    out[#out + 1] = redis.call('ZSCORE', key, member)
    out[#out + 1] = member
  else
    out[#out + 1] = false
    out[#out + 1] = false
    out[#out + 1] = false
  end
end
`;
}

/**
 * readWideStandingsNamed: readStandingsNamed for a sorted set whose members carry the time, as
 * readWideStandings reads it. One node only, as readStandingsNamed.
 *
 * KEYS[1]    the bucket's sorted set
 * KEYS[2]    the token read beside the places; only read
 * KEYS[3]    the set's member hash
 * KEYS[3+i]  the hash holding the i-th id's field
 * ARGV       the player ids, the i-th the field read in KEYS[3+i]
 *
 * Returns what readWideStandings returns, then the token, then each id's field (false when none,
 * and for a player not ranked there).
 *
 * O(k log N) for k ids. Read-only: replicas run it.
 */
export const readWideStandingsNamedLua = `${NO_WRITES}${wideStandingsOf('KEYS[3]')}
out[#out + 1] = redis.call('GET', KEYS[2])
for i = 1, #ARGV do
  out[#out + 1] = out[3 * i - 1] and redis.call('HGET', KEYS[3 + i], ARGV[i])
end
return out
`;
