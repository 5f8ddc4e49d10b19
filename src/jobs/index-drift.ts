import { liveBuckets, measureBucketDrift } from '../operations/board-buckets.js';
import type { Services } from '../operations/services.js';

/** At most this many buckets are measured per scrape, the largest boards' current buckets first. */
const MAX_BUCKETS = 200;

/**
 * Sets the drift gauge for every live bucket: the board scores PostgreSQL holds for unflagged
 * players minus the members of the sorted set. Run on each scrape of /metrics; one count query and
 * one ZCARD per bucket.
 */
export async function measureIndexDrift(services: Services): Promise<void> {
  const { indexDrift } = services.metrics;
  indexDrift.reset();
  const boards = await services.boards.list();
  const buckets = (await Promise.all(boards.map((board) => liveBuckets(services, board)))).flat().slice(0, MAX_BUCKETS);
  await Promise.all(
    buckets.map(async (at) => {
      const { drift } = await measureBucketDrift(services, at);
      indexDrift.set({ board: at.board.id, period: at.bucket.period, bucket: at.bucket.label, region: at.region ?? '' }, drift);
    }),
  );
}
