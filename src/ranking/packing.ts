import type { Board, Period } from '../model/board.js';

/**
 * One double per member gives a total, fair order: the score in the high bits, and in the low
 * `timeBits` bits how early in the bucket the score was reached (earlier is larger):
 *
 *     packed = s * 2^T + (2^T - 1 - t)
 *
 * where `s` is the score on a HIGH_FIRST board and `maxScore - score` on a LOW_FIRST one (the
 * mirror), and `t` counts time units from the bucket's start. So on every board a larger packed
 * value ranks first, every read is a REV read, and members with the same packed value (same score,
 * same time unit) are ordered by player id, descending, as Redis orders equal scores in reverse.
 *
 * A double holds every whole number below 2^53 exactly, so `s < 2^(53 - T)`. The time unit is
 * the smallest power of two milliseconds for which the period's span fits in T bits: a board with
 * small scores breaks ties to the millisecond, one with huge scores to coarser units. *
 * What two players with equal scores reached inside one time unit see: they share a packed value,
 * so they are ranked by player id (descending bytes, as Redis orders equal values in a REV read),
 * not by who was first, and each is served the exact time they reached the score (achievedAt is
 * the recorded time, never the unit's start: reads/recorded-scores.ts). So the one ranked ahead may
 * show an achievedAt later than the one behind, by less than one unit. The unit is 1 ms for a board
 * whose maxScore is below 2^13 on ALL_TIME (2^26 on DAILY); the largest maxScore breaks ties to
 * 2^26 ms (about 18.6 hours) on ALL_TIME and 8,192 ms on DAILY. `unpack` answers the unit's start.
 */

/** ALL_TIME and SEASON buckets break ties over 2^40 ms (about 34.8 years) from their start. */
const OPEN_SPAN_MS = 2 ** 40;
const DAY_MS = 86_400_000;
const SPAN_MS: Record<Period, number> = {
  ALL_TIME: OPEN_SPAN_MS,
  SEASON: OPEN_SPAN_MS,
  MONTHLY: 31 * DAY_MS,
  WEEKLY: 7 * DAY_MS,
  DAILY: DAY_MS,
};

/**
 * The coarsest tie-break unit we accept: 2^26 ms, about 18.6 hours, over the ALL_TIME span. It
 * leaves T >= 14 bits of time, so scores need at most 39 bits.
 */
const MIN_TIME_BITS = 14;

/** The contract's largest maxScore (model/contract.ts) is what MIN_TIME_BITS leaves of a double's 53 bits: 2^39 - 1. */
const MAX_PACKED_SCORE = 2 ** (53 - MIN_TIME_BITS) - 1;

export interface Packing {
  /** T: the bits of time below the score. */
  timeBits: number;
  /** The tie-break resolution, in milliseconds. */
  unitMs: number;
}

function bitLength(value: number): number {
  return value === 0 ? 0 : Math.floor(value).toString(2).length;
}

/**
 * Packings already worked out, by period, then maxScore: every score written or read is packed or
 * unpacked, and working one out (the bit length of maxScore as a binary string) cost more than the
 * packing itself. Keyed without building a key, as this runs for every score. Boards are few, so
 * this stays small.
 */
const packings = new Map<Period, Map<number, Packing>>();

/** The packing of one period's keys on a board. O(1). */
export function packingFor(board: Pick<Board, 'maxScore'>, period: Period): Packing {
  let byMaxScore = packings.get(period);
  if (!byMaxScore) packings.set(period, (byMaxScore = new Map<number, Packing>()));
  let packing = byMaxScore.get(board.maxScore);
  if (!packing) {
    const timeBits = 53 - bitLength(board.maxScore);
    if (timeBits < MIN_TIME_BITS) throw new RangeError(`maxScore ${board.maxScore} exceeds ${MAX_PACKED_SCORE}`);
    let unitMs = 1;
    while (unitMs * 2 ** timeBits < SPAN_MS[period]) unitMs *= 2;
    packing = Object.freeze({ timeBits, unitMs });
    byMaxScore.set(board.maxScore, packing);
  }
  return packing;
}

type PackingBoard = Pick<Board, 'maxScore' | 'order'>;

/** The packed value of a score reached at `reachedAt` in a bucket starting at `bucketStart`. O(1). */
export function pack(board: PackingBoard, packing: Packing, score: number, reachedAt: Date, bucketStart: Date): number {
  return packAt(board, packing, score, reachedAt.getTime(), bucketStart.getTime());
}

/** {@link pack} with both times in epoch milliseconds: what a rebuild packs a million rows with. O(1). */
export function packAt(board: PackingBoard, packing: Packing, score: number, reachedMs: number, bucketStartMs: number): number {
  const slots = 2 ** packing.timeBits;
  // Clamp rather than refuse: a result from before the bucket's origin ties on time with the
  // earliest; one beyond the span (decades away) ties with the latest. Order is never inverted.
  const t = Math.min(slots - 1, Math.max(0, Math.floor((reachedMs - bucketStartMs) / packing.unitMs)));
  const s = scoreOrder(board, score);
  return s * slots + (slots - 1 - t);
}

/**
 * A score's place in the order every packed value follows: `s` above (the score, or its mirror on
 * a LOW_FIRST board), so a larger one is a better score. What a DENSE board counts distinct. O(1).
 */
export function scoreOrder(board: PackingBoard, score: number): number {
  return board.order === 'HIGH_FIRST' ? score : board.maxScore - score;
}

/** The {@link scoreOrder} of the score a packed value holds, whenever it was reached. O(1). */
export function scoreOrderOfPacked(packing: Packing, packed: number): number {
  return Math.floor(packed / 2 ** packing.timeBits);
}

/**
 * The lowest packed value of any score strictly better than `score`, whenever reached: members at
 * or above it are exactly those with a better score (the score sits above the time bits). O(1).
 */
export function lowestPackedAbove(board: PackingBoard, packing: Packing, score: number): number {
  const s = scoreOrder(board, score);
  return (s + 1) * 2 ** packing.timeBits;
}

/** The score and the start of the time unit it was reached in, read back from a packed value. O(1). */
export function unpack(board: PackingBoard, packing: Packing, packed: number, bucketStart: Date): { score: number; reachedAt: Date } {
  const slots = 2 ** packing.timeBits;
  const s = scoreOrderOfPacked(packing, packed);
  const t = slots - 1 - (packed - s * slots);
  return {
    score: board.order === 'HIGH_FIRST' ? s : board.maxScore - s,
    reachedAt: new Date(bucketStart.getTime() + t * packing.unitMs),
  };
}

/**
 * The direction a member's packed value only ever moves in: a BEST score only improves, so its
 * packed value only rises; a SUM only grows, which raises it on HIGH_FIRST and, through the mirror,
 * lowers it on LOW_FIRST. The index writes with ZADD GT or LT accordingly, so a replayed or
 * reordered write can never move a member backwards.
 */
export function packedDirection(board: Pick<Board, 'aggregate' | 'order'>): 'GT' | 'LT' {
  return board.aggregate === 'SUM' && board.order === 'LOW_FIRST' ? 'LT' : 'GT';
}
