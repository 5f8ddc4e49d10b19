import { type Season } from '../db/seasons.js';
import { closeSeason as closeAndFreeze } from './close-buckets.js';
import type { Board } from '../model/board.js';
import { requireBoard } from '../services/buckets.js';
import type { SeasonDirectory } from '../services/season-directory.js';
import type { Storage } from '../db/storage.js';
import type { BoardDirectory } from '../services/board-directory.js';
import type { CloseBucketDeps } from './close-buckets.js';
import { badInput, notFound } from '../errors.js';

const span = (season: Pick<Season, 'id' | 'startsAt' | 'endsAt'>) =>
  `"${season.id}" (${season.startsAt.toISOString()} to ${season.endsAt?.toISOString() ?? 'no end: close it first'})`;

/** What starting and closing seasons take (6 members). */
export interface SeasonDeps extends CloseBucketDeps {
  boards: BoardDirectory;
  seasons: SeasonDirectory;
}

/**
 * Starts a board's next season at `startsAt`: now when left out, or later, to schedule it ahead
 * (the boundary is then flipped by the clock, without an operator: results achieved from startsAt
 * on go to it, and the season closer closes the one before at its endsAt). From the moment it
 * answers, every API process puts every result achieved at or after startsAt into it (see
 * season-directory.ts). Refused (BAD_USER_INPUT) on a board that keeps no SEASON buckets, for a
 * startsAt in the past (results recorded since would be missing from it), an endsAt not after
 * startsAt, or a span overlapping a season of the board not closed yet.
 */
export async function startSeason(
  deps: SeasonDeps,
  args: { board: string; name: string; startsAt?: Date | null | undefined; endsAt?: Date | null | undefined },
): Promise<Season> {
  const board = await requireBoard(deps, args.board);
  if (!board.periods.includes('SEASON')) {
    throw badInput(`Board "${board.id}" keeps no SEASON buckets; a season there would rank nobody.`);
  }
  const now = deps.now();
  const startsAt = args.startsAt ?? now;
  if (startsAt.getTime() < now.getTime()) {
    throw badInput(`startsAt ${startsAt.toISOString()} is in the past (the server's clock reads ${now.toISOString()}); a season starts now or later.`);
  }
  const endsAt = args.endsAt ?? null;
  if (endsAt && endsAt.getTime() <= startsAt.getTime()) {
    throw badInput(`endsAt ${endsAt.toISOString()} must be after the season starts, at ${startsAt.toISOString()}.`);
  }
  const inserted = await deps.storage.seasons.insert({ boardId: board.id, name: args.name, startsAt, endsAt });
  if ('clash' in inserted) {
    throw badInput(
      `A season from ${startsAt.toISOString()} to ${endsAt?.toISOString() ?? 'no end'} overlaps board "${board.id}"'s season ${span(inserted.clash)}; ` +
        'start it at or after that season ends.',
    );
  }
  // Before answering: from here every process's next lookup sees the season (see season-directory.ts).
  await deps.seasons
    .changed(board.id)
    .catch((error: unknown) =>
      deps.log.error({ err: error, board: board.id }, 'could not mark the seasons changed; other processes see the new season within a second'),
    );
  return inserted.season;
}

/** Closes the board's current season and freezes its final standings; NOT_FOUND when none is open. */
export async function closeSeason(deps: SeasonDeps, boardId: string): Promise<Season> {
  const board = await requireBoard(deps, boardId);
  const current = await deps.seasons.open(board.id, deps.now());
  const season = current ? await closeAndFreeze(deps, board, current.id) : null;
  if (!season) throw notFound(`Board "${board.id}" has no open season.`);
  return season;
}

/** The board's current season, or null. One Redis read while its seasons are unchanged. */
export async function currentSeason(deps: { seasons: Pick<SeasonDirectory, 'open'>; now(): Date }, board: Board): Promise<Season | null> {
  return deps.seasons.open(board.id, deps.now());
}

/** Every season of the board, oldest first. */
export async function listSeasons(deps: { storage: Pick<Storage, 'seasons'> }, board: Board): Promise<Season[]> {
  return deps.storage.seasons.list(board.id);
}
