import { type Season, findOpenSeason, findSeason, insertSeason, listSeasons as listSeasonRows, pageSeasonResults } from '../db/seasons.js';
import { closeSeason as closeAndFreeze } from '../jobs/close-season.js';
import type { Board } from '../model/board.js';
import { requireBoard } from './buckets.js';
import type { Context } from './context.js';
import { badInput, notFound } from './errors.js';
import type { StandingConnection } from './pages.js';
import { OPEN_SEASON_TTL_MS } from './season-directory.js';

/**
 * Starts a board's next season. It starts one open-season cache period after now, so that every
 * process knows of it before its first result (see season-directory.ts). Refused (BAD_USER_INPUT)
 * while the board has an open season, on a board that keeps no SEASON buckets, or when endsAt is
 * not after the start.
 */
export async function startSeason(ctx: Context, args: { board: string; name: string; endsAt?: Date | null | undefined }): Promise<Season> {
  const board = await requireBoard(ctx, args.board);
  if (!board.periods.includes('SEASON')) {
    throw badInput(`Board "${board.id}" keeps no SEASON buckets; a season there would rank nobody.`);
  }
  const { services } = ctx;
  const startsAt = new Date(services.now().getTime() + OPEN_SEASON_TTL_MS);
  const endsAt = args.endsAt ?? null;
  if (endsAt && endsAt.getTime() <= startsAt.getTime()) {
    throw badInput(`endsAt ${endsAt.toISOString()} must be after the season starts, at ${startsAt.toISOString()}.`);
  }
  const season = await insertSeason(services.database.db, { boardId: board.id, name: args.name, startsAt, endsAt });
  services.seasons.forget(board.id);
  if (!season) {
    const open = await findOpenSeason(services.database.db, board.id);
    throw badInput(`Board "${board.id}" has an open season${open ? ` ("${open.id}")` : ''}; close it before starting the next.`);
  }
  return season;
}

/** Closes the board's open season and freezes its final standings; NOT_FOUND when none is open. */
export async function closeSeason(ctx: Context, boardId: string): Promise<Season> {
  const board = await requireBoard(ctx, boardId);
  const season = await closeAndFreeze(ctx.services, board);
  if (!season) throw notFound(`Board "${board.id}" has no open season.`);
  return season;
}

/** The board's open season, or null; at most about a second old. O(1) while cached. */
export async function currentSeason(ctx: Context, board: Board): Promise<Season | null> {
  return ctx.services.seasons.open(board.id);
}

/** Every season of the board, oldest first. */
export async function listSeasons(ctx: Context, board: Board): Promise<Season[]> {
  return listSeasonRows(ctx.services.database.db, board.id);
}

/**
 * One page of a closed season's frozen final standings, from PostgreSQL, strictly after the
 * `after` cursor. The frozen list never changes, so its rank is a stable key: the cursor carries
 * the rank and the player (in the codec's `packed` slot), is bound to this board's season, and is
 * signed, so a forged or foreign one is refused. O(log N + first).
 */
export async function readSeasonResults(
  ctx: Context,
  args: { board: string; season: string; first: number; after?: string | null | undefined },
): Promise<StandingConnection> {
  const board = await requireBoard(ctx, args.board);
  const { services } = ctx;
  const scope = `season:${board.id}:${args.season}`;
  const after = args.after === null || args.after === undefined ? null : services.cursors.decode(scope, args.after);
  const season = await findSeason(services.database.db, board.id, args.season);
  if (!season) throw notFound(`Board "${board.id}" has no season "${args.season}".`);
  if (!season.closedAt) throw notFound(`Season "${season.id}" of board "${board.id}" is still open; read it with period SEASON.`);
  const page = await pageSeasonResults(services.database.db, {
    boardId: board.id,
    seasonId: season.id,
    afterRank: after?.packed ?? 0,
    limit: args.first + 1,
  });
  const edges = page.rows.slice(0, args.first).map((row) => ({
    cursor: services.cursors.encode(scope, { packed: row.rank, playerId: row.playerId }),
    node: {
      playerId: row.playerId,
      rank: row.rank,
      score: row.score,
      percentile: page.size === 0 ? 0 : (100 * (page.size - row.rank)) / page.size,
      achievedAt: row.reachedAt,
    },
  }));
  return { edges, pageInfo: { hasNextPage: page.rows.length > args.first, endCursor: edges.at(-1)?.cursor ?? null } };
}
