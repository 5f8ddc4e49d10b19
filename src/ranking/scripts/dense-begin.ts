/**
 * beginDenseRecount: starts a recount of a DENSE bucket's distinct scores (see recountDense in
 * ranking/dense.ts): its counts start empty, and it becomes the running one, taking over from any
 * other (whose chunks and swap are refused from now on: a rebuild swapped shards under it).
 *
 * KEYS[1]  the recount's distinct scores
 * KEYS[2]  the recount's counts
 * KEYS[3]  the running recount's id
 * ARGV[1]  this recount's id
 * ARGV[2]  its lease in milliseconds (each chunk renews it)
 *
 * Returns 1. O(1); what a recount taken over had counted is freed in the background.
 */
export const beginDenseRecountLua = `
redis.call('UNLINK', KEYS[1], KEYS[2])
redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2])
return 1
`;
