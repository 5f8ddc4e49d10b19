/**
 * Issue 59's oracle for a board with tie-break columns, written as plainly as possible and sharing
 * no code with the service: each player's best result by (score, column 1, …, column k), each in
 * its own direction (equal on all: the earlier one stays), then sorted by that tuple, equal tuples
 * by the earlier achievedAt, then by player id bytes descending (as Redis REV-orders equal keys).
 */

export type Direction = 'HIGH_FIRST' | 'LOW_FIRST';

export interface TieBreakColumn {
  name: string;
  order: Direction;
  max: number;
}

export interface TieBreakResult {
  playerId: string;
  score: number;
  tieBreakValues: number[];
  achievedAt: Date;
}

export interface TieBreakRow {
  playerId: string;
  score: number;
  tieBreakValues: number[];
  rank: number;
}

/** Negative when `x` is better than `y` in `direction`, positive when worse, 0 when equal. */
const better = (direction: Direction, x: number, y: number) => (x === y ? 0 : (direction === 'HIGH_FIRST') === x > y ? -1 : 1);

/** Negative when result `a` is better than `b` by (score, columns); 0 when equal on all of them. */
function byTuple(order: Direction, columns: readonly TieBreakColumn[], a: TieBreakResult, b: TieBreakResult): number {
  const byScore = better(order, a.score, b.score);
  if (byScore !== 0) return byScore;
  for (const [i, column] of columns.entries()) {
    const byColumn = better(column.order, a.tieBreakValues[i]!, b.tieBreakValues[i]!);
    if (byColumn !== 0) return byColumn;
  }
  return 0;
}

/** The board's standings, best first, each ranked in `style` (COMPETITION and DENSE compare the whole tuple). */
export function tieBreakStandings(
  order: Direction,
  columns: readonly TieBreakColumn[],
  results: readonly TieBreakResult[],
  style: 'ORDINAL' | 'COMPETITION' | 'DENSE' = 'ORDINAL',
): TieBreakRow[] {
  const best = new Map<string, TieBreakResult>();
  for (const result of results) {
    const held = best.get(result.playerId);
    if (!held) best.set(result.playerId, result);
    else {
      const compared = byTuple(order, columns, result, held);
      if (compared < 0 || (compared === 0 && result.achievedAt < held.achievedAt)) best.set(result.playerId, result);
    }
  }
  const sorted = [...best.values()].sort(
    (a, b) =>
      byTuple(order, columns, a, b) ||
      a.achievedAt.getTime() - b.achievedAt.getTime() ||
      Buffer.compare(Buffer.from(b.playerId, 'utf8'), Buffer.from(a.playerId, 'utf8')),
  );
  let dense = 0;
  return sorted.map((result, i) => {
    const first = sorted.findIndex((other) => byTuple(order, columns, other, result) === 0);
    if (first === i) dense += 1;
    const rank = style === 'ORDINAL' ? i + 1 : style === 'COMPETITION' ? first + 1 : dense;
    return { playerId: result.playerId, score: result.score, tieBreakValues: result.tieBreakValues, rank };
  });
}
