import type { Storage } from '../db/storage.js';
import type { Board } from '../model/board.js';
import { bucketAt } from '../model/buckets.js';
import { shortestPeriod } from '../model/league.js';
import { refused } from '../errors.js';
import { type BoardScope, requireInScope } from '../auth/board-scope.js';
import type { BoardDirectory } from '../services/board-directory.js';
import { liveSeasonsOf, requireBoard } from '../services/buckets.js';
import type { SeasonDirectory } from '../services/season-directory.js';

/**
 * Tournaments (issue 57): joining a board (first come first served, never past maxPlayers), how
 * many joined, and the attempts a player used against maxAttempts. The write path's refusals
 * (NOT_JOINED, NO_ATTEMPTS_LEFT) are in writes/submit.ts and db/group-transaction.ts.
 */

/** What joining takes (2 members). */
export interface TournamentDeps {
  storage: Pick<Storage, 'members'>;
  boards: BoardDirectory;
}

/** What the tournament's records (Board.joined, Query.attemptsUsed) take (4 members); read through writes/records.ts. */
export interface TournamentRecordDeps extends TournamentDeps {
  seasons: Pick<SeasonDirectory, 'live'>;
  now(): Date;
}

/**
 * Mutation.joinBoard: true when newly joined, false when already in; BAD_USER_INPUT with
 * extensions.reason BOARD_FULL once maxPlayers have joined (a member already is still answered
 * false). NOT_FOUND for an unknown board; FORBIDDEN, before the board is looked up, for a board
 * outside the caller's key's `scope`. One transaction (db/members.ts joinBoard).
 */
export async function joinBoard(deps: TournamentDeps, boardId: string, playerId: string, scope?: BoardScope): Promise<boolean> {
  requireInScope(scope, [{ board: boardId, field: 'board' }]);
  const board = await requireBoard(deps, boardId);
  const outcome = await deps.storage.members.join(board.id, playerId, board.maxPlayers ?? null);
  if (outcome === 'full') {
    throw refused('BOARD_FULL', `Board "${board.id}" is full: ${board.maxPlayers} players have joined it (maxPlayers). Nothing was changed.`);
  }
  return outcome === 'joined';
}

/** Board.joined: how many players joined the board. One probe. */
export async function joinedCount(deps: Pick<TournamentRecordDeps, 'storage'>, board: Board): Promise<number> {
  return (await deps.storage.members.joined([board.id])).get(board.id) ?? 0;
}

/**
 * Query.attemptsUsed: the player's results on the board achieved in the open bucket of its shortest
 * period (global calendar; the current season for SEASON, none open: 0). NOT_FOUND for an unknown board.
 */
export async function attemptsUsed(deps: TournamentRecordDeps, boardId: string, playerId: string): Promise<number> {
  const board = await requireBoard(deps, boardId);
  const now = deps.now();
  const period = shortestPeriod(board);
  if (period === 'SEASON') {
    const season = (await liveSeasonsOf(deps, board)).find((s) => s.startsAt <= now && (s.endsAt === null || now < s.endsAt));
    return season ? deps.storage.members.attemptsUsed(board.id, playerId, { startsAt: season.startsAt, endsAt: season.endsAt }) : 0;
  }
  const bucket = bucketAt(board, period, now);
  return deps.storage.members.attemptsUsed(board.id, playerId, { startsAt: bucket.start, endsAt: bucket.end });
}
