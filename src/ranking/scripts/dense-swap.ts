/**
 * swapDense: puts a recount of a DENSE bucket's distinct scores in the place of the live counts in
 * one step (see recountDense in ranking/dense.ts), so a reader sees the old counts or the new ones,
 * and records it in the lineage, so that changes still on their way are placed right (see
 * dense-apply.ts).
 *
 * KEYS[1..6]  as applyDense: live scores and counts, the recount's, the lineage, the running recount's id
 * ARGV[1]     unix time (seconds) at which the live keys expire, or 0 for keys kept until dropped
 * ARGV[2]     the recount's id
 *
 * Returns the number of distinct scores now live, or -1 when the recount is no longer the running
 * one (it stalled past its lease, or another took over): then nothing changes.
 *
 * O(1); the old counts are freed in the background (UNLINK).
 */
export const swapDenseLua = `
if redis.call('GET', KEYS[6]) ~= ARGV[2] then
  return -1
end
local live = redis.call('HGET', KEYS[5], 'live') or ''
redis.call('UNLINK', KEYS[1], KEYS[2])
for k = 3, 4 do
  if redis.call('EXISTS', KEYS[k]) == 1 then
    redis.call('RENAME', KEYS[k], KEYS[k - 2])
  end
end
redis.call('DEL', KEYS[6])
redis.call('HSET', KEYS[5], 'live', ARGV[2], 'previous', live)
for k = 1, 5 do
  if k ~= 3 and k ~= 4 then
    if ARGV[1] == '0' then
      redis.call('PERSIST', KEYS[k])
    else
      redis.call('EXPIREAT', KEYS[k], ARGV[1])
    end
  end
end
return redis.call('ZCARD', KEYS[1])
`;
