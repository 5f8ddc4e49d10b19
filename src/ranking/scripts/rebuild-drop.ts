/**
 * dropRebuild: deletes a rebuild key after a failed rebuild, unless it is no longer that rebuild's
 * (it expired and another rebuild claimed the name since).
 *
 * KEYS[1]  the bucket's rebuild key
 * ARGV[1]  the failed rebuild's marker member
 *
 * Returns 1 when the key was deleted, 0 when it was left alone.
 *
 * O(1): the members are freed in the background.
 */
export const dropRebuildLua = `
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('UNLINK', KEYS[1])
  return 1
end
return 0
`;
