import type { Board, RankStyle } from '../model/board.js';
import type { BoardBucket, Place } from '../ranking/index.js';
import type { Services } from './context.js';

/** The style a read serves: the one it asks for, or its board's. */
export const styleOf = (board: Pick<Board, 'rankStyle'>, asked: RankStyle | null | undefined): RankStyle => asked ?? board.rankStyle;

/**
 * A run of places read in rank order (top, around, a page), with the ranks of `style`. ORDINAL:
 * as read. COMPETITION: a place whose score equals the place before it shares that one's rank; any
 * other place is the first of its score in the bucket (the run is contiguous), so its own rank is
 * its COMPETITION rank, except for the first of the run, whose score may have begun above the
 * run: that one is counted (countBetter), unless the run starts at rank 1. O(1) index calls.
 */
export async function styledRun<P extends Place>(services: Pick<Services, 'index'>, at: BoardBucket, places: readonly P[], style: RankStyle): Promise<P[]> {
  if (style === 'ORDINAL' || places.length === 0) return [...places];
  const first = places[0]!;
  const [better] = first.rank === 1 ? [0] : await services.index.countBetter(at, [first.score]);
  return competitionRun(places, better! + 1);
}

/** A run of places in rank order as COMPETITION ranks them, the first's rank given. O(run). */
export function competitionRun<P extends Place>(places: readonly P[], firstRank: number): P[] {
  const styled: P[] = [];
  for (const place of places) {
    const before = styled.at(-1);
    styled.push({ ...place, rank: before === undefined ? firstRank : before.score === place.score ? before.rank : place.rank });
  }
  return styled;
}

/** The top of a bucket (a run from rank 1) with the ranks of `style`: no index call. O(limit). */
export const styledTop = <P extends Place>(places: readonly P[], style: RankStyle): readonly P[] => (style === 'ORDINAL' ? places : competitionRun(places, 1));

/** Places read one by one (standings, friends), with the ranks of `style`: each score counted once. O(distinct scores) index calls. */
export async function styledPlaces<P extends Place | null>(
  services: Pick<Services, 'index'>,
  at: BoardBucket,
  places: readonly P[],
  style: RankStyle,
): Promise<P[]> {
  if (style === 'ORDINAL') return [...places];
  const scores = [...new Set(places.flatMap((place) => (place ? [place.score] : [])))];
  if (scores.length === 0) return [...places];
  const better = await services.index.countBetter(at, scores);
  const rankOf = new Map(scores.map((score, i) => [score, better[i]! + 1]));
  return places.map((place) => (place ? { ...place, rank: rankOf.get(place.score)! } : place));
}
