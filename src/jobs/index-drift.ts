import { countRankable } from '../db/board-scores.js';
import type { Board } from '../model/board.js';
import { bucketAt } from '../model/buckets.js';
import type { BoardBucket } from '../ranking/index.js';
import type { Services } from '../resolvers/context.js';
import { seasonBucket } from '../resolvers/season-directory.js';

/** At most this many buckets are measured per scrape, the largest boards' current buckets first. */
const MAX_BUCKETS = 200;

/** The buckets being written now: each kept period's current bucket (and the open season), globally and per region. */
export async function liveBuckets(services: Services, board: Board): Promise<BoardBucket[]> {
  const now = services.now();
  const out: BoardBucket[] = [];
  for (const period of board.periods) {
    const season = period === 'SEASON' ? await services.seasons.open(board.id, now) : null;
    for (const region of [null, ...board.regions]) {
      // Each region's current bucket is on its own calendar.
      const bucket = period === 'SEASON' ? (season ? seasonBucket(season) : null) : bucketAt(board, period, now, region);
      if (bucket) out.push({ board, bucket, region });
    }
  }
  return out;
}

/** One bucket's drift: the board scores PostgreSQL holds for unflagged players, and the sorted set's members. */
export interface BucketDrift {
  /** Unflagged players' board scores in PostgreSQL: what the sorted set should hold. */
  stored: number;
  /** Members of the sorted set. */
  size: number;
  /** stored - size: positive when the index misses players, negative when it holds extra. */
  drift: number;
}

/** Measures one bucket: one count query and one ZCARD (per shard). */
export async function measureBucketDrift(services: Services, at: BoardBucket): Promise<BucketDrift> {
  const [stored, size] = await Promise.all([
    countRankable(services.database.sql, { boardId: at.board.id, period: at.bucket.period, bucket: at.bucket.label, region: at.region ?? '' }),
    services.index.size(at),
  ]);
  return { stored, size, drift: stored - size };
}

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
