import { type Season } from '../db/seasons.js';
import { type Board } from '../model/board.js';
import type { FreezeList } from '../db/frozen.js';
import { freezeListOf } from '../services/buckets.js';
import type { BoardBucket } from '../ranking/index.js';
import type { Logger } from 'pino';
import type { Storage } from '../db/storage.js';
import type { RankingIndex } from '../ranking/index.js';
import type { SeasonDirectory } from '../services/season-directory.js';
import { seasonBucket } from '../services/season-directory.js';
import { announceTops } from '../pubsub/announce.js';
import { closeLeagueRound, leagueRoundOf } from './close-league-rounds.js';

/**
 * Closing a bucket: its final standings frozen into PostgreSQL (db/frozen.ts), its sorted sets let
 * go, its watchers told. One mechanism for a calendar bucket (closed by the bucket closer at its
 * end plus the board's grace) and a season (by the closer at its endsAt plus the grace, or at once
 * by closeSeason). See docs/closing.md.
 */

/** What closing a bucket takes (5 members). */
export interface CloseBucketDeps {
  storage: Pick<Storage, 'frozen' | 'seasons' | 'leagueRounds'>;
  index: RankingIndex;
  seasons: Pick<SeasonDirectory, 'changed'>;
  now(): Date;
  log: Logger;
}

/** Every sorted set of a season: the global list and each of the board's regions. */
export function seasonBuckets(board: Board, season: Season): BoardBucket[] {
  const bucket = seasonBucket(season);
  return [null, ...board.regions].map((region) => ({ board, bucket, region }));
}

/**
 * Drops closed lists' sorted sets. A failure is logged, not thrown: the lists are frozen already,
 * and the bucket closer drops the keys of recently closed buckets again.
 */
export async function dropClosedKeys(deps: Pick<CloseBucketDeps, 'index' | 'log'>, lists: BoardBucket[]): Promise<void> {
  if (lists.length === 0) return;
  try {
    await deps.index.drop(lists);
  } catch (error) {
    deps.log.error(
      { err: error, board: lists[0]!.board.id, bucket: lists[0]!.bucket.label, lists: lists.length },
      'could not drop the keys of a closed bucket; the bucket closer retries',
    );
  }
}

/**
 * The one place a season is closed, by closeSeason or by the bucket closer. Marks the season
 * closed and freezes its final order into PostgreSQL in one transaction (see freezeLists: exactly
 * one caller wins, the write path is never held), then lets its keys go.
 *
 * Freezing reads the durable board scores rather than the index, so the frozen list is exact even
 * when the index is behind. Its order is the index's: the score, then the tie-break time unit of
 * the season's packing, then the player id as Redis orders equal values in a REV read.
 *
 * Answers the closed season, or null when it was not open (never started, or closed already,
 * perhaps by another process).
 * O(N log N) in PostgreSQL for N players, nothing proportional to N in this process.
 */
export async function closeSeason(deps: CloseBucketDeps, board: Board, seasonId: string): Promise<Season | null> {
  const started = performance.now();
  const open = await deps.storage.seasons.find(board.id, seasonId);
  if (!open || open.closedAt) return null;
  const lists = seasonBuckets(board, open);
  const closed = await deps.storage.frozen.freeze({ lists: freezeListsOf(lists), closedAt: deps.now(), season: { boardId: board.id, seasonId } });
  if (!closed?.season) return null;
  // Every process stops writing into it from here (see season-directory.ts); were Redis away, they
  // would within SEASON_CACHE_MAX_AGE_MS, and the bucket closer drops the keys again.
  await deps.seasons
    .changed(board.id)
    .catch((error: unknown) =>
      deps.log.error({ err: error, board: board.id }, 'could not mark the seasons changed; other processes see the close within a second'),
    );
  // A SEASON league's round closes with its season, at once, once every process writes past it (a
  // failure is retried by the bucket closer); before the announcement, so watchers see its outcomes.
  if (board.league?.period === 'SEASON') {
    await closeLeagueRound(deps, board, { label: seasonBucket(closed.season).label, end: closed.season.endsAt ?? closed.season.closedAt });
  }
  await dropClosedKeys(deps, seasonBuckets(board, closed.season));
  // Its watchers see the frozen view from now on (reads of a closed bucket are served from its frozen standings).
  await announceTops(deps, seasonBuckets(board, closed.season));
  deps.log.info(
    { board: board.id, season: closed.season.id, frozen: closed.lists.reduce((n, l) => n + l.size, 0), ms: Math.round(performance.now() - started) },
    'season closed and frozen',
  );
  return closed.season;
}

/**
 * Closes calendar lists (a day, week or month, globally or of a region) whose end plus the board's
 * grace has passed: freezes those still open, in one transaction (freezeLists: exactly one caller
 * freezes each, a crash rolls every one back), then drops the keys of all of them (frozen now or
 * before, by this process or another: a process that finds one frozen drops its keys too, since a
 * write of its own may have brought one back) and announces their tops. Answers the lists this
 * call froze, with their sizes. O(N log N) in PostgreSQL for N players.
 *
 * A list derived from the log holds the results recorded before its end plus the board's grace
 * (DerivedSpan.closesAt), even when the grace was lowered after that instant: a lowered grace
 * counts from the bucket's end, in every process alike (docs/closing.md).
 */
export async function closeCalendarLists(deps: CloseBucketDeps, lists: BoardBucket[]): Promise<{ at: BoardBucket; size: number }[]> {
  if (lists.length === 0) return [];
  const started = performance.now();
  const frozen = await deps.storage.frozen.freeze({ lists: freezeListsOf(lists), closedAt: deps.now() });
  // Deleted meanwhile (deleteBoard): nothing was frozen, and nothing of it is written again.
  if (frozen?.boardGone) return [];
  // A league round closes once its global list is frozen, by this call or an earlier one (whose
  // league close a crash may have cut short): a round closed already costs one probe.
  const round = leagueRoundOf(lists);
  if (round) await closeLeagueRound(deps, round.board, round.bucket);
  await dropClosedKeys(deps, lists);
  await announceTops(deps, lists);
  const done = (frozen?.lists ?? []).map(({ list, size }) => ({
    at: lists.find((at) => at.bucket.period === list.period && at.bucket.label === list.bucket && (at.region ?? '') === list.region)!,
    size,
  }));
  if (done.length > 0) {
    deps.log.info(
      {
        board: lists[0]!.board.id,
        lists: done.map(({ at, size }) => ({ period: at.bucket.period, bucket: at.bucket.label, region: at.region, size })),
        ms: Math.round(performance.now() - started),
      },
      'buckets closed and frozen',
    );
  }
  return done;
}

/** What freezing lists takes: each one's freezeListOf. */
function freezeListsOf(lists: BoardBucket[]): FreezeList[] {
  return lists.map(freezeListOf);
}
