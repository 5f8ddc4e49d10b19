import type { Period } from '../model/board.js';
import { type ScoreBin, binEdges, binsOf, innerThresholds } from '../model/score-bins.js';
import { resolveReadBucket } from '../services/buckets.js';
import type { BucketReadDeps } from './bucket-list.js';

/**
 * How a bucket's scores spread (Query.scoreDistribution): `bins` equal-width bins from its lowest
 * to its highest score (model/score-bins.ts), each with how many players it holds. The bucket is
 * named as every read names it, a closed season too (resolveReadBucket: NOT_FOUND, BAD_USER_INPUT).
 * An open bucket is counted in the index (RankingIndex.scoreBins: two script calls per shard); a
 * closed one (it has a frozen marker) from its frozen standings (two queries: its ends, then one pass grouping its
 * scores by bin), erased players' rows included, as they keep their ranks. An empty bucket has no
 * bins; one whose players all hold one score has one bin, [score, score]. The bins' players add up
 * to the bucket's size.
 */
export async function scoreDistributionOf(
  deps: BucketReadDeps,
  args: { board: string; period: Period; bucket?: string | null | undefined; region?: string | null | undefined; bins: number },
): Promise<ScoreBin[]> {
  const at = await resolveReadBucket(deps.buckets, args);
  if (!at.frozen) return deps.index.scoreBins(at, args.bins);
  const key = { boardId: at.board.id, period: at.bucket.period, bucket: at.bucket.label, region: at.region ?? '' };
  const ends = await deps.storage.history.scoreEnds(key);
  if (!ends) return [];
  const edges = binEdges(ends.lowest, ends.highest, args.bins);
  return binsOf(edges, await deps.storage.history.binCounts(key, innerThresholds(edges)));
}
