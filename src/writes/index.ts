import type { Board } from '../model/board.js';
import type { Season } from '../db/seasons.js';
import type { Player } from '../db/players.js';
import type { BoardScope } from '../auth/board-scope.js';
import { type BoardDeps, type CreateBoardInput, type UpdateBoardInput, createBoard, updateBoard } from './boards.js';
import { type BoardDeletionDeps, deleteBoard } from './board-deletion.js';
import { type ErasureDeps, type ErasureOutcome, deletePlayer } from './erasure.js';
import { type EntryRemovalDeps, removeEntry } from './entry-removal.js';
import { type FlagDeps, type FlagOutcome, flagPlayer, unflagPlayer } from './flags.js';
import { type PlayerDeps, setFriends, upsertPlayer } from './players.js';
import { type SeasonDeps, closeSeason, startSeason } from './seasons.js';
import { type TournamentDeps, joinBoard } from './tournaments.js';
import { type SubmitDeps, type SubmitOptions, type SubmitScoreInput, type SubmitScorePayload, submitScores } from './submit.js';

/**
 * The write side, as the resolvers call it: every change a client can make, each use case bound
 * to the parts it uses (built in src/app.ts). What each takes is its own deps type: see the
 * use case's file.
 */
export interface WriteSide {
  submitScores(inputs: SubmitScoreInput[], options: SubmitOptions): Promise<SubmitScorePayload[]>;
  createBoard(input: CreateBoardInput): Promise<Board>;
  updateBoard(input: UpdateBoardInput): Promise<Board>;
  startSeason(args: Parameters<typeof startSeason>[1]): Promise<Season>;
  closeSeason(boardId: string): Promise<Season>;
  upsertPlayer(input: Parameters<typeof upsertPlayer>[1]): Promise<Player>;
  setFriends(playerId: string, friendIds: string[]): Promise<number>;
  flagPlayer(playerId: string, reason: string): Promise<FlagOutcome>;
  unflagPlayer(playerId: string): Promise<FlagOutcome>;
  deletePlayer(playerId: string): Promise<ErasureOutcome>;
  /** Deletes a board and everything of it (writes/board-deletion.ts); whether it existed. */
  deleteBoard(id: string): Promise<boolean>;
  /** Removes one player's entry from one board, recorded with who, when and why (writes/entry-removal.ts); whether anything was removed. */
  removeEntry(args: { board: string; playerId: string; reason: string; by: string }): Promise<boolean>;
  /** Tournaments: joins a player to a board (writes/tournaments.ts). */
  joinBoard(boardId: string, playerId: string, scope?: BoardScope): Promise<boolean>;
}

/** What each group of write use cases takes, each built with only what it uses. */
export interface WriteSideParts {
  submit: SubmitDeps;
  boards: BoardDeps;
  seasons: SeasonDeps;
  players: PlayerDeps;
  flags: FlagDeps;
  erasure: ErasureDeps;
  /** removeEntry (writes/entry-removal.ts). */
  removal: EntryRemovalDeps;
  tournaments: TournamentDeps;
  /** deleteBoard (writes/board-deletion.ts). */
  boardDeletion: BoardDeletionDeps;
}

/** Binds each write use case to its parts. */
export function createWriteSide(parts: WriteSideParts): WriteSide {
  return {
    submitScores: (inputs, options) => submitScores(parts.submit, inputs, options),
    createBoard: (input) => createBoard(parts.boards, input),
    updateBoard: (input) => updateBoard(parts.boards, input),
    startSeason: (args) => startSeason(parts.seasons, args),
    closeSeason: (boardId) => closeSeason(parts.seasons, boardId),
    upsertPlayer: (input) => upsertPlayer(parts.players, input),
    setFriends: (playerId, friendIds) => setFriends(parts.players, playerId, friendIds),
    flagPlayer: (playerId, reason) => flagPlayer(parts.flags, playerId, reason),
    unflagPlayer: (playerId) => unflagPlayer(parts.flags, playerId),
    deletePlayer: (playerId) => deletePlayer(parts.erasure, playerId),
    joinBoard: (boardId, playerId, scope) => joinBoard(parts.tournaments, boardId, playerId, scope),
    deleteBoard: (id) => deleteBoard(parts.boardDeletion, id),
    removeEntry: (args) => removeEntry(parts.removal, args),
  };
}
