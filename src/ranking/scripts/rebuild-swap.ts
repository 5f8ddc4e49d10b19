/**
 * swapRebuilt: puts a filled rebuild key in the place of the bucket's live key in one step, so
 * that a reader sees either the old board or the whole new one, never a part.
 *
 * KEYS[1]  the bucket's rebuild key
 * KEYS[2]  the bucket's live sorted set
 * KEYS[3]  the rebuild's tombstone set (see rebuild-remove.ts)
 * ARGV[1]  this rebuild's marker member
 * ARGV[2]  unix time (seconds) at which the live key expires, or 0 for a key kept until it is dropped
 *
 * Returns the number of members now live, or -1 when the rebuild key no longer holds this
 * rebuild's marker (it expired while the rebuild stalled): then nothing changes.
 *
 * Members flagged or erased while the rebuild ran (tombstoned) are taken out first: the snapshot
 * the rebuild streamed may have been read before their removal, and put them back.
 *
 * O(T log N) for T tombstones; the old board is freed in the background (UNLINK), which RENAME
 * over it would do in the foreground, blocking the server for as long as freeing a million
 * members takes.
 */
export const swapRebuiltLua = `
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return -1
end
redis.call('ZREM', KEYS[1], ARGV[1])
local removed = redis.call('SMEMBERS', KEYS[3])
for i = 1, #removed do
  redis.call('ZREM', KEYS[1], removed[i])
end
redis.call('DEL', KEYS[3])
redis.call('UNLINK', KEYS[2])
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('RENAME', KEYS[1], KEYS[2])
if ARGV[2] == '0' then
  redis.call('PERSIST', KEYS[2])
else
  redis.call('EXPIREAT', KEYS[2], ARGV[2])
end
return redis.call('ZCARD', KEYS[2])
`;
