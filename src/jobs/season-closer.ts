import { setInterval as every } from 'node:timers/promises';
import type { BoardDirectory } from '../services/board-directory.js';
import type { CloseSeasonDeps } from '../writes/close-season.js';
import { closeSeason, dropSeasonKeys } from '../writes/close-season.js';

/**
 * How long after a close the closer keeps dropping the season's keys. A write already in flight
 * when the season closed (its seasons looked up before) may still bring a dropped key back, and so
 * may a process that could not see the close's version token (SEASON_CACHE_MAX_AGE_MS, a second);
 * this is far longer than both plus a slow write. It also retries a drop that failed while Redis
 * was away.
 */
export const CLOSED_KEY_SWEEP_MS = 5 * 60_000;

/**
 * One pass: closes every season whose endsAt has passed, on every board, then drops the keys of
 * recently closed seasons again (a write in flight during the close may have written into a key
 * after it was dropped). Every process runs it; closeSeason lets exactly one
 * close each season. O(seasons due + seasons closed lately) queries, plus the freezes.
 */
/** What the season closer takes (6 members). */
export interface SeasonCloserDeps extends CloseSeasonDeps {
  boards: Pick<BoardDirectory, 'find'>;
}

export async function closeDueSeasons(deps: SeasonCloserDeps): Promise<void> {
  const now = deps.now();
  for (const season of await deps.storage.seasons.findDue(now)) {
    const board = await deps.boards.find(season.boardId);
    if (board) await closeSeason(deps, board, season.id);
  }
  for (const season of await deps.storage.seasons.findClosedSince(new Date(now.getTime() - CLOSED_KEY_SWEEP_MS))) {
    const board = await deps.boards.find(season.boardId);
    if (board) await dropSeasonKeys(deps, board, season);
  }
}

export interface SeasonCloser {
  /** Stops the closer and waits for a pass in progress to finish. */
  stop(): Promise<void>;
}

/**
 * Runs {@link closeDueSeasons} every `intervalMs` until stopped; a pass that fails (a store away)
 * is logged and tried again at the next tick. The timer does not keep the process alive.
 */
export function startSeasonCloser(deps: SeasonCloserDeps, intervalMs: number): SeasonCloser {
  const stopping = new AbortController();
  const loop = (async () => {
    try {
      for await (const _ of every(intervalMs, undefined, { signal: stopping.signal, ref: false })) {
        await closeDueSeasons(deps).catch((error: unknown) => deps.log.error({ err: error }, 'closing due seasons failed'));
      }
    } catch (error) {
      // The timer ends with an AbortError when stopped; anything else is unexpected.
      if (!stopping.signal.aborted) deps.log.error({ err: error }, 'the season closer stopped');
    }
  })();
  return {
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}
