/**
 * The order a rebuild hands members to ZADD. A sorted set is a skiplist: each insert walks from its
 * head to the member's place, and consecutive inserts near one another walk nodes that are still
 * in the CPU's cache. Members roughly in packed-score order cost Redis about two thirds of what
 * the same members cost in player-id order, the order PostgreSQL streams them (bench/RESULTS.md,
 * "the rebuild hands Redis its members roughly in score order"). The order changes nothing of what
 * the set holds: only how long Redis takes to build it.
 */

/** Members a bucket of the rough order holds on average: small enough that each insert lands near the last. */
const MEMBERS_PER_BUCKET = 8;

/**
 * The indexes of `packed` (the packed scores of a rebuild's members), highest packed score first to
 * within a bucket (either direction serves the cache; this one is best first on a HIGH_FIRST board):
 * the span of packed scores is cut into one bucket per {@link MEMBERS_PER_BUCKET} members, and
 * indexes keep their given order inside a bucket. A counting sort over typed arrays, so O(n) for n
 * members and nothing allocated per member (a comparison sort of a 100,000-member chunk cost the
 * rebuilding process about what it saved Redis). Every index appears once.
 */
export function roughlyDescending(packed: Float64Array): Uint32Array {
  const members = packed.length;
  const order = new Uint32Array(members);
  if (members <= MEMBERS_PER_BUCKET) {
    for (let m = 0; m < members; m++) order[m] = m;
    return order;
  }
  let low = Infinity;
  let high = -Infinity;
  for (const value of packed) {
    if (value < low) low = value;
    if (value > high) high = value;
  }
  const buckets = Math.ceil(members / MEMBERS_PER_BUCKET);
  // The highest packed score falls into bucket 0 and the lowest into the last one.
  const scale = high > low ? (buckets - 1) / (high - low) : 0;
  const bucketOf = new Uint32Array(members);
  const starts = new Uint32Array(buckets + 1);
  for (let m = 0; m < members; m++) {
    const bucket = Math.min(buckets - 1, Math.floor((high - packed[m]!) * scale));
    bucketOf[m] = bucket;
    starts[bucket + 1]!++;
  }
  for (let b = 0; b < buckets; b++) starts[b + 1]! += starts[b]!;
  for (let m = 0; m < members; m++) order[starts[bucketOf[m]!]!++] = m;
  return order;
}
