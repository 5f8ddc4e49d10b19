import { type OracleBoard, rankEntries } from './oracle.js';

/**
 * The oracle of issue 60's reads and answers on a board without tie-break columns, worked out from
 * the results a test sent and nothing the service answered: the board's rows in rank order with
 * their ranks in each style, the pages of them either way and from a rank, the window `around`
 * with `fill`, and each result's previousRank as the results arrive one by one.
 */

export type Style = 'ORDINAL' | 'COMPETITION' | 'DENSE';

/** One result as sent: `achievedAt` in ms. */
export interface SentScore {
  playerId: string;
  score: number;
  matchId: string;
  achievedAt: number;
}

/** A row as the tests compare them: [rank, player id, score]. */
export type Row = [rank: number, playerId: string, score: number];

interface Entry {
  playerId: string;
  score: number;
  reachedAt: number;
}

/** A player's board score from their results (BEST: the best, reached at its earliest time; SUM: the total, reached at its latest non-zero part). */
function entryOf(board: Pick<OracleBoard, 'order' | 'aggregate'>, playerId: string, list: readonly SentScore[]): Entry {
  if (board.aggregate === 'SUM') {
    const nonZero = list.filter((r) => r.score > 0);
    const times = (nonZero.length ? nonZero : list).map((r) => r.achievedAt);
    return { playerId, score: list.reduce((sum, r) => sum + r.score, 0), reachedAt: nonZero.length ? Math.max(...times) : Math.min(...times) };
  }
  const best = board.order === 'HIGH_FIRST' ? Math.max(...list.map((r) => r.score)) : Math.min(...list.map((r) => r.score));
  return { playerId, score: best, reachedAt: Math.min(...list.filter((r) => r.score === best).map((r) => r.achievedAt)) };
}

/** Ranks of sorted entries in `style`: ORDINAL the position, COMPETITION one past those strictly ahead, DENSE one past the distinct scores ahead. */
function styled(sorted: readonly Entry[], style: Style): Row[] {
  let dense = 0;
  return sorted.map((entry, i) => {
    const first = sorted.findIndex((other) => other.score === entry.score);
    if (first === i) dense += 1;
    return [style === 'ORDINAL' ? i + 1 : style === 'COMPETITION' ? first + 1 : dense, entry.playerId, entry.score];
  });
}

/** A board's rows in rank order, ranked in `style`, from every result sent to it (replays count once). */
export function boardRows(board: Pick<OracleBoard, 'order' | 'aggregate'>, sent: readonly SentScore[], style: Style = 'ORDINAL'): Row[] {
  const byPlayer = new Map<string, SentScore[]>();
  const seen = new Set<string>();
  for (const result of sent) {
    const key = `${result.playerId}\u0000${result.matchId}`;
    if (seen.has(key)) continue;
    seen.add(key);
    byPlayer.set(result.playerId, [...(byPlayer.get(result.playerId) ?? []), result]);
  }
  const entries = [...byPlayer].map(([playerId, list]) => entryOf(board, playerId, list));
  return styled(rankEntries(board, entries), style);
}

/**
 * Each result's previousRank, in the order sent: the player's rank in `style` among the results
 * before it, null when they had none yet or when the result is a replay (same player and match).
 */
export function previousRanks(board: Pick<OracleBoard, 'order' | 'aggregate'>, sent: readonly SentScore[], style: Style): (number | null)[] {
  const seen = new Set<string>();
  return sent.map((result, i) => {
    const key = `${result.playerId}\u0000${result.matchId}`;
    if (seen.has(key)) return null;
    seen.add(key);
    const before = boardRows(board, sent.slice(0, i), style);
    return before.find(([, playerId]) => playerId === result.playerId)?.[0] ?? null;
  });
}

/** What a page's PageInfo says, cursors aside: whether rows come before it and after it. */
export interface PageFlags {
  hasPreviousPage: boolean;
  hasNextPage: boolean;
}

/** A page of `rows` from position `from` (0-based), `size` rows, cut at the end: its rows and flags. */
export function pageAt(rows: readonly Row[], from: number, size: number): { rows: Row[]; flags: PageFlags } {
  const start = Math.max(0, from);
  const end = Math.min(rows.length, start + size);
  return {
    rows: rows.slice(start, end),
    // Past the end: rows come before (when there are any), none after.
    flags: { hasPreviousPage: Math.min(start, rows.length) > 0, hasNextPage: end < rows.length },
  };
}

/** The pages of a walk up from the end, `last` rows each: the bottom page first, each page's rows top first. */
export function backwardPages(rows: readonly Row[], last: number): { rows: Row[]; flags: PageFlags }[] {
  const pages: { rows: Row[]; flags: PageFlags }[] = [];
  for (let end = rows.length; end > 0; end -= last) pages.push(pageAt(rows, Math.max(0, end - last), end - Math.max(0, end - last)));
  return pages;
}

/**
 * `around` with `fill`: the min(size, 2r + 1) rows holding the player, as centred as the edges
 * allow (its first position clamp(at − r, 0, max(0, size − (2r + 1))); without fill, the rows
 * up to r either side, cut at the edges. Empty when the player has no row.
 */
export function aroundRows(rows: readonly Row[], playerId: string, radius: number, fill: boolean): Row[] {
  const at = rows.findIndex(([, id]) => id === playerId);
  if (at < 0) return [];
  if (!fill) return rows.slice(Math.max(0, at - radius), at + radius + 1);
  const width = 2 * radius + 1;
  const start = Math.min(Math.max(at - radius, 0), Math.max(0, rows.length - width));
  return rows.slice(start, start + width);
}
