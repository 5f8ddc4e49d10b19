import { type LoggedResult } from '../db/player-results.js';
import type { Board, Period } from '../model/board.js';
import { PERIODS } from '../model/board.js';
import type { Storage } from '../db/storage.js';
import type { RankingIndex } from '../ranking/index.js';
import { type HeldBucket, type PlayerBucketDeps, heldBuckets } from '../services/player-buckets.js';
import { closedMarker } from '../services/buckets.js';
import type { FrozenDirectory } from '../services/frozen-directory.js';
import { frozenPlaces } from './frozen.js';
import { type Standing, toStanding } from './views.js';
import { recordedOf } from './recorded-scores.js';

/** What reading a player's own board scores takes. */
export interface PlayerStandingsDeps extends PlayerBucketDeps {
  storage: Pick<Storage, 'players' | 'frozenStandings'>;
  /** Which buckets are closed: the player's standing in one is its frozen standings'. */
  frozen: FrozenDirectory;
  index: Pick<RankingIndex, 'standings'>;
}

/** One bucket a player holds a board score in: the score PostgreSQL keeps, and their standing in the index. */
export interface PlayerBucketScore {
  board: Board;
  period: Period;
  bucket: string;
  region: string | null;
  score: number;
  reachedAt: Date;
  /** Null while the player is not ranked there (flagged, or the index misses them). */
  standing: Standing | null;
}

/**
 * Every bucket that can be read now where the player holds a board score (ALL_TIME, open seasons,
 * calendar buckets still kept; globally and per region), with their standing in each, by board,
 * then period, newest bucket first: in a closed bucket the frozen one (reads/frozen.ts). One query,
 * then one index read (or one probe of the frozen standings) per bucket. O(B log N).
 */
export async function playerBucketScores(services: PlayerStandingsDeps, playerId: string): Promise<PlayerBucketScore[]> {
  const held = await heldBuckets(services, playerId, await services.storage.players.boardScores(playerId, services.now()));
  held.sort(
    (a, b) =>
      a.board.id.localeCompare(b.board.id) ||
      PERIODS.indexOf(a.bucket.period) - PERIODS.indexOf(b.bucket.period) ||
      b.bucket.label.localeCompare(a.bucket.label) ||
      (a.region ?? '').localeCompare(b.region ?? ''),
  );
  return Promise.all(
    held.map(async (at) => ({
      board: at.board,
      period: at.bucket.period,
      bucket: at.bucket.label,
      region: at.region,
      score: at.score.score,
      reachedAt: at.score.reachedAt,
      standing: await standingIn(services, at, playerId),
    })),
  );
}

/** The player's standing in one of their buckets: from its frozen standings once it is closed, else from the index. */
async function standingIn(services: PlayerStandingsDeps, at: HeldBucket, playerId: string): Promise<Standing | null> {
  const marker = await closedMarker(services, at);
  if (marker) {
    const [place] = await frozenPlaces(services, { ...at, frozen: marker }, [playerId], true);
    return place ? toStanding(at, place, marker.size) : null;
  }
  const view = await services.index.standings(at, [playerId]);
  const place = view.places[0];
  // The board score read from PostgreSQL is the recorded one, where it is the one the index holds.
  return place ? toStanding(at, place, view.size, recordedOf(at, place, at.score)) : null;
}

/** The player's latest accepted results on every board, newest first, at most `first`. */
export async function recentResults(services: { storage: Pick<Storage, 'players'> }, playerId: string, first: number): Promise<LoggedResult[]> {
  return services.storage.players.recentResults(playerId, first);
}
