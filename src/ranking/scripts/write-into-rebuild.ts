/**
 * writeIntoRebuild: the write path's copy of a board score into the bucket's rebuild key while a
 * rebuild fills it. A rebuild reads a snapshot of the database; a result committed after that
 * snapshot reaches the index only through its own write, and that write must land in the key that
 * is about to be swapped in, or the swap would drop it.
 *
 * KEYS[1]  the bucket's rebuild key
 * KEYS[2]  the rebuild's tombstone set (see rebuild-remove.ts)
 * ARGV[1]  'GT' or 'LT': the direction this board's packed values only move in
 * ARGV[2]  packed score
 * ARGV[3]  player id (the member)
 *
 * Returns 1 when a rebuild is running and the member was written or moved, else 0. Nothing is
 * written when no rebuild runs: a ZADD would create a key nobody swaps in or deletes. A write
 * lifts the member's tombstone: it is newer than the removal (an unflag after a flag).
 *
 * O(log N).
 */
export const writeIntoRebuildLua = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('SREM', KEYS[2], ARGV[3])
return redis.call('ZADD', KEYS[1], ARGV[1], 'CH', ARGV[2], ARGV[3])
`;
