import type { LoggedResult } from '../db/player-results.js';
import type { Player } from '../db/players.js';
import type { Season } from '../db/seasons.js';
import type { Storage } from '../db/storage.js';
import type { Board } from '../model/board.js';
import { type PlayerBucketScore, type PlayerStandingsDeps, playerBucketScores, recentResults } from '../reads/player-standings.js';
import type { BoardDirectory } from '../services/board-directory.js';
import { requireBoard } from '../services/buckets.js';
import type { SeasonDirectory } from '../services/season-directory.js';
import { currentSeason, listSeasons } from './seasons.js';
import { findPlayer } from './players.js';
import { attemptsUsed, joinedCount } from './tournaments.js';

/**
 * What the write side keeps, read back: boards, their seasons, a player's profile, board scores
 * and recent results. The rankings themselves are the read side's (src/reads/).
 */
export interface Records {
  boards(): Promise<Board[]>;
  /** The board, or null when there is none. */
  board(id: string): Promise<Board | null>;
  /** The board; NOT_FOUND when there is none (a record naming a board since deleted). */
  requireBoard(id: string): Promise<Board>;
  currentSeason(board: Board): Promise<Season | null>;
  seasons(board: Board): Promise<Season[]>;
  player(id: string): Promise<Player | null>;
  boardScores(playerId: string): Promise<PlayerBucketScore[]>;
  recentResults(playerId: string, first: number): Promise<LoggedResult[]>;
  /** How many players joined the board (tournaments). */
  joined(board: Board): Promise<number>;
  /** The results the player used in the open bucket of the board's shortest period (maxAttempts). */
  attemptsUsed(boardId: string, playerId: string): Promise<number>;
}

/** What the records take (5 members). */
export interface RecordsDeps {
  boards: BoardDirectory;
  seasons: Pick<SeasonDirectory, 'open' | 'live'>;
  storage: Pick<Storage, 'players' | 'seasons' | 'members'>;
  /** A player's standings in every bucket they hold a board score in. */
  playerStandings: PlayerStandingsDeps;
  now(): Date;
}

export function createRecords(deps: RecordsDeps): Records {
  return {
    boards: () => deps.boards.list(),
    board: (id) => deps.boards.find(id),
    requireBoard: (id) => requireBoard(deps, id),
    currentSeason: (board) => currentSeason(deps, board),
    seasons: (board) => listSeasons(deps, board),
    player: (id) => findPlayer(deps, id),
    boardScores: (playerId) => playerBucketScores(deps.playerStandings, playerId),
    recentResults: (playerId, first) => recentResults(deps, playerId, first),
    joined: (board) => joinedCount(deps, board),
    attemptsUsed: (boardId, playerId) => attemptsUsed(deps, boardId, playerId),
  };
}
