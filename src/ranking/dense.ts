import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import { type BoardBucket, denseKeys, shardKeys } from './keys.js';
import { type Packing, packingFor, scoreOrder, scoreOrderOfPacked } from './packing.js';

/**
 * DENSE ranks: 1 + the number of distinct scores strictly better. A sorted set cannot count
 * distinct scores (its ZCOUNT counts members), so a DENSE board's bucket keeps, beside its sorted
 * sets, the distinct scores its members hold (a sorted set of order values, see scoreOrder in
 * packing.ts) and how many members hold each (a hash): ZCOUNT of the scores above one is its
 * number of distinct better scores, O(log D). One pair of keys per bucket, whatever its shards
 * (see denseKeys in keys.ts); boards of other styles have none, and their writes are unchanged.
 *
 * Every change to a DENSE bucket's sorted sets moves the counts by the member's old → new score,
 * as the sorted set's own script reported it: writes (apply-scores.ts answers each write's packed
 * value before and after), removals (remove-member.ts answers the packed value removed), and a
 * rebuild, which recounts the bucket after its swap. Counts are sums, so the reports of racing
 * writers (on a sharded bucket, from other shards, maybe other nodes) converge whatever their order.
 *
 * What is not exact: a write landing while a rebuild recounts (between its scan of the shards and
 * its swap) may be counted twice or not at all until the next rebuild; and a process dying between
 * a sorted set's write and the counts' leaves them off by that write, which the next rebuild (an
 * operator's, the drift check's, or a recovery's) corrects.
 */

/** A member's move as a sorted set's script reported it: its packed value before and after (null: not there). */
export type MemberChange = [before: string | number | null, after: string | number | null];

/** How many members each order value gained (+) or lost (-) over the changes; values unchanged left out. O(k). */
export function denseDeltas(packing: Packing, changes: readonly MemberChange[]): Map<number, number> {
  const deltas = new Map<number, number>();
  const move = (packed: string | number | null, by: number) => {
    if (packed === null) return;
    const value = scoreOrderOfPacked(packing, Number(packed));
    deltas.set(value, (deltas.get(value) ?? 0) + by);
  };
  for (const [before, after] of changes) {
    move(before, -1);
    move(after, 1);
  }
  for (const [value, delta] of deltas) if (delta === 0) deltas.delete(value);
  return deltas;
}

/** Applies a bucket's deltas to its distinct-score keys (see dense-apply.ts), renewing their expiry. One script call: O(k log D). */
export async function applyDenseDeltas(redis: RedisClient, at: BoardBucket, deltas: Map<number, number>, expireAt: number): Promise<void> {
  if (deltas.size === 0) return;
  const { scores, counts } = denseKeys(at);
  await redis.applyDense(scores, counts, expireAt, ...[...deltas].flatMap(([value, delta]) => [String(value), String(delta)]));
}

/** For each score, how many distinct scores held in the bucket are strictly better. One ZCOUNT per score: O(k log D). */
export async function countDistinctBetter(redis: RedisClient, at: BoardBucket, scores: number[]): Promise<number[]> {
  const key = denseKeys(at).scores;
  return Promise.all(scores.map((score) => redis.zcount(key, `(${scoreOrder(at.board, score)}`, '+inf')));
}

/** Members read per ZRANGE while a recount scans a shard. */
const RECOUNT_CHUNK = 10_000;

/** How long a recount's keys outlive it should it die before its swap. */
const RECOUNT_KEY_TTL_MS = 5 * 60_000;

/**
 * Counts a DENSE bucket's distinct scores afresh from its sorted sets (after a rebuild swapped them
 * in) into keys of its own, then swaps them in (dense-swap.ts). Each shard is scanned in chunks of
 * {@link RECOUNT_CHUNK} members (ZRANGE by rank, WITHSCORES); the counts are kept in the process,
 * O(D) memory. Answers the number of distinct scores. O(N) for N members, in N / 10,000 + S calls.
 */
export async function recountDense(redis: RedisClient, at: BoardBucket, expiresAt: Date | null): Promise<number> {
  const packing = packingFor(at.board, at.bucket.period);
  const counts = new Map<number, number>();
  for (const key of shardKeys(at)) {
    for (let from = 0; ; from += RECOUNT_CHUNK) {
      const rows = await redis.zrange(key, from, from + RECOUNT_CHUNK - 1, 'WITHSCORES');
      for (let i = 1; i < rows.length; i += 2) {
        const value = scoreOrderOfPacked(packing, Number(rows[i]));
        counts.set(value, (counts.get(value) ?? 0) + 1);
      }
      if (rows.length < 2 * RECOUNT_CHUNK) break;
    }
  }
  const live = denseKeys(at);
  // A name of its own for each recount (same hash tag): two rebuilds' recounts never share keys.
  const suffix = `#recount:${randomUUID()}`;
  const fresh = { scores: `${live.scores}${suffix}`, counts: `${live.counts}${suffix}` };
  const entries = [...counts];
  for (let from = 0; from < entries.length; from += RECOUNT_CHUNK) {
    const chunk = entries.slice(from, from + RECOUNT_CHUNK);
    const pipeline = redis.pipeline();
    pipeline.zadd(fresh.scores, ...chunk.flatMap(([value]) => [value, String(value)]));
    pipeline.hset(fresh.counts, Object.fromEntries(chunk.map(([value, count]) => [String(value), count])));
    pipeline.pexpire(fresh.scores, RECOUNT_KEY_TTL_MS);
    pipeline.pexpire(fresh.counts, RECOUNT_KEY_TTL_MS);
    for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
  }
  const expireAt = expiresAt ? Math.ceil(expiresAt.getTime() / 1000) : 0;
  return redis.swapDense(live.scores, live.counts, fresh.scores, fresh.counts, expireAt);
}
