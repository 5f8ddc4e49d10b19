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

/** How many players (COMPETITION) or distinct scores (DENSE) are strictly better than each score. */
function countBetter(services: Counts, at: BoardBucket, scores: number[], style: 'COMPETITION' | 'DENSE'): Promise<number[]> {
  return style === 'DENSE' ? services.index.countDistinctBetter(at, scores) : services.index.countBetter(at, scores);
}

/**
 * A run of places read in rank order (top, around, a page), with the ranks of `style`. ORDINAL:
 * as read. COMPETITION and DENSE: a place whose score equals the place before it shares that one's
 * rank; any other place is the first of its score in the bucket (the run is contiguous), so its
 * COMPETITION rank is its own rank, and its DENSE rank one more than the place before it. The first
 * of the run, whose score may have begun above the run, is counted (countBetter or
 * countDistinctBetter), unless the run starts at rank 1. O(1) index calls.
 */
export async function styledRun<P extends Place>(services: Counts, at: BoardBucket, places: readonly P[], style: RankStyle): Promise<P[]> {
  if (style === 'ORDINAL' || places.length === 0) return [...places];
  const first = places[0]!;
  const [better] = first.rank === 1 ? [0] : await countBetter(services, at, [first.score], style);
  return sharedRun(places, style, better! + 1);
}

/** A run of places in rank order as COMPETITION or DENSE ranks them, the first's rank given. O(run). */
export function sharedRun<P extends Place>(places: readonly P[], style: 'COMPETITION' | 'DENSE', firstRank: number): P[] {
  const styled: P[] = [];
  for (const place of places) {
    const before = styled.at(-1);
    const next = style === 'DENSE' ? (before?.rank ?? 0) + 1 : place.rank;
    styled.push({ ...place, rank: before === undefined ? firstRank : before.score === place.score ? before.rank : next });
  }
  return styled;
}

/** The top of a bucket (a run from rank 1) with the ranks of `style`: no index call. O(limit). */
export const styledTop = <P extends Place>(places: readonly P[], style: RankStyle): readonly P[] =>
  style === 'ORDINAL' ? places : sharedRun(places, style, 1);

/** Places read one by one (standings, friends), with the ranks of `style`: each score counted once. O(distinct scores) index calls. */
export async function styledPlaces<P extends Place | null>(services: Counts, at: BoardBucket, places: readonly P[], style: RankStyle): Promise<P[]> {
  if (style === 'ORDINAL') return [...places];
  const scores = [...new Set(places.flatMap((place) => (place ? [place.score] : [])))];
  if (scores.length === 0) return [...places];
  const better = await countBetter(services, at, scores, style);
  const rankOf = new Map(scores.map((score, i) => [score, better[i]! + 1]));
  return places.map((place) => (place ? { ...place, rank: rankOf.get(place.score)! } : place));
}
