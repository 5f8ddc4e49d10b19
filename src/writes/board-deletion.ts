import type { Logger } from 'pino';
import type { DeletedBoard } from '../db/board-deletion.js';
import type { Storage } from '../db/storage.js';
import type { TopCache } from '../ranking/top-cache.js';
import type { TopFeed } from '../pubsub/top-feed.js';
import type { BoardDirectory } from '../services/board-directory.js';
import type { ClosedLists } from '../services/closed-lists.js';
import type { FrozenDirectory } from '../services/frozen-directory.js';
import type { SeasonDirectory } from '../services/season-directory.js';
import { badInput, unavailable } from '../errors.js';
import type { TopWebhooks } from './top-webhooks.js';

/**
 * What one process forgets of a deleted board (issue 60), whichever process deleted it: what it
 * keeps keyed by board or bucket, so that reads answer NOT_FOUND at once and a board made again
 * under the same id starts from nothing the old one left: its definition (board-directory.ts), its
 * top views (top-cache.ts), its close markers and frozen lists (frozen-directory.ts,
 * closed-lists.ts), its TOP_CHANGED windows (top-webhooks.ts); and its topChanged watchers end
 * with NOT_FOUND (top-feed.ts). The response
 * cache needs nothing: a shared answer is handed out only while its board is the object the
 * directory holds (http/response-cache.ts). The seasons are forgotten through their version token
 * (the deleting process moves it), the webhooks through their own notification.
 */
export interface BoardForgetting {
  boards: Pick<BoardDirectory, 'forget'>;
  topCache: Pick<TopCache, 'forgetBoard'>;
  frozen: Pick<FrozenDirectory, 'forgetBoard'>;
  closedLists: Pick<ClosedLists, 'forgetBoard'>;
  /** null where nothing is served (the CLI). */
  topFeed: Pick<TopFeed, 'boardGone'> | null;
  /** The TOP_CHANGED windows this process holds (writes/top-webhooks.ts). */
  topWebhooks: Pick<TopWebhooks, 'forgetBoard'>;
}

/**
 * Forgets a deleted board in this process (see {@link BoardForgetting}); `createdAt`, when the
 * board deleted had been made: a definition and watches of a board made again since are kept (the
 * caches are only emptied). O(what it keeps).
 */
export function forgetDeletedBoard(deps: BoardForgetting, { id, createdAt }: DeletedBoard): void {
  deps.boards.forget(id, createdAt);
  deps.topCache.forgetBoard(id);
  deps.frozen.forgetBoard(id);
  deps.closedLists.forgetBoard(id);
  deps.topFeed?.boardGone(id, createdAt);
  deps.topWebhooks.forgetBoard(id);
}

/** What a deletion takes (6 members). */
export interface BoardDeletionDeps {
  storage: Pick<Storage, 'boardDeletion'>;
  /** Unlinks every Redis key of the board on every node (ranking/board-keys.ts dropBoardKeys); answers how many. */
  freeKeys(boardId: string): Promise<number>;
  seasons: Pick<SeasonDirectory, 'changed'>;
  /** This process's forgetting ({@link forgetDeletedBoard}); the others' comes with PostgreSQL's notification. */
  forget(board: DeletedBoard): void;
  /** How long a group's index write may take after its commit, at most: the request bound. */
  requestTimeoutMs: number;
  log: Logger;
}

/** How often the backlog rows of the groups in flight at a deletion are looked at. */
const BACKLOG_POLL_MS = 50;

/**
 * Deletes a board (admin): its row and every row of it in PostgreSQL (db/board-deletion.ts, one
 * transaction, which every process is notified of on commit), then every Redis key of it on every
 * node. Answers false for an unknown board; refused (BAD_USER_INPUT naming the keys, nothing
 * changed) while a live API key is scoped to it.
 *
 * A submission racing the deletion: its group's transaction takes the board's lock shared, so it
 * either commits before the deletion (whose statements then delete its rows) or finds the board
 * gone after it and records nothing (NOT_FOUND). A group that committed before may still be
 * writing its board scores into Redis after the keys are freed: its index_backlog row stays until
 * that write is confirmed. So the deletion waits for the rows it found (at most the request bound),
 * frees the keys again, and then takes the board out of the rows still there. Only then does it
 * answer: once it has, no key of the board comes back, and the id may be created again.
 * O(rows and keys of the board), plus a SCAN of every master.
 */
export async function deleteBoard(deps: BoardDeletionDeps, boardId: string): Promise<boolean> {
  const done = await deps.storage.boardDeletion.delete(boardId);
  if (!done.deleted) {
    if ('scopedKeys' in done) {
      const keys = done.scopedKeys.map(({ id, name }) => `"${name}" (${id})`).join(', ');
      throw badInput(`Board "${boardId}" is not deleted while API keys are scoped to it: ${keys}. Revoke them first. Nothing was deleted.`);
    }
    return false;
  }
  deps.forget(done.board);
  try {
    await deps.seasons.changed(boardId);
  } catch (error) {
    // Each process reads its seasons again within SEASON_CACHE_MAX_AGE_MS all the same.
    deps.log.warn({ err: error, boardId }, 'could not move the seasons token of a deleted board');
  }
  let freed: number;
  try {
    freed = await deps.freeKeys(boardId);
    if (done.backlog.length > 0) {
      const deadline = performance.now() + deps.requestTimeoutMs;
      while (performance.now() < deadline && (await deps.storage.boardDeletion.backlogLeft(done.backlog)) > 0) {
        await new Promise((resolve) => setTimeout(resolve, BACKLOG_POLL_MS));
      }
      freed += await deps.freeKeys(boardId);
      await deps.storage.boardDeletion.forgetBacklog(boardId, done.backlog);
    }
  } catch (error) {
    // The board is deleted (committed) whatever happens here: say so, rather than "nothing was recorded".
    deps.log.error({ err: error, boardId }, 'board deleted, but its index keys could not all be freed');
    throw unavailable(`Board "${boardId}" was deleted, but a store did not answer while its index keys were freed: some may be left behind.`);
  }
  deps.log.info({ boardId, keys: freed }, 'board deleted');
  return true;
}
