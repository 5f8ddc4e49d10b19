import type { Logger } from 'pino';
import type { BoardBucket, RankingIndex } from '../ranking/index.js';

/**
 * The signal that a league's cohorts may have changed (issue 57, cohortChanged): one Redis sharded
 * channel per league board (ranking/keys.ts leagueChannel), a message per change, heard by every
 * API process that watches a cohort of the board (pubsub/cohort-changed.ts).
 *
 * A cohort's entries move when any of its members' scores in the round's bucket move, wherever
 * they stand on the board, not only in its top, so the top channels do not tell. A message names
 * the round and the players whose scores were written: a watcher reads again only the cohorts
 * holding one of them (or, for a player it does not know, a cohort that still has room: the only
 * ones a newcomer can be placed in). A message naming no players means anything of the round may
 * have changed (its close, a rebuild, an unflag): every watched cohort of it is read again, with
 * every watcher not yet placed (a close places the next round's waiting players).
 */

/** One change of a league board's cohorts, as it travels. */
export interface LeagueSignal {
  /** The round (its bucket label); null: any round of the board. */
  round: string | null;
  /** The players whose scores in the round moved; null: anything of the round may have changed. */
  players: string[] | null;
}

/**
 * Past this many players a message says "anything" rather than naming them: a group of results
 * is at most 500 of them, so only an unusually wide change reads every watched cohort again.
 */
export const MAX_SIGNAL_PLAYERS = 1_000;

/** The message sent for a signal: JSON, since a player id may hold any printable character. O(players). */
export function encodeLeagueSignal(signal: LeagueSignal): string {
  const players = signal.players && signal.players.length <= MAX_SIGNAL_PLAYERS ? signal.players : null;
  return JSON.stringify(players ? { r: signal.round, p: players } : { r: signal.round });
}

/** A message read back; a malformed one (none is sent) means anything of the board may have changed. O(message). */
export function decodeLeagueSignal(message: string): LeagueSignal {
  try {
    const parsed = JSON.parse(message) as { r?: unknown; p?: unknown };
    const round = typeof parsed.r === 'string' ? parsed.r : null;
    const players = Array.isArray(parsed.p) && parsed.p.every((id) => typeof id === 'string') ? parsed.p : null;
    return { round, players };
  } catch {
    return { round: null, players: null };
  }
}

/** Whether a list is a league round: its board's league period, on the global list. O(1). */
export function isLeagueRound(at: BoardBucket): boolean {
  return at.region === null && at.board.league?.period === at.bucket.period;
}

/** What announcing takes: the index's channel, and a log for a failure. */
export interface LeagueSignalDeps {
  index: Pick<RankingIndex, 'announceLeague'>;
  log?: Pick<Logger, 'warn'> | undefined;
}

/**
 * Announces league changes: for each round named by `changes`, one message naming its players
 * (`playerId` null: anything of the round), one SPUBLISH per (board, round). Lists that are no
 * league round are skipped, so a caller hands every list it wrote. A failure is logged, not
 * thrown: the change itself is made, and a missed announcement only delays a view until the
 * cohort's next change. O(changes).
 */
export async function announceLeagueChanges(deps: LeagueSignalDeps, changes: readonly { at: BoardBucket; playerId: string | null }[]): Promise<void> {
  const rounds = new Map<string, { boardId: string; round: string; players: Set<string> | null }>();
  for (const { at, playerId } of changes) {
    if (!isLeagueRound(at)) continue;
    const key = JSON.stringify([at.board.id, at.bucket.label]);
    let round = rounds.get(key);
    if (!round) rounds.set(key, (round = { boardId: at.board.id, round: at.bucket.label, players: new Set() }));
    if (playerId === null) round.players = null;
    else round.players?.add(playerId);
  }
  if (rounds.size === 0) return;
  try {
    await Promise.all(
      [...rounds.values()].map(({ boardId, round, players }) =>
        deps.index.announceLeague(boardId, encodeLeagueSignal({ round, players: players ? [...players] : null })),
      ),
    );
  } catch (error) {
    deps.log?.warn({ err: error, rounds: rounds.size }, 'could not announce league changes; cohort watchers see them at the next change');
  }
}

/**
 * Announces that a player changed in every round of these league boards (a flag or an erasure
 * takes them out of their cohorts): watchers read again the cohorts that hold them. One SPUBLISH
 * per board; failures logged as above. O(boards).
 */
export async function announceLeaguePlayer(deps: LeagueSignalDeps, boardIds: Iterable<string>, playerId: string): Promise<void> {
  const boards = [...new Set(boardIds)];
  if (boards.length === 0) return;
  try {
    await Promise.all(boards.map((boardId) => deps.index.announceLeague(boardId, encodeLeagueSignal({ round: null, players: [playerId] }))));
  } catch (error) {
    deps.log?.warn({ err: error, boards: boards.length }, 'could not announce league changes; cohort watchers see them at the next change');
  }
}
