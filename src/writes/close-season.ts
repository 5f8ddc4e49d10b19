import { type Season } from '../db/seasons.js';
import { type Board } from '../model/board.js';
import type { FreezeList } from '../db/frozen.js';
import { boardScoreList } from '../services/buckets.js';
import type { BoardBucket } from '../ranking/index.js';
import { type Packing, packingFor } from '../ranking/packing.js';
import type { Logger } from 'pino';
import type { Storage } from '../db/storage.js';
import type { RankingIndex } from '../ranking/index.js';
import type { SeasonDirectory } from '../services/season-directory.js';
import { seasonBucket } from '../services/season-directory.js';
import { announceTops } from '../pubsub/announce.js';

/** Every sorted set of a season: the global list and each of the board's regions. */
/** What closing a season takes (5 members). */
export interface CloseSeasonDeps {
  storage: Pick<Storage, 'frozen' | 'seasons'>;
  index: RankingIndex;
  seasons: Pick<SeasonDirectory, 'changed'>;
  now(): Date;
  log: Logger;
}

export function seasonBuckets(board: Board, season: Season): BoardBucket[] {
  const bucket = seasonBucket(season);
  return [null, ...board.regions].map((region) => ({ board, bucket, region }));
}

/**
 * Drops a closed season's sorted sets. A failure is logged, not thrown: the season is closed and
 * frozen already, and the season closer drops the keys of recently closed seasons again.
 */
export async function dropSeasonKeys(deps: Pick<CloseSeasonDeps, 'index' | 'log'>, board: Board, season: Season): Promise<void> {
  try {
    await deps.index.drop(seasonBuckets(board, season));
  } catch (error) {
    deps.log.error({ err: error, board: board.id, season: season.id }, 'could not drop the keys of a closed season; the season closer retries');
  }
}

/**
 * The one place a season is closed, by closeSeason or by the season closer. Marks the season
 * closed and freezes its final order into PostgreSQL in one transaction (see closeAndFreezeSeason:
 * exactly one caller wins, the write path is never held), then lets its keys go.
 *
 * Freezing reads the durable board scores rather than the index, so the frozen list is exact even
 * when the index is behind. Its order is the index's: the score, then the tie-break time unit of
 * the season's packing, then the player id as Redis orders equal values in a REV read.
 *
 * Answers the closed season, or null when it was not open (never started, or closed already,
 * perhaps by another process).
 * O(N log N) in PostgreSQL for N players, nothing proportional to N in this process.
 */
export async function closeSeason(deps: CloseSeasonDeps, board: Board, seasonId: string): Promise<Season | null> {
  const started = performance.now();
  const packing = packingFor(board, 'SEASON');
  const open = await deps.storage.seasons.find(board.id, seasonId);
  if (!open || open.closedAt) return null;
  const bucket = seasonBucket(open);
  const lists = [null, ...board.regions].map((region) => freezeListOf(board, { board, bucket, region }, packing));
  const closed = await deps.storage.frozen.freeze({ lists, closedAt: deps.now(), season: { boardId: board.id, seasonId } });
  if (!closed?.season) return null;
  // Every process stops writing into it from here (see season-directory.ts); were Redis away, they
  // would within SEASON_CACHE_MAX_AGE_MS, and the season closer drops the keys again.
  await deps.seasons
    .changed(board.id)
    .catch((error: unknown) =>
      deps.log.error({ err: error, board: board.id }, 'could not mark the seasons changed; other processes see the close within a second'),
    );
  await dropSeasonKeys(deps, board, closed.season);
  // Its watchers see the season's lists go empty (seasonResults serves the final order from now on).
  await announceTops(deps, seasonBuckets(board, closed.season));
  deps.log.info(
    { board: board.id, season: closed.season.id, frozen: closed.lists.reduce((n, l) => n + l.size, 0), ms: Math.round(performance.now() - started) },
    'season closed and frozen',
  );
  return closed.season;
}

/** What freezing one list of a bucket takes: where its board scores are, its span, and the index's order. */
export function freezeListOf(board: Board, at: BoardBucket, packing: Packing): FreezeList {
  return {
    ...boardScoreList(at),
    startsAt: at.bucket.start,
    endsAt: at.bucket.end,
    order: board.order,
    tie: { unitMs: packing.unitMs, slots: 2 ** packing.timeBits },
  };
}
