import type { Logger } from 'pino';
import type { ClosedRound } from '../db/league-close.js';
import type { Storage } from '../db/storage.js';
import type { Board } from '../model/board.js';
import type { Bucket } from '../model/buckets.js';
import type { BoardBucket } from '../ranking/index.js';
import type { BoardDirectory } from '../services/board-directory.js';
import type { RankingIndex } from '../ranking/index.js';
import { encodeLeagueSignal } from '../pubsub/league-signal.js';

/**
 * League rounds' closes (issue 57): what happens once a league board's round, the league period's
 * bucket of its global list, is frozen. The close itself is db/league-close.ts, one transaction;
 * this says when it runs: right after the freeze (the bucket closer, closeSeason), and again at
 * every closer pass for a round frozen but not closed (a crash between the two).
 */

/** What closing league rounds takes (3 members). */
export interface CloseLeagueDeps {
  storage: Pick<Storage, 'leagueRounds'>;
  now(): Date;
  log: Logger;
}

/** The league round among closed lists, if they hold one: the global list of the board's league period. */
export function leagueRoundOf(lists: readonly BoardBucket[]): BoardBucket | undefined {
  return lists.find((at) => at.region === null && at.board.league?.period === at.bucket.period);
}

/**
 * Closes the league round `bucket` of the board (its global list frozen already), once: a round
 * closed before, or not frozen yet, answers null. A failure is logged, not thrown: the list is
 * frozen, and the next closer pass closes the round (closePendingLeagueRounds). Cost: see
 * db/league-close.ts closeLeagueRound.
 */
export async function closeLeagueRound(deps: CloseLeagueDeps, board: Board, bucket: Pick<Bucket, 'label'> & { end: Date | null }): Promise<ClosedRound | null> {
  const league = board.league;
  if (!league) return null;
  const started = performance.now();
  try {
    const closed = await deps.storage.leagueRounds.close({ board: { ...board, league }, round: bucket.label, endsAt: bucket.end }, deps.now());
    if (closed) deps.log.info({ board: board.id, ...closed, ms: Math.round(performance.now() - started) }, 'league round closed');
    return closed;
  } catch (error) {
    deps.log.error({ err: error, board: board.id, round: bucket.label }, 'could not close a league round; the bucket closer retries');
    return null;
  }
}

/**
 * What a closer pass does for leagues: closes every league round frozen but not closed (oldest
 * first, so a player's tiers move in the order of their rounds), and places the waiting players
 * whose last round closed while they began to wait. Two queries when nothing is pending.
 */
export async function closePendingLeagueRounds(
  deps: CloseLeagueDeps & { boards: Pick<BoardDirectory, 'find'>; index: Pick<RankingIndex, 'announceLeague'> },
): Promise<void> {
  const pending = await deps.storage.leagueRounds.pending();
  for (const round of pending.rounds) {
    const board = await deps.boards.find(round.boardId);
    if (!board?.league) continue;
    // Its cohorts' watchers are told, as after a close right after the freeze (announceTops).
    if (await closeLeagueRound(deps, board, { label: round.round, end: round.endsAt })) await announceLeague(deps, board.id, round.round);
  }
  for (const boardId of pending.released) {
    const board = await deps.boards.find(boardId);
    if (!board?.league) continue;
    const placed = await deps.storage.leagueRounds.placeReleased({ ...board, league: board.league });
    if (placed === 0) continue;
    deps.log.info({ board: boardId, placed }, 'waiting league players placed');
    await announceLeague(deps, boardId, null);
  }
}

/** Tells cohortChanged's watchers that anything of a round (null: of any round) of the board may have changed; a failure is logged. */
async function announceLeague(deps: Pick<CloseLeagueDeps, 'log'> & { index: Pick<RankingIndex, 'announceLeague'> }, boardId: string, round: string | null) {
  try {
    await deps.index.announceLeague(boardId, encodeLeagueSignal({ round, players: null }));
  } catch (error) {
    deps.log.warn({ err: error, board: boardId, round }, 'could not announce a league round closed; cohort watchers see it at the next change');
  }
}

/**
 * Deletes the cohorts of a league board's closed rounds among frozen lists going past their
 * retention (seasons are kept, so never among them). A failure is logged: the rows are only kept
 * longer.
 */
export async function pruneLeagueRounds(deps: CloseLeagueDeps, board: Board, expired: readonly BoardBucket[]): Promise<void> {
  const rounds = expired.filter((at) => at.region === null && at.board.league?.period === at.bucket.period).map((at) => at.bucket.label);
  if (rounds.length === 0) return;
  try {
    await deps.storage.leagueRounds.prune(board.id, rounds);
  } catch (error) {
    deps.log.error({ err: error, board: board.id, rounds }, 'could not delete closed league rounds past their retention');
  }
}
