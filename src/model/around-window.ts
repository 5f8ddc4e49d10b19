/**
 * Which rows an around read (Query.around) answers, by position: the player's and `radius` either
 * side, cut at the list's edges; with `fill`, 2 × radius + 1 rows (the whole list when it holds
 * fewer), the window shifted inward where an edge cuts it, as centred as the edges allow: its first
 * row at clamp(rank − radius, 0, max(0, size − (2 × radius + 1))). Shared by the index's scripts'
 * callers (a sharded bucket's merged windows, ranking/shards.ts), the place loader cutting one run
 * for several reads (reads/place-loader.ts) and the frozen standings of a closed bucket
 * (db/frozen-reads.ts), so that every one of them cuts the same window; the one-node scripts
 * (ranking/scripts/read-around.ts) compute the same rule in Lua.
 */

/** How many rows an around read answers before the player's and after it. */
export interface AroundSides {
  before: number;
  after: number;
}

/**
 * The window's sides for the player at 0-based `rank` among `size` rows. Never negative, never past
 * either edge, whatever `rank` and `size` say (a sharded read's sum may lag its windows). O(1).
 */
export function aroundSides(rank: number, size: number, radius: number, fill: boolean): AroundSides {
  const last = Math.max(rank, size - 1);
  if (!fill) return { before: Math.min(radius, rank), after: Math.max(0, Math.min(radius, last - rank)) };
  const first = Math.max(0, Math.min(rank - radius, last + 1 - (2 * radius + 1)));
  return { before: Math.max(0, rank - first), after: Math.max(0, Math.min(first + 2 * radius, last) - rank) };
}
