/**
 * beginRebuild: claims a bucket's rebuild key for one rebuild, so that no two rebuilds of a bucket
 * fill the same key, and so that writes arriving during the rebuild find the key (see
 * apply-scores.ts) from before the rebuild reads its snapshot of the database.
 *
 * KEYS[1]  the bucket's rebuild key
 * KEYS[2]  the rebuild's tombstone set (see rebuild-remove.ts): a dead rebuild's is cleared
 * ARGV[1]  this rebuild's marker member (never a player id: it starts with a control character)
 * ARGV[2]  how long the key lives without news, in milliseconds (each chunk written renews it)
 *
 * Returns 1 when the key is now this rebuild's, 0 when another rebuild holds it.
 *
 * O(1).
 */
export const beginRebuildLua = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('DEL', KEYS[2])
redis.call('ZADD', KEYS[1], 0, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;
