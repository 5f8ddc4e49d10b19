import type { Season } from '../db/seasons.js';
import type { Bucket } from '../model/buckets.js';
import type { Storage } from '../db/storage.js';
import type { RedisClient } from '../redis.js';
import { isStoreUnavailable } from '../store-errors.js';
import { createVersionTokens } from './version-tokens.js';
import { freshSingleFlight } from './fresh-single-flight.js';

/** The version tokens of each board's seasons (see version-tokens.ts): one field per board. */
export const SEASON_VERSIONS_KEY = 'lb:{seasons}:versions';

/**
 * How long a process uses what it read about a board's seasons at most, whatever the tokens say:
 * bounds how long a change made outside the service (SQL by hand), or one whose token could not be
 * written, goes unseen. One PostgreSQL query per board per second per process at most.
 */
export const SEASON_CACHE_MAX_AGE_MS = 1_000;

/**
 * Each board's live seasons (not closed yet: the current one and any scheduled ahead), kept in the
 * process, exact across processes: startSeason and every close rewrite the board's version token in
 * Redis after their commit and before they answer, and a lookup reads the token first and uses what
 * it kept only under the same token (see version-tokens.ts). So a season counts every result sent
 * after startSeason answered, from whichever process: a result is put in a season by its achievedAt
 * against startsAt and endsAt, which never change, and every lookup after the answer sees the season.
 * A lookup costs one Redis HMGET (shared by the lookups of its board asked while the last one was
 * out), plus a PostgreSQL query when the token moved.
 *
 * (A result already in flight while startSeason runs, its season looked up before the season
 * committed, is recorded without it; once startSeason has answered, none is.)
 *
 * While Redis does not answer, nothing is kept and every lookup asks PostgreSQL. While PostgreSQL
 * does not answer, a board's last known seasons are served instead (reads of the season go on from
 * Redis); submissions need PostgreSQL anyway, so a stale season never records a result.
 */
export interface SeasonDirectory {
  /** The board's seasons not closed yet, earliest first. */
  live(boardId: string): Promise<Season[]>;
  /**
   * The board's season with that id, live or closed, or null when it has none: what the board has
   * not (or no longer has live) is remembered as what it has is, under the same token and for as
   * long, so a read naming an unknown or closed season asks PostgreSQL once a token and second,
   * not once a read. A start or a close moves the token (`changed`), so a season started is seen
   * by every lookup after startSeason answered, as with `live`. At most
   * REMEMBERED_SEASONS_PER_BOARD ids are remembered a board; others are asked each time.
   */
  named(boardId: string, id: string): Promise<Season | null>;
  /**
   * The board's current season at `now`: the latest started of its live seasons (one past its
   * endsAt stays current until the next starts or it is closed), or null.
   */
  open(boardId: string, now: Date): Promise<Season | null>;
  /**
   * Marks the board's seasons changed in every process (call it after a start or a close committed,
   * before answering). Throws when Redis does not take it.
   */
  changed(boardId: string): Promise<void>;
}

interface Kept {
  token: string;
  readAt: number;
  seasons: Promise<Season[]>;
  /** Lookups of seasons not among `seasons` (closed, or none), under the same token. */
  others: Map<string, Promise<Season | null>>;
}

/**
 * How many ids of seasons not live (closed, or none) a process remembers a board, per token: a
 * client naming ever new ids gets no more memory for them, only one primary-key lookup each.
 */
export const REMEMBERED_SEASONS_PER_BOARD = 100;

/** The current season among a board's live ones at `now`. */
export function currentOf(live: readonly Season[], now: Date): Season | null {
  let current: Season | null = null;
  for (const season of live) if (season.startsAt.getTime() <= now.getTime()) current = season;
  return current;
}

/**
 * The process's directory of each board's live seasons. `clock` (monotonic milliseconds; default
 * performance.now) ages what it keeps.
 */
