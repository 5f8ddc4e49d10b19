import type { Board, Period, TieBreak } from '../model/board.js';

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
  /** T: the bits of time below the score (and its tie-break columns); 0 when the time is in the member (`timeInMember`). */
  timeBits: number;
  /** The tie-break resolution, in milliseconds (1 when the time is in the member). */
  unitMs: number;
  /** The bits of each tie-break column, in the board's order, between the score and the time; empty on a board without them. */
  columnBits: readonly number[];
  /**
   * True on a board whose score and columns leave fewer than {@link MIN_TIME_BITS} bits of the
   * double for the time: the double then holds the score and the columns only, and the time lives
   * in the member, as a fixed-width prefix before the player id (to the millisecond), so that
   * members of equal doubles are ordered by it, then by player id, as Redis orders them.
   */
  timeInMember: boolean;
}

function bitLength(value: number): number {
  return value === 0 ? 0 : Math.floor(value).toString(2).length;
}

/** The bits a board's score and tie-break columns take in the packed value: what must fit in a double's 53. O(columns). */
export function resultBits(board: Pick<Board, 'maxScore' | 'tieBreaks'>): number {
  let bits = bitLength(board.maxScore);
  for (const column of board.tieBreaks ?? []) bits += bitLength(column.max);
  return bits;
}

/** The most bits the score and columns together may take: a double holds every whole number below 2^53 exactly. */
export const MAX_RESULT_BITS = 53;

/**
 * Why the index cannot hold this board's order exactly, or null when it can: the score and every
 * tie-break column must fit in one double together (the time goes below them, or into the member
 * when too few bits are left). O(columns).
 */
export function packingProblem(board: Pick<Board, 'maxScore' | 'tieBreaks'>): string | null {
  const bits = resultBits(board);
  if (bits <= MAX_RESULT_BITS) return null;
  const parts = [
    `maxScore ${board.maxScore} takes ${bitLength(board.maxScore)}`,
    ...(board.tieBreaks ?? []).map((c) => `${c.name} (max ${c.max}) ${bitLength(c.max)}`),
  ];
  return `the score and tie-break columns need ${bits} bits (${parts.join(', ')}), and the index orders them exactly in at most ${MAX_RESULT_BITS}: lower maxScore or a column's max.`;
}

/**
 * Packings already worked out, by period, then maxScore: every score written or read is packed or
 * unpacked, and working one out (the bit length of maxScore as a binary string) cost more than the
 * packing itself. Keyed without building a key, as this runs for every score. Boards are few, so
 * this stays small. Boards with tie-break columns are keyed by their columns' array instead (fixed
 * at creation; a board read again brings a new array, and the old entry goes with it).
 */
const packings = new Map<Period, Map<number, Packing>>();
const columnPackings = new WeakMap<readonly TieBreak[], Map<Period, Map<number, Packing>>>();

/** The packing of one period's keys on a board. O(1). */
export function packingFor(board: Pick<Board, 'maxScore' | 'tieBreaks'>, period: Period): Packing {
  const columns = board.tieBreaks;
  if (columns && columns.length > 0) {
    let byPeriod = columnPackings.get(columns);
    if (!byPeriod) columnPackings.set(columns, (byPeriod = new Map<Period, Map<number, Packing>>()));
    // Keyed on maxScore too, as a plain board's are: the time's bits follow from it.
    let byMaxScore = byPeriod.get(period);
    if (!byMaxScore) byPeriod.set(period, (byMaxScore = new Map<number, Packing>()));
    let packing = byMaxScore.get(board.maxScore);
    if (!packing) byMaxScore.set(board.maxScore, (packing = workOut(board, period)));
    return packing;
  }
  let byMaxScore = packings.get(period);
  if (!byMaxScore) packings.set(period, (byMaxScore = new Map<number, Packing>()));
  let packing = byMaxScore.get(board.maxScore);
  if (!packing) byMaxScore.set(board.maxScore, (packing = workOut(board, period)));
  return packing;
}

function workOut(board: Pick<Board, 'maxScore' | 'tieBreaks'>, period: Period): Packing {
  const columnBits = Object.freeze((board.tieBreaks ?? []).map((column) => bitLength(column.max)));
  const bits = resultBits(board);
  if (bits > MAX_RESULT_BITS) throw new RangeError(packingProblem(board)!);
  const timeBits = MAX_RESULT_BITS - bits;
  if (timeBits < MIN_TIME_BITS) {
    // Only a board with columns gets here: createBoard caps a plain board's maxScore at MAX_PACKED_SCORE.
    if (columnBits.length === 0) throw new RangeError(`maxScore ${board.maxScore} exceeds ${MAX_PACKED_SCORE}`);
    return Object.freeze({ timeBits: 0, unitMs: 1, columnBits, timeInMember: true });
  }
  let unitMs = 1;
  while (unitMs * 2 ** timeBits < SPAN_MS[period]) unitMs *= 2;
  return Object.freeze({ timeBits, unitMs, columnBits, timeInMember: false });
}

