/**
 * removeFromRebuild: takes a member out of a running rebuild of its bucket and remembers it as
 * removed (a tombstone), for a flag or an erasure. The rebuild streams a snapshot of PostgreSQL
 * read before the flag committed, so a chunk written after this call could put the member back;
 * the swap (rebuild-swap.ts) takes every tombstoned member out again just before the RENAME. A
 * later write of the member into the rebuild (apply-scores.ts: an unflag, say) lifts its
 * tombstone, since that write reflects a state newer than the removal.
 *
 * KEYS[1]  the bucket's rebuild key
 * KEYS[2]  the rebuild's tombstone set (the rebuild key plus ':removed')
 * ARGV[1]  player id (the member)
 *
 * Returns 1 when a rebuild is running (the member is out of it and tombstoned), else 0: nothing is
 * written when no rebuild runs.
 *
 * O(log N). The tombstone set lives as long as the rebuild key (each chunk renews both).
 */
export const removeFromRebuildLua = `
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then
  return 0
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], ARGV[1])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return 1
`;
