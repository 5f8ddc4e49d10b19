import { type Season, findOpenSeason, findSeason } from '../db/seasons.js';
import type { Board } from '../model/board.js';
import type { Bucket } from '../model/buckets.js';
import type { Db } from '../db/client.js';
import type { Services } from './context.js';
import { badInput, notFound } from './errors.js';
import { isStoreUnavailable } from './store-errors.js';

/**
 * How long a process trusts what it read about a board's open season. startSeason starts a season
 * this long after it creates it.
 */
export const OPEN_SEASON_TTL_MS = 1_000;

/**
 * Each board's open season, cached in the process for {@link OPEN_SEASON_TTL_MS}, so the write
 * path asks PostgreSQL at most about once a second per board. Why a stale entry is harmless:
 *
 * - A result is put in a season by its achievedAt against startsAt and endsAt, which never change.
 * - A season starts one TTL after startSeason creates it, so by its startsAt every process has
 *   dropped any entry read before it existed: none misses a result achieved in it.
 * - After a close, another process may still hold the season for up to a TTL and record a result
 *   into it. The freeze read its snapshot in the closing transaction itself, within milliseconds of
 *   marking the season closed, so such a result is late and stays out of the final list; its index
 *   write may bring the dropped key back, which is why the season closer drops the keys of recently
 *   closed seasons again. Closing re-checks in SQL that the season is open, and freezing re-checks
 *   [startsAt, endsAt).
 *
 * While PostgreSQL does not answer, a board's last known open season is served instead (reads of
 * the season go on from Redis), and is not cached, so the first call after PostgreSQL is back asks
 * it again. Submissions need PostgreSQL anyway, so a stale season never records a result.
 */
export interface SeasonDirectory {
  /** The board's open season, or null. O(1) while cached. */
  open(boardId: string): Promise<Season | null>;
  /** Forgets a board's entry, after this process started or closed one of its seasons. */
  forget(boardId: string): void;
}

export function createSeasonDirectory(db: Db): SeasonDirectory {
  const cache = new Map<string, { readAt: number; season: Promise<Season | null> }>();
  /** The last answer PostgreSQL gave per board, served while it does not answer. */
  const lastKnown = new Map<string, Season | null>();
  return {
    open(boardId) {
      const now = performance.now();
      const cached = cache.get(boardId);
      if (cached && now - cached.readAt < OPEN_SEASON_TTL_MS) return cached.season;
      // Timed from before the query is sent, and shared by every caller until it expires.
      const entry = {
        readAt: now,
        season: findOpenSeason(db, boardId).then(
          (season) => {
            lastKnown.set(boardId, season);
            return season;
          },
          (error: unknown) => {
            if (cache.get(boardId) === entry) cache.delete(boardId);
            if (isStoreUnavailable(error) && lastKnown.has(boardId)) return lastKnown.get(boardId) ?? null;
            throw error;
          },
        ),
      };
      cache.set(boardId, entry);
      return entry.season;
    },
    forget(boardId) {
      cache.delete(boardId);
      lastKnown.delete(boardId);
    },
  };
}

/** The board's open season when it keeps SEASON buckets; null, without asking, when it does not. */
export async function openSeasonOf(services: Services, board: Board): Promise<Season | null> {
  return board.periods.includes('SEASON') ? services.seasons.open(board.id) : null;
}

/** A season's bucket: labelled by its id, its tie-break time counted from its start. */
export function seasonBucket(season: Season): Bucket {
  return { period: 'SEASON', label: season.id, start: season.startsAt, end: season.endsAt };
}

/** The season's bucket when a result achieved at `achievedAt` belongs in it: open, and in [startsAt, endsAt). */
export function seasonBucketHolding(season: Season | null, achievedAt: Date): Bucket | null {
  if (!season || season.closedAt) return null;
  const at = achievedAt.getTime();
  if (at < season.startsAt.getTime() || (season.endsAt && at >= season.endsAt.getTime())) return null;
  return seasonBucket(season);
}

/** How seasons are named: s1, s2, ... */
export const SEASON_LABEL = /^s[1-9]\d{0,8}$/;

/**
 * The SEASON bucket a read names: the open season when `label` is left out, or the open season
 * with that id. A closed season's index is gone (seasonResults serves its final standings), so it
 * is NOT_FOUND here, as is an unknown one. O(1) while cached, one query otherwise.
 */
export async function requireSeasonBucket(services: Services, board: Board, label: string | null | undefined): Promise<Bucket> {
  const open = await services.seasons.open(board.id);
  if (label === null || label === undefined) {
    if (!open) throw notFound(`Board "${board.id}" has no open season.`);
    return seasonBucket(open);
  }
  if (!SEASON_LABEL.test(label)) throw badInput(`"${label}" is not a SEASON bucket; name a season by its id, like s1.`);
  if (open?.id === label) return seasonBucket(open);
  const season = await findSeason(services.database.db, board.id, label);
  if (!season) throw notFound(`Board "${board.id}" has no season "${label}".`);
  if (season.closedAt) throw notFound(`Season "${label}" of board "${board.id}" is closed; seasonResults serves its final standings.`);
  return seasonBucket(season);
}
