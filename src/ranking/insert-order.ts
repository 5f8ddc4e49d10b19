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
 * `pairs` ([packed, member, packed, member, …], ZADD's arguments) reordered highest packed score
 * first, to within a bucket (either direction serves the cache; this one is best first on a
 * HIGH_FIRST board): the span of packed scores is cut into one bucket per
 * {@link MEMBERS_PER_BUCKET} members, and members keep their given order inside a bucket. A counting
 * sort, so O(n) for n members (a comparison sort of a 100,000-member chunk cost the rebuilding
 * process about what it saved Redis). Every pair is kept whole; a new array is answered.
 */
export function roughlyDescending(pairs: readonly (string | number)[]): (string | number)[] {
  const members = pairs.length >> 1;
  if (members <= MEMBERS_PER_BUCKET) return [...pairs];
  let low = Infinity;
  let high = -Infinity;
  for (let i = 0; i < pairs.length; i += 2) {
    const packed = pairs[i] as number;
    if (packed < low) low = packed;
    if (packed > high) high = packed;
  }
  const buckets = Math.ceil(members / MEMBERS_PER_BUCKET);
  // The highest packed score falls into bucket 0 and the lowest into the last one.
  const scale = high > low ? (buckets - 1) / (high - low) : 0;
  const bucketOf = new Uint32Array(members);
  const starts = new Uint32Array(buckets + 1);
  for (let m = 0; m < members; m++) {
    const bucket = Math.min(buckets - 1, Math.floor((high - (pairs[2 * m] as number)) * scale));
    bucketOf[m] = bucket;
    starts[bucket + 1]!++;
  }
  for (let b = 0; b < buckets; b++) starts[b + 1]! += starts[b]!;
  const ordered: (string | number)[] = new Array<string | number>(pairs.length);
  for (let m = 0; m < members; m++) {
    const at = 2 * starts[bucketOf[m]!]!++;
    ordered[at] = pairs[2 * m]!;
    ordered[at + 1] = pairs[2 * m + 1]!;
  }
  return ordered;
}