export function createSeasonDirectory(seasons: Storage['seasons'], redis: RedisClient, clock: () => number = () => performance.now()): SeasonDirectory {
  const versions = createVersionTokens(redis, SEASON_VERSIONS_KEY);
  const kept = new Map<string, Kept>();
  /** The last answer PostgreSQL gave per board, served while it does not answer. */
  const lastKnown = new Map<string, Season[]>();

  function read(boardId: string): Promise<Season[]> {
    return seasons.findLive(boardId).then(
      (seasons) => {
        lastKnown.set(boardId, seasons);
        return seasons;
      },
      (error: unknown) => {
        const last = lastKnown.get(boardId);
        if (isStoreUnavailable(error) && last) return last;
        throw error;
      },
    );
  }

  /**
   * The board's token, read by a read sent after the caller asked (freshSingleFlight): lookups of one
   * board asked while its read is out share the next one, so a burst of submissions costs an HMGET
   * a round trip, not one each, and each still sees every change answered before it asked. One
   * entry a board ever looked up, as `kept` has.
   */
  const tokenReads = new Map<string, () => Promise<string[] | undefined>>();
  function tokenOf(boardId: string): Promise<string[] | undefined> {
    let shared = tokenReads.get(boardId);
    if (!shared) tokenReads.set(boardId, (shared = freshSingleFlight(() => versions.read([boardId]))));
    return shared();
  }

  async function live(boardId: string): Promise<Season[]> {
    const [token] = (await tokenOf(boardId)) ?? [];
    if (token === undefined) return read(boardId);
    const now = clock();
    const entry = kept.get(boardId);
    if (entry && entry.token === token && now - entry.readAt < SEASON_CACHE_MAX_AGE_MS) return entry.seasons;
    // Timed from before the query is sent, and shared by every lookup under the same token.
    const fresh: Kept = { token, readAt: now, seasons: read(boardId), others: new Map() };
    fresh.seasons.catch(() => {
      if (kept.get(boardId) === fresh) kept.delete(boardId);
    });
    kept.set(boardId, fresh);
    return fresh.seasons;
  }

  async function named(boardId: string, id: string): Promise<Season | null> {
    const liveSeasons = await live(boardId);
    const found = liveSeasons.find((season) => season.id === id);
    if (found) return found;
    // Remembered only with the live seasons just read (the same token): not while Redis does not
    // answer (nothing is kept then), nor past a change read since.
    const entry = kept.get(boardId);
    if (!entry || (await entry.seasons) !== liveSeasons) return seasons.find(boardId, id);
    let known = entry.others.get(id);
    if (known) return known;
    if (entry.others.size >= REMEMBERED_SEASONS_PER_BOARD) return seasons.find(boardId, id);
    const asked = seasons.find(boardId, id);
    entry.others.set(id, (known = asked));
    asked.catch(() => {
      if (entry.others.get(id) === asked) entry.others.delete(id);
    });
    return known;
  }

  return {
    live,
    named,
    open: async (boardId, now) => currentOf(await live(boardId), now),
    async changed(boardId) {
      kept.delete(boardId);
      lastKnown.delete(boardId);
      await versions.changed([boardId]);
    },
  };
}

/** A season's bucket: labelled by its id, its tie-break time counted from its start. */
export function seasonBucket(season: Season): Bucket {
  return { period: 'SEASON', label: season.id, start: season.startsAt, end: season.endsAt };
}

/**
 * The bucket of the season a result achieved at `achievedAt` belongs in: the one of `seasons` not
 * closed whose [startsAt, endsAt) holds it (seasons never overlap, so at most one), or null.
 */
export function seasonBucketHolding(seasons: readonly Season[], achievedAt: Date): Bucket | null {
  const at = achievedAt.getTime();
  const season = seasons.find((s) => !s.closedAt && at >= s.startsAt.getTime() && (!s.endsAt || at < s.endsAt.getTime()));
  return season ? seasonBucket(season) : null;
}

/** How seasons are named: s1, s2, ... */
export const SEASON_LABEL = /^s[1-9]\d{0,8}$/;
