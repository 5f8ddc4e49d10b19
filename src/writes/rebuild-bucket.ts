import type { StreamBoardScoresOptions } from '../db/board-scores.js';
import type { Storage } from '../db/storage.js';
import type { BoardScoreRow } from '../model/board.js';
import { keptUntil } from '../model/buckets.js';
import type { BoardBucket, RankingIndex, RebuildOptions } from '../ranking/index.js';
import type { TopCache } from '../ranking/top-cache.js';
import { announceTops } from '../pubsub/announce.js';
import type { Logger } from 'pino';
import { boardScoreList } from '../services/buckets.js';

/** What a rebuild needs: the system of record and the index, and the process's top cache to refresh. */
export interface RebuildDeps {
  storage: Pick<Storage, 'boardScores'>;
  index: RankingIndex;
  topCache?: Pick<TopCache, 'invalidate'>;
  /** Where a failed top-change announcement is reported. Default: nowhere. */
  log?: Pick<Logger, 'warn'>;
}

/** Tuning of one rebuild; the defaults suit a million members. */
export type RebuildBucketOptions = StreamBoardScoresOptions &
  Omit<RebuildOptions, 'expiresAt'> & {
    /**
     * Called with the rows read so far each time a chunk is read from PostgreSQL (0 once the
     * rebuild has claimed its keys, before the first read): a rebuild's progress. Default: none.
     */
    onProgress?: (rowsRead: number) => void;
  };

/** The chunks as they are read, telling `onProgress` how many rows have been read, from the first ask on. */
async function* counted(chunks: AsyncIterable<BoardScoreRow[]>, onProgress: (rowsRead: number) => void): AsyncGenerator<BoardScoreRow[]> {
  let read = 0;
  onProgress(read);
  for await (const chunk of chunks) {
    read += chunk.length;
    onProgress(read);
    yield chunk;
  }
}

/**
 * Rebuilds one board bucket's sorted set from its board scores in PostgreSQL, leaving out flagged
 * players, and swaps it in atomically; answers the number of players ranked afterwards. The key
 * takes the bucket's own expiry, as the write path sets it. Throws RebuildRunningError when
 * another rebuild of the bucket is running.
 *
 * O(N log N) for N board scores, in N / chunkSize cursor fetches and N / membersPerZadd ZADDs,
 * with one chunk in memory per write in flight.
 */
export async function rebuildBucket(deps: RebuildDeps, at: BoardBucket, options: RebuildBucketOptions = {}): Promise<number> {
  const rows = deps.storage.boardScores.stream(boardScoreList(at), options);
  const chunks = options.onProgress ? counted(rows, options.onProgress) : rows;
  const size = await deps.index.rebuild(at, chunks, { ...options, expiresAt: keptUntil(at.bucket, at.board.retention) });
  // This process serves the new top at once; other processes' caches are at most ~1 s old.
  deps.topCache?.invalidate(at);
  // And every process's topChanged watchers get it: the swap may have changed the top.
  await announceTops(deps, [at]);
  return size;
}
