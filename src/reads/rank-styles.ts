import type { Board, RankStyle } from '../model/board.js';
import type { BoardBucket, Place, RankingIndex } from '../ranking/index.js';

/** What counting the players ahead of a score takes. */
interface Counts {
  index: Pick<RankingIndex, 'countBetter' | 'countDistinctBetter'>;
}
import { badInput } from '../errors.js';

/**
 * The style a read serves: the one it asks for, or its board's. DENSE only on a board created
 * DENSE (only its index counts distinct scores): asked of another board, BAD_USER_INPUT.
 */
export function styleOf(board: Pick<Board, 'id' | 'rankStyle'>, asked: RankStyle | null | undefined): RankStyle {
  if (asked === 'DENSE' && board.rankStyle !== 'DENSE') {
    throw badInput(`rankStyle DENSE: board "${board.id}" was not created with rankStyle DENSE, so it cannot serve DENSE ranks; ask ORDINAL or COMPETITION.`);
  }
  return asked ?? board.rankStyle;
}

/**
 * How many players (COMPETITION) or distinct results (DENSE) are strictly better than each result:
 * its score, and on a board with tie-break columns their values (the whole tuple is compared).
 */
export function countBetter(
  services: Counts,
  at: BoardBucket,
  results: readonly Pick<Place, 'score' | 'tieBreakValues'>[],
  style: 'COMPETITION' | 'DENSE',
): Promise<number[]> {
  const scores = results.map((result) => result.score);
  const values = (at.board.tieBreaks?.length ?? 0) > 0 ? results.map((result) => result.tieBreakValues) : undefined;
  return style === 'DENSE' ? services.index.countDistinctBetter(at, scores, values) : services.index.countBetter(at, scores, values);
}

/**
 * Whether two places hold the same result: the same score and, on a board with tie-break columns,
 * the same value in every column (COMPETITION and DENSE share a rank exactly then). O(columns).
 */
function sameResult(a: Pick<Place, 'score' | 'tieBreakValues'>, b: Pick<Place, 'score' | 'tieBreakValues'>): boolean {
  if (a.score !== b.score) return false;
  const x = a.tieBreakValues ?? [];
  const y = b.tieBreakValues ?? [];
  return x.length === y.length && x.every((value, i) => value === y[i]);
}

/** A result as a map key: its score and tie-break values. */
const resultKey = (place: Pick<Place, 'score' | 'tieBreakValues'>) =>
  place.tieBreakValues && place.tieBreakValues.length > 0 ? `${place.score}|${place.tieBreakValues.join(',')}` : String(place.score);

/**
 * A run of places read in rank order (top, around, a page), with the ranks of `style`. ORDINAL:
 * as read. COMPETITION and DENSE: a place whose result (score, and every tie-break column) equals
 * the place before it shares that one's rank; any other place is the first of its result in the
 * bucket (the run is contiguous), so its COMPETITION rank is its own rank, and its DENSE rank one
 * more than the place before it. The first of the run, whose result may have begun above the run,
 * is counted (countBetter or countDistinctBetter), unless the run starts at rank 1. O(1) index calls.
 */
export async function styledRun<P extends Place>(services: Counts, at: BoardBucket, places: readonly P[], style: RankStyle): Promise<P[]> {
  if (style === 'ORDINAL' || places.length === 0) return [...places];
  const first = places[0]!;
  const [better] = first.rank === 1 ? [0] : await countBetter(services, at, [first], style);
  return sharedRun(places, style, better! + 1);
}

/** A run of places in rank order as COMPETITION or DENSE ranks them, the first's rank given. O(run). */
export function sharedRun<P extends Place>(places: readonly P[], style: 'COMPETITION' | 'DENSE', firstRank: number): P[] {
  const styled: P[] = [];
  for (const place of places) {
    const before = styled.at(-1);
    const next = style === 'DENSE' ? (before?.rank ?? 0) + 1 : place.rank;
    styled.push({ ...place, rank: before === undefined ? firstRank : sameResult(before, place) ? before.rank : next });
  }
  return styled;
}

/** The top of a bucket (a run from rank 1) with the ranks of `style`: no index call. O(limit). */
export const styledTop = <P extends Place>(places: readonly P[], style: RankStyle): readonly P[] =>
  style === 'ORDINAL' ? places : sharedRun(places, style, 1);

/** Places read one by one (standings, friends), with the ranks of `style`: each result counted once. O(distinct results) index calls. */
export async function styledPlaces<P extends Place | null>(services: Counts, at: BoardBucket, places: readonly P[], style: RankStyle): Promise<P[]> {
  if (style === 'ORDINAL') return [...places];
  const distinct = new Map<string, Place>();
  for (const place of places) if (place && !distinct.has(resultKey(place))) distinct.set(resultKey(place), place);
  if (distinct.size === 0) return [...places];
  const better = await countBetter(services, at, [...distinct.values()], style);
  const rankOf = new Map([...distinct.keys()].map((key, i) => [key, better[i]! + 1]));
  return places.map((place) => (place ? { ...place, rank: rankOf.get(resultKey(place))! } : place));
}
