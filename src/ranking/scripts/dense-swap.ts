/**
 * swapDense: puts a recounted set of a DENSE bucket's distinct scores in the place of the live
 * one in one step (see recountDense in dense.ts), so a reader sees the old count or the new one.
 *
 * KEYS[1]  the bucket's distinct scores (see dense-apply.ts)
 * KEYS[2]  how many members hold each score
 * KEYS[3]  the recounted distinct scores
 * KEYS[4]  the recounted counts
 * ARGV[1]  unix time (seconds) at which the live keys expire, or 0 for keys kept until dropped
 *
 * Returns the number of distinct scores now live. An empty recount (no recount keys) leaves no
 * live keys either.
 *
 * O(1); the old keys are freed in the background (UNLINK).
 */
export const swapDenseLua = `
redis.call('UNLINK', KEYS[1], KEYS[2])
if redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('DEL', KEYS[4])
  return 0
end
redis.call('RENAME', KEYS[3], KEYS[1])
redis.call('RENAME', KEYS[4], KEYS[2])
for i = 1, 2 do
  if ARGV[1] == '0' then
    redis.call('PERSIST', KEYS[i])
  else
    redis.call('EXPIREAT', KEYS[i], ARGV[1])
  end
end
return redis.call('ZCARD', KEYS[1])
`;
