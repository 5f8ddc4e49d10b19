import type { Role } from '../auth/keys.js';
import type { StoredKey } from '../db/api-keys.js';
import type { EntryRemoval, EntryRemovalFilter } from '../db/entry-removals.js';
import type { PlayerFlag } from '../db/flags.js';
import type { Player } from '../db/players.js';
import type { Storage } from '../db/storage.js';
import type { Board } from '../model/board.js';
import type { BucketArgs } from '../services/buckets.js';
import type { RebuildJob, RebuildJobs } from '../services/rebuild-jobs.js';
import { type ApiKeyDeps, type IssuedKey, issueApiKey, listApiKeys, revokeApiKey } from './api-keys.js';
import { type BoardBucketDeps, type BucketStatus, boardBuckets } from './board-buckets.js';
import { listEntryRemovals } from './entry-removal.js';
import { listFlaggedPlayers, playerFlag } from './flags.js';
import { searchPlayers } from './players.js';
import { type RebuildBoardDeps, findRebuild, rebuildBoard, startRebuild } from './rebuild.js';
import { type StoreStatus, type StoreStatusDeps, storeStatus } from './store-status.js';

/**
 * What an operator runs (the console, the admin API): keys, rebuilds, each bucket's state, the
 * stores' health, moderation lists and player search. Each use case bound to the parts it uses
 * (built in src/app.ts).
 */
export interface AdminSide {
  apiKeys(): Promise<StoredKey[]>;
  createApiKey(input: { name: string; role: Role; boards: readonly string[] }): Promise<IssuedKey>;
  revokeApiKey(idOrName: string): Promise<StoredKey[]>;
  rebuildBoard(args: BucketArgs): Promise<number>;
  startRebuild(args: BucketArgs): Promise<RebuildJob>;
  findRebuild(id: string): Promise<RebuildJob | null>;
  boardBuckets(board: Board): Promise<BucketStatus[]>;
  storeStatus(): Promise<StoreStatus>;
  searchPlayers(text: string, first: number): Promise<Player[]>;
  flaggedPlayers(first: number): Promise<PlayerFlag[]>;
  playerFlag(playerId: string): Promise<PlayerFlag | null>;
  /** The recorded removeEntry calls, newest first (writes/entry-removal.ts). */
  entryRemovals(filter: EntryRemovalFilter): Promise<EntryRemoval[]>;
}

/** What each group of admin use cases takes, each built with only what it uses. */
export interface AdminSideParts {
  keys: ApiKeyDeps;
  rebuilds: RebuildBoardDeps & { rebuilds: Pick<RebuildJobs, 'start' | 'find'> };
  buckets: BoardBucketDeps;
  status: StoreStatusDeps;
  players: { storage: Pick<Storage, 'players'> };
  removals: { storage: Pick<Storage, 'entryRemovals'> };
}

/** Binds each admin use case to its parts. */
export function createAdminSide(parts: AdminSideParts): AdminSide {
  return {
    apiKeys: () => listApiKeys(parts.keys),
    createApiKey: (input) => issueApiKey(parts.keys, input),
    revokeApiKey: (idOrName) => revokeApiKey(parts.keys, idOrName),
    rebuildBoard: (args) => rebuildBoard(parts.rebuilds, args),
    startRebuild: (args) => startRebuild(parts.rebuilds, args),
    findRebuild: (id) => findRebuild(parts.rebuilds, id),
    boardBuckets: (board) => boardBuckets(parts.buckets, board),
    storeStatus: () => storeStatus(parts.status),
    searchPlayers: (text, first) => searchPlayers(parts.players, text, first),
    flaggedPlayers: (first) => listFlaggedPlayers(parts.players, first),
    playerFlag: (playerId) => playerFlag(parts.players, playerId),
    entryRemovals: (filter) => listEntryRemovals(parts.removals, filter),
  };
}
