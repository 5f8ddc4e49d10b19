/**
 * A bucket's score distribution: `bins` equal-width bins from its lowest to its highest score
 * (Query.scoreDistribution). Scores are whole numbers, so a bin [from, to) holds exactly the
 * scores from ceil(from) up to, not including, ceil(to); the last bin holds its `to` (the highest
 * score) too. Shared by the index's count (ranking/) and the frozen standings' (db/history.ts), so
 * both cut a bucket at the very same edges.
 */

/** One bin: the scores in [from, to) (the last bin: [from, to]) and how many players hold one. */
export interface ScoreBin {
  from: number;
  to: number;
  players: number;
}

/**
 * The bins' edges: `bins + 1` values from `lowest` to `highest`, the last exactly `highest`. When
 * every score is the same (lowest == highest) there is one bin, [lowest, lowest], whatever `bins`
 * says: bins of width 0 would hold nothing but the first. O(bins).
 */
export function binEdges(lowest: number, highest: number, bins: number): number[] {
  if (lowest === highest) return [lowest, lowest];
  // (highest - lowest) * i is a whole number well below 2^53, so each edge is one rounding away from exact, and the last is exact.
  return Array.from({ length: bins + 1 }, (_, i) => lowest + ((highest - lowest) * i) / bins);
}

/**
 * The whole scores where each bin after the first begins: a score s is in bin i when
 * thresholds[i - 1] <= s < thresholds[i] (the first bin takes everything below thresholds[0], the
 * last everything from its threshold on). Ascending, maybe repeated (a bin narrower than one
 * score between two whole numbers holds none). O(bins).
 */
export function innerThresholds(edges: readonly number[]): number[] {
  return edges.slice(1, -1).map((edge) => Math.ceil(edge));
}

/** The bins of `edges` holding `counts` players each (one count per bin). O(bins). */
export function binsOf(edges: readonly number[], counts: readonly number[]): ScoreBin[] {
  return counts.map((players, i) => ({ from: edges[i]!, to: edges[i + 1]!, players }));
}

/**
 * Each bin's count from how many players hold at least each threshold (`atLeast`, one per
 * threshold, non-increasing) and the bucket's size: the first bin is the size less those at least
 * its successor's threshold, each other the difference of its own and the next, the last its own.
 * So the counts always add up to the size. O(bins).
 */
export function countsFromAtLeast(size: number, atLeast: readonly number[]): number[] {
  const bounds = [size, ...atLeast, 0];
  return bounds.slice(0, -1).map((count, i) => count - bounds[i + 1]!);
}
