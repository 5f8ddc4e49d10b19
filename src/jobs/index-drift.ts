import { liveBuckets, measureBucketDrift } from '../operations/board-buckets.js';
import type { Services } from '../operations/services.js';
import { keepsBoardScores } from '../model/board.js';
import type { BoardBucket } from '../ranking/index.js';

/** At most this many buckets are measured per scrape, the largest boards' current buckets first. */
const MAX_BUCKETS = 200;

/**
 * Whether the gauge measures a live bucket on every scrape: every bucket kept as rows, and of the
 * buckets derived from the log (keepsBoardScores) the day alone. Counting a derived bucket reads its
 * span of the log, a result a row: a month is thirty days of results where its day is one, and a
 * result that misses the index misses its day as well (the write path writes all of a result's
 * buckets together, the catch-up re-applies them together). The week, month and season are
 * measured when asked for (the console's bucket list, rebuildBoard's progress).
 */
const measuredOnScrape = (at: BoardBucket) => keepsBoardScores(at.board, at.bucket.period) || at.bucket.period === 'DAILY';

/**
 * Sets the drift gauge for every live bucket it measures (see measuredOnScrape): the board scores
 * PostgreSQL holds for unflagged players minus the members of the sorted set. Run on each scrape of
 * /metrics; one count query and one ZCARD per bucket.
 */
export async function measureIndexDrift(services: Services): Promise<void> {
  const { indexDrift } = services.metrics;
  indexDrift.reset();
  const boards = await services.boards.list();
  const buckets = (await Promise.all(boards.map((board) => liveBuckets(services, board)))).flat().filter(measuredOnScrape).slice(0, MAX_BUCKETS);
  await Promise.all(
    buckets.map(async (at) => {
      const { drift } = await measureBucketDrift(services, at);
      indexDrift.set({ board: at.board.id, period: at.bucket.period, bucket: at.bucket.label, region: at.region ?? '' }, drift);
    }),
  );
}
