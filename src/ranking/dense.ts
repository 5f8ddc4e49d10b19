import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import { type BoardBucket, denseKeyList, denseKeys, recountPositionKey, shardKeys } from './keys.js';
import { type Packing, packingFor, scoreOrder, scoreOrderOfPacked } from './packing.js';

/**
 * DENSE ranks: 1 + the number of distinct scores strictly better. A sorted set cannot count
 * distinct scores (its ZCOUNT counts members), so a DENSE board's bucket keeps, beside its sorted
 * sets, the distinct scores its members hold (a sorted set of order values, see scoreOrder in
 * packing.ts) and how many members hold each (a hash): ZCOUNT of the scores above one is its
 * number of distinct better scores, O(log D). One set of keys per bucket, whatever its shards (see
 * denseKeys in keys.ts); boards of other styles have none, and their scripts are unchanged.
 *
 * Every change to a DENSE bucket's sorted sets moves the counts by the member's old → new score,
 * as the shard's own script reported it: writes (apply-scores.ts's DENSE variant answers each
 * write's packed value before and after) and removals (remove-member.ts's). The counts live in
 * another key than the shard (on a Cluster, maybe another node), so they are moved by a second
 * call (dense-apply.ts); counts are sums, so the reports of racing writers converge whatever their
 * order of arrival.
 *
 * A rebuild swaps whole shards in without reporting what moved, so it recounts the bucket after the
 * swap: each shard is scanned in chunks (recount-chunk.ts) into counts of the recount's own, which
 * are then swapped in. Writes go on meanwhile, and each tells which of its member's positions the
 * scan had counted already (recount-position.ts), so the recount's counts take exactly the part of
 * each change it did not read, and the change lands right whether it arrives before or after the
 * swap (see dense-apply.ts). What is not exact: a process dying between a sorted set's write and
 * the counts' leaves them off by that write, until the next rebuild (an operator's, or a recovery's).
 */

/** A member's change as a shard's script reported it: packed values before and after (null: not there), and whether a running recount had counted each. */
export interface MemberChange {
  before: string | number | null;
  after: string | number | null;
  countedBefore: boolean;
  countedAfter: boolean;
}

/** Per order value, how many members it gained (+) or lost (-): over the whole changes, and over their parts a recount had counted. */
export type DenseDeltas = Map<number, { live: number; counted: number }>;

/** The deltas of a run of changes read against one recount; values unchanged left out. O(k). */
export function denseDeltas(packing: Packing, changes: readonly MemberChange[]): DenseDeltas {
  const deltas: DenseDeltas = new Map();
  const move = (packed: string | number | null, by: number, counted: boolean) => {
    if (packed === null) return;
    const value = scoreOrderOfPacked(packing, Number(packed));
    const delta = deltas.get(value) ?? { live: 0, counted: 0 };
    delta.live += by;
    if (counted) delta.counted += by;
    deltas.set(value, delta);
  };
  for (const { before, after, countedBefore, countedAfter } of changes) {
    move(before, -1, countedBefore);
    move(after, 1, countedAfter);
  }
  for (const [value, { live, counted }] of deltas) if (live === 0 && counted === 0) deltas.delete(value);
  return deltas;
}

/**
 * Applies a bucket's deltas, read against recount `epoch`, to its counts (see dense-apply.ts),
 * renewing their expiry (0: left as it is). One script call: O(k log D).
 */
export async function applyDenseDeltas(redis: RedisClient, at: BoardBucket, epoch: string, deltas: DenseDeltas, expireAt: number): Promise<void> {
  if (deltas.size === 0) return;
  const triples = [...deltas].flatMap(([value, { live, counted }]) => [String(value), String(live), String(counted)]);
  await redis.applyDense(...denseKeyList(at), expireAt, epoch, ...triples);
}

/**
 * For each score (with its tie-break values, `tieBreakValues[i]` the i-th's), how many distinct
 * results held in the bucket are strictly better: the counts are kept by the whole (score,
 * columns) order value. One ZCOUNT per score: O(k log D).
 */
export async function countDistinctBetter(
  redis: RedisClient,
  at: BoardBucket,
  scores: number[],
  tieBreakValues?: readonly (readonly number[] | undefined)[],
): Promise<number[]> {
  const key = denseKeys(at).scores;
  return Promise.all(scores.map((score, i) => redis.zcount(key, `(${scoreOrder(at.board, score, tieBreakValues?.[i])}`, '+inf')));
}

/** Members read per recountChunk call unless told. */
const RECOUNT_CHUNK = 5_000;

/** How long a recount lives without news (each chunk renews it): one that dies leaves nothing behind for long. */
const RECOUNT_LEASE_MS = 5 * 60_000;

/** A recount that was taken over by another (a later rebuild's) or outlived its lease; the live counts are as they were. */
export class RecountTakenOverError extends Error {
  constructor(readonly key: string) {
    super(`the recount of ${key}'s distinct scores was taken over or stalled past its lease`);
    this.name = 'RecountTakenOverError';
  }
}

/**
 * Counts a DENSE bucket's distinct scores afresh from its sorted sets (after a rebuild swapped them
 * in) and swaps the counts in (dense-swap.ts), while writes go on (see the module's comment). The
 * recount takes over from any other of the bucket. Each shard is scanned in chunks of `chunk`
 * members (default 5,000), its recount position kept until the next recount (it expires with
 * the bucket). Answers the number of distinct scores. O(N log N) for N members, in N / 5,000 + 2S calls.
 */
export async function recountDense(redis: RedisClient, at: BoardBucket, expiresAt: Date | null, chunk = RECOUNT_CHUNK): Promise<number> {
  const id = randomUUID();
  const keys = denseKeys(at);
  const packing = packingFor(at.board, at.bucket.period);
  const expireAt = expiresAt ? Math.ceil(expiresAt.getTime() / 1000) : 0;
  await redis.beginDenseRecount(keys.recountScores, keys.recountCounts, keys.running, id, RECOUNT_LEASE_MS);
  await Promise.all(
    shardKeys(at).map(async (shard) => {
      const position = recountPositionKey(shard);
      await redis.hset(position, { id, done: '0', packed: '', member: '' });
      await (expireAt === 0 ? redis.persist(position) : redis.expireat(position, expireAt));
      for (;;) {
        const rows = await redis.recountChunk(shard, position, id, chunk);
        if (rows === null) throw new RecountTakenOverError(shard);
        const changes: MemberChange[] = [];
        for (let i = 1; i < rows.length; i += 2) changes.push({ before: null, after: rows[i]!, countedBefore: false, countedAfter: true });
        // A chunk's members go into the recount's counts alone: the live counts have them already.
        const deltas = denseDeltas(packing, changes);
        for (const delta of deltas.values()) delta.live = 0;
        await redis.pexpire(keys.running, RECOUNT_LEASE_MS);
        await applyDenseDeltas(redis, at, id, deltas, 0);
        if (rows.length < 2 * chunk) return;
      }
    }),
  );
  const distinct = await redis.swapDense(...denseKeyList(at), expireAt, id);
  if (distinct < 0) throw new RecountTakenOverError(keys.scores);
  return distinct;
}
