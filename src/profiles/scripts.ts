import type { Result } from 'ioredis';
import { type RedisClient, sendAtOnce } from '../redis.js';

/**
 * The profile hashes' scripts. A profile hash holds the profiles of the players whose ids fall in
 * its bucket (field: player id; value: the encoded profile, or a change's pending mark) and one
 * field named '' (no player id is empty): the hash's epoch, a random token set when the hash is
 * made. A profile read from PostgreSQL is kept only under the epoch read before that query: a
 * hash that expired, was evicted or was emptied with its Redis meanwhile has another epoch (or
 * none), so a profile read before a change can never be kept after it.
 */

/**
 * changesToken, a Lua function: the changes token at `key`, set to `fresh` (a fresh random token)
 * when there is none (a new or emptied Redis), so that profiles read from then on are read under
 * one. A token set so is new to every process: none remembers a profile under it. (The ranking
 * index's named reads, which read the profiles beside the places, only read it.)
 */
const changesTokenLua = `
local function changesToken(key, fresh)
  local token = redis.call('GET', key)
  if token then return token end
  redis.call('SET', key, fresh)
  return fresh
end
`;

/**
 * readProfiles: the held profile of each id, and the epoch of its hash for those not held, with
 * the changes token read in the same step (what the profiles read are current under: see
 * services/remembered-profiles.ts).
 *
 * KEYS[1]     the changes token (see markProfiles)
 * KEYS[1+i]   the profile hash of the i-th id (several ids may share one)
 * ARGV[1]     a fresh random epoch, set on a hash that has none (it is then made, and expires)
 * ARGV[2]     how long a hash made now lives, in milliseconds
 * ARGV[2+i]   the i-th player id
 *
 * Returns {value1, epoch1, value2, epoch2, ..., token}: the held value (an encoded profile or a
 * pending mark) and false, or false and the hash's epoch when the id is not held; then the changes
 * token (set to ARGV[1] when there is none: see changesToken).
 *
 * O(k) for k ids.
 */
export const readProfilesLua = `${changesTokenLua}
local epochs = {}
local out = {}
for i = 1, #KEYS - 1 do
  local key = KEYS[1 + i]
  local value = redis.call('HGET', key, ARGV[2 + i])
  if value then
    out[#out + 1] = value
    out[#out + 1] = false
  else
    local epoch = epochs[key]
    if not epoch then
      epoch = redis.call('HGET', key, '')
      if not epoch then
        epoch = ARGV[1]
        redis.call('HSET', key, '', epoch)
        redis.call('PEXPIRE', key, ARGV[2])
      end
      epochs[key] = epoch
    end
    out[#out + 1] = false
    out[#out + 1] = epoch
  end
end
out[#out + 1] = changesToken(KEYS[1], ARGV[1])
return out
`;

/**
 * fillProfiles: keeps profiles read from PostgreSQL, each only if its hash still has the epoch
 * read before the query and holds nothing for the id (a change's pending mark or newer profile
 * wins).
 *
 * KEYS[i]                  the profile hash of the i-th id
 * ARGV[3i-2], [3i-1], [3i] the epoch read for the i-th id, the id, its encoded profile
 *
 * Returns how many were kept. O(k).
 */
export const fillProfilesLua = `
local kept = 0
for i = 1, #KEYS do
  local key = KEYS[i]
  if redis.call('HGET', key, '') == ARGV[3 * i - 2] then
    kept = kept + redis.call('HSETNX', key, ARGV[3 * i - 1], ARGV[3 * i])
  end
end
return kept
`;

/**
 * markProfiles: marks profiles as being changed, before the change commits: readers then ask
 * PostgreSQL and keep nothing for them until the change is settled. Rewrites the changes token.
 *
 * KEYS[1]            the changes token: rewritten by every change, so answers that named players
 *                    (shared answers, http/shared-answers.ts) know to be built again
 * KEYS[i+1]          the profile hash of the i-th id
 * ARGV[1]            a fresh random token: the hash's epoch when it has none, and the changes token
 * ARGV[2]            how long a hash made now lives, in milliseconds
 * ARGV[2i+1], [2i+2] the i-th id, and this change's pending mark for it
 *
 * Returns the number of ids marked. O(k).
 */
export const markProfilesLua = `
redis.call('SET', KEYS[1], ARGV[1])
for i = 2, #KEYS do
  local key = KEYS[i]
  if redis.call('HSETNX', key, '', ARGV[1]) == 1 then redis.call('PEXPIRE', key, ARGV[2]) end
  redis.call('HSET', key, ARGV[2 * i - 1], ARGV[2 * i])
end
return #KEYS - 1
`;

/**
 * settleProfiles: after a change committed, its profiles replace its pending marks. Where another
 * change marked the id meanwhile, which of the two committed last is not known here: the id is
 * dropped and its hash given a new epoch (ARGV[1]), so no profile read before either commit is
 * kept, and the next reader keeps what PostgreSQL then holds. Rewrites the changes token.
 *
 * KEYS[1]                  the changes token (see markProfiles)
 * KEYS[i+1]                the profile hash of the i-th id
 * ARGV[1]                  a fresh random token: the changes token, and the new epoch of a hash where changes crossed
 * ARGV[3i-1], [3i], [3i+1] the i-th id, this change's pending mark, the committed encoded profile
 *
 * Returns how many ids were settled with their profile (the others were dropped). O(k).
 */
export const settleProfilesLua = `
redis.call('SET', KEYS[1], ARGV[1])
local settled = 0
for i = 2, #KEYS do
  local key = KEYS[i]
  local id = ARGV[3 * i - 4]
  if redis.call('HGET', key, id) == ARGV[3 * i - 3] then
    redis.call('HSET', key, id, ARGV[3 * i - 2])
    settled = settled + 1
  else
    redis.call('HDEL', key, id)
    if redis.call('EXISTS', key) == 1 then redis.call('HSET', key, '', ARGV[1]) end
  end
end
return settled
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** See readProfilesLua. `keys` the changes token, then one per id. Returns [value or null, epoch or null] per id, flat, then the token or null. */
    readProfiles(keyCount: number, ...keysAndArgs: string[]): Result<(string | null)[], Context>;
    /** See fillProfilesLua. Returns how many were kept. */
    fillProfiles(keyCount: number, ...keysAndArgs: string[]): Result<number, Context>;
    /** See markProfilesLua. Returns how many were marked. */
    markProfiles(keyCount: number, ...keysAndArgs: string[]): Result<number, Context>;
    /** See settleProfilesLua. Returns how many were settled with their profile. */
    settleProfiles(keyCount: number, ...keysAndArgs: string[]): Result<number, Context>;
  }
}

const SCRIPTS = { readProfiles: readProfilesLua, fillProfiles: fillProfilesLua, markProfiles: markProfilesLua, settleProfiles: settleProfilesLua };

/** Registers the profile scripts on a client once (their key count varies: it is the first argument). */
export function defineProfileScripts(redis: RedisClient): void {
  if (Object.hasOwn(redis.scriptsSet, 'readProfiles')) return;
  for (const [name, lua] of Object.entries(SCRIPTS)) redis.defineCommand(name, { lua });
  // A read of profiles is already one call for a turn's requests (profile-cache.ts). And a Cluster
  // client's auto-pipelining groups a tick's commands by the slot of their first argument, which
  // for these is the key count, not a key: sent on their own, they are routed by their keys (all
  // in the {profiles} slot). One node pipelines the others as usual.
  sendAtOnce(redis, redis.isCluster ? Object.keys(SCRIPTS) : ['readProfiles']);
}