type PackingBoard = Pick<Board, 'maxScore' | 'order' | 'tieBreaks'>;

/**
 * The packed value of a score (with its tie-break values, one per column) reached at `reachedAt`
 * in a bucket starting at `bucketStart`. O(columns).
 */
export function pack(
  board: PackingBoard,
  packing: Packing,
  score: number,
  reachedAt: Date,
  bucketStart: Date,
  tieBreakValues?: readonly number[] | null,
): number {
  return packAt(board, packing, score, reachedAt.getTime(), bucketStart.getTime(), tieBreakValues);
}

/** {@link pack} with both times in epoch milliseconds: what a rebuild packs a million rows with. O(columns). */
export function packAt(
  board: PackingBoard,
  packing: Packing,
  score: number,
  reachedMs: number,
  bucketStartMs: number,
  tieBreakValues?: readonly number[] | null,
): number {
  const s = scoreOrder(board, score, tieBreakValues);
  if (packing.timeInMember) return s;
  const slots = 2 ** packing.timeBits;
  // Clamp rather than refuse: a result from before the bucket's origin ties on time with the
  // earliest; one beyond the span (decades away) ties with the latest. Order is never inverted.
  const t = Math.min(slots - 1, Math.max(0, Math.floor((reachedMs - bucketStartMs) / packing.unitMs)));
  return s * slots + (slots - 1 - t);
}

/**
 * A result's place in the order every packed value follows: `s` above (the score, or its mirror on
 * a LOW_FIRST board), then each tie-break column's value (or its mirror, max - value, on a
 * LOW_FIRST column), so a larger one is a better result. What a DENSE board counts distinct, and
 * what COMPETITION ranks share. O(columns).
 */
export function scoreOrder(board: PackingBoard, score: number, tieBreakValues?: readonly number[] | null): number {
  let s = board.order === 'HIGH_FIRST' ? score : board.maxScore - score;
  const columns = board.tieBreaks;
  if (columns) {
    for (let i = 0; i < columns.length; i++) {
      const column = columns[i]!;
      const value = tieBreakValues?.[i] ?? 0;
      s = s * 2 ** bitLength(column.max) + (column.order === 'HIGH_FIRST' ? value : column.max - value);
    }
  }
  return s;
}

/** The {@link scoreOrder} of the result a packed value holds, whenever it was reached. O(1). */
export function scoreOrderOfPacked(packing: Packing, packed: number): number {
  return Math.floor(packed / 2 ** packing.timeBits);
}

/**
 * The lowest packed value of any result strictly better than (`score`, `tieBreakValues`), whenever
 * reached: members at or above it are exactly those with a better result (the result sits above
 * the time bits). O(columns).
 */
export function lowestPackedAbove(board: PackingBoard, packing: Packing, score: number, tieBreakValues?: readonly number[] | null): number {
  const s = scoreOrder(board, score, tieBreakValues);
  return (s + 1) * 2 ** packing.timeBits;
}

/**
 * The score, its tie-break values (empty on a board without columns) and the start of the time
 * unit it was reached in, read back from a packed value. On a board whose time is in the member,
 * `reachedAt` is the bucket's start: the member's prefix holds the time. O(columns).
 */
export function unpack(board: PackingBoard, packing: Packing, packed: number, bucketStart: Date): { score: number; reachedAt: Date; tieBreakValues: number[] } {
  const slots = 2 ** packing.timeBits;
  let s = scoreOrderOfPacked(packing, packed);
  const t = slots - 1 - (packed - s * slots);
  const columns = board.tieBreaks ?? [];
  const tieBreakValues = new Array<number>(columns.length);
  for (let i = columns.length - 1; i >= 0; i--) {
    const column = columns[i]!;
    const size = 2 ** packing.columnBits[i]!;
    const c = s % size;
    s = (s - c) / size;
    tieBreakValues[i] = column.order === 'HIGH_FIRST' ? c : column.max - c;
  }
  return {
    score: board.order === 'HIGH_FIRST' ? s : board.maxScore - s,
    reachedAt: new Date(bucketStart.getTime() + (packing.timeInMember ? 0 : t * packing.unitMs)),
    tieBreakValues,
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
