/**
 * dropRebuild: deletes a rebuild key and its tombstone set after a failed rebuild, unless the key
 * is no longer that rebuild's (it expired and another rebuild claimed the name since).
 *
 * KEYS[1]  the bucket's rebuild key
 * KEYS[2]  the rebuild's tombstone set (see rebuild-remove.ts)
 * ARGV[1]  the failed rebuild's marker member
 *
 * Returns 1 when the key was deleted, 0 when it was left alone.
 *
 * O(1): the members are freed in the background.
 */
export const dropRebuildLua = `
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('UNLINK', KEYS[1], KEYS[2])
  return 1
end
return 0
`;
