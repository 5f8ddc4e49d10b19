import { type Season } from '../db/seasons.js';
import { closeSeason as closeAndFreeze } from './close-season.js';
import type { Board, EntryMetadata, RankStyle } from '../model/board.js';
import { requireBoard } from './buckets.js';
import { SEASON_LABEL, type SeasonDirectory } from '../services/season-directory.js';
import type { Storage } from '../db/storage.js';
import type { CursorCodec } from '../services/cursor.js';
import type { BoardDirectory } from '../services/board-directory.js';
import type { CloseSeasonDeps } from './close-season.js';
import { badInput, notFound } from '../errors.js';
import type { Standing, StandingConnection } from '../reads/views.js';
import { styleOf } from '../reads/rank-styles.js';

const span = (season: Pick<Season, 'id' | 'startsAt' | 'endsAt'>) =>
  `"${season.id}" (${season.startsAt.toISOString()} to ${season.endsAt?.toISOString() ?? 'no end: close it first'})`;

/** What starting and closing seasons take (6 members). */
export interface SeasonDeps extends CloseSeasonDeps {
  boards: BoardDirectory;
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
  services: SeasonDeps,
  args: { board: string; name: string; startsAt?: Date | null | undefined; endsAt?: Date | null | undefined },
): Promise<Season> {
  const board = await requireBoard(services, args.board);
  if (!board.periods.includes('SEASON')) {
    throw badInput(`Board "${board.id}" keeps no SEASON buckets; a season there would rank nobody.`);
  }
  const now = services.now();
  const startsAt = args.startsAt ?? now;
  if (startsAt.getTime() < now.getTime()) {
    throw badInput(`startsAt ${startsAt.toISOString()} is in the past (the server's clock reads ${now.toISOString()}); a season starts now or later.`);
  }
  const endsAt = args.endsAt ?? null;
  if (endsAt && endsAt.getTime() <= startsAt.getTime()) {
    throw badInput(`endsAt ${endsAt.toISOString()} must be after the season starts, at ${startsAt.toISOString()}.`);
  }
  const inserted = await services.storage.seasons.insert({ boardId: board.id, name: args.name, startsAt, endsAt });
  if ('clash' in inserted) {
    throw badInput(
      `A season from ${startsAt.toISOString()} to ${endsAt?.toISOString() ?? 'no end'} overlaps board "${board.id}"'s season ${span(inserted.clash)}; ` +
        'start it at or after that season ends.',
    );
  }
  // Before answering: from here every process's next lookup sees the season (see season-directory.ts).
  await services.seasons
    .changed(board.id)
    .catch((error: unknown) =>
      services.log.error({ err: error, board: board.id }, 'could not mark the seasons changed; other processes see the new season within a second'),
    );
  return inserted.season;
}

/** Closes the board's current season and freezes its final standings; NOT_FOUND when none is open. */
export async function closeSeason(services: SeasonDeps & { seasons: SeasonDirectory }, boardId: string): Promise<Season> {
  const board = await requireBoard(services, boardId);
  const current = await services.seasons.open(board.id, services.now());
  const season = current ? await closeAndFreeze(services, board, current.id) : null;
  if (!season) throw notFound(`Board "${board.id}" has no open season.`);
  return season;
}

/** The board's current season, or null. One Redis read while its seasons are unchanged. */
export async function currentSeason(services: { seasons: Pick<SeasonDirectory, 'open'>; now(): Date }, board: Board): Promise<Season | null> {
  return services.seasons.open(board.id, services.now());
}

/** Every season of the board, oldest first. */
export async function listSeasons(services: { storage: Pick<Storage, 'seasons'> }, board: Board): Promise<Season[]> {
  return services.storage.seasons.list(board.id);
}

/**
 * One page of a closed season's frozen final standings, from PostgreSQL, strictly after the
 * `after` cursor. The frozen list never changes, so its rank is a stable key: the cursor carries
 * the rank and the player (in the codec's `packed` slot), is bound to this board's season, and is
 * signed, so a forged or foreign one is refused. O(log N + first).
 */
export async function readSeasonResults(
  services: { storage: Pick<Storage, 'seasons'>; boards: BoardDirectory; cursors: CursorCodec },
  args: {
    board: string;
    season: string;
    first: number;
    after?: string | null | undefined;
    rankStyle?: RankStyle | null | undefined;
    /** Whether the selection asks for the standings' metadata (read from PostgreSQL only then). */
    withMetadata: boolean;
  },
): Promise<StandingConnection> {
  const board = await requireBoard(services, args.board);
  const scope = `season:${board.id}:${args.season}`;
  const after = args.after === null || args.after === undefined ? null : services.cursors.decode(scope, args.after);
  // A season id of another form than the service gives (s1, s2, ...) names no season: not asked about.
  const season = SEASON_LABEL.test(args.season) ? await services.storage.seasons.find(board.id, args.season) : null;
  if (!season) throw notFound(`Board "${board.id}" has no season "${args.season}".`);
  if (!season.closedAt) throw notFound(`Season "${season.id}" of board "${board.id}" is still open; read it with period SEASON.`);
  const page = await services.storage.seasons.pageResults({
    boardId: board.id,
    seasonId: season.id,
    afterRank: after?.packed ?? 0,
    limit: args.first + 1,
    metadata: args.withMetadata,
  });
  const rows = page.rows.slice(0, args.first);
  // COMPETITION: each score's first frozen rank; DENSE: its place among the distinct scores (an erased player's row still counts).
  const style = styleOf(board, args.rankStyle);
  const of = { boardId: board.id, seasonId: season.id, scores: rows.map((row) => row.score) };
  const styledRanks =
    style === 'COMPETITION'
      ? await services.storage.seasons.firstRanksOfScores(of)
      : style === 'DENSE'
        ? await services.storage.seasons.denseRanksOfScores({ ...of, order: board.order })
        : null;
  const edges = rows.map((row) => ({
    cursor: services.cursors.encode(scope, { packed: row.rank, playerId: row.playerId }),
    node: frozenStanding(row, styledRanks?.get(row.score) ?? row.rank, page.size),
  }));
  return { edges, pageInfo: { hasNextPage: page.rows.length > args.first, endCursor: edges.at(-1)?.cursor ?? null } };
}

/** A frozen standing as served, at the rank its style gives it. */
function frozenStanding(row: { playerId: string; score: number; reachedAt: Date; metadata: EntryMetadata | null }, rank: number, size: number): Standing {
  return {
    playerId: row.playerId,
    rank,
    score: row.score,
    percentile: size === 0 ? 0 : (100 * (size - rank)) / size,
    source: { recorded: { reachedAt: row.reachedAt, metadata: row.metadata } },
  };
}
