/**
 * swapRebuilt: puts a filled rebuild key in the place of the bucket's live key in one step, so
 * that a reader sees either the old board or the whole new one, never a part.
 *
 * KEYS[1]  the bucket's rebuild key
 * KEYS[2]  the bucket's live sorted set
 * ARGV[1]  this rebuild's marker member
 * ARGV[2]  unix time (seconds) at which the live key expires, or 0 for a key kept until it is dropped
 *
 * Returns the number of members now live, or -1 when the rebuild key no longer holds this
 * rebuild's marker (it expired while the rebuild stalled): then nothing changes.
 *
 * O(1) here: the old board is freed in the background (UNLINK), which RENAME over it would do in
 * the foreground, blocking the server for as long as freeing a million members takes.
 */
export const swapRebuiltLua = `
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return -1
end
redis.call('ZREM', KEYS[1], ARGV[1])
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
