import DataLoader from 'dataloader';
import type { Logger } from 'pino';
import type { Player } from '../db/players.js';
import type { ProfileCache } from '../services/profile-cache.js';
import { isStoreUnavailable } from '../store-errors.js';
import { deadlineSignal, settleBy } from '../deadline.js';

/** How long before its deadline a request stops waiting for names, so that it answers with ids alone. */
export const NAMES_MARGIN_MS = 500;

/** What a request's name loader reads names through. */
export interface NameLoaderDeps {
  profiles: Pick<ProfileCache, 'load' | 'clock'>;
  log: Logger;
  /** Every request is answered within this many milliseconds (REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
}

/**
 * One request's names: a DataLoader over the shared profile cache whose keys are lists of ids (a
 * read's standings, or one player), so that a read's names cost one promise here, not one an id.
 * Not cached: every load reads the profile cache, so a profile changed by an earlier field of the
 * request (a mutation) is read as changed.
 *
 * A batch waits for the reads handed to `after` (none: as DataLoader would, after the current
 * ticks), so that when several root fields of one request name players (a board screen: the top,
 * my standing and the players around me) their names are one load, whichever read comes back
 * first; and the index reads among them, which read the profiles' changes token on the way (see
 * place-loader.ts), make the names remembered since then current for this request
 * (ProfileCache.load's `since`), with no Redis call of their own.
 *
 * When PostgreSQL does not answer, players come back with their id alone: a ranking read from
 * Redis is still worth serving without names. Nor does a load wait past NAMES_MARGIN_MS before the
 * request's deadline.
 */
export class NameLoader {
  private readonly held: Promise<unknown>[] = [];
  private readonly loader: DataLoader<readonly string[], Player[]>;

  constructor(deps: NameLoaderDeps, startedAt: number) {
    const since = deps.profiles.clock();
    const held = this.held;
    this.loader = new DataLoader<readonly string[], Player[]>(
      async (lists) => {
        const ids = lists.flat();
        let players: Player[];
        try {
          const deadline = deadlineSignal(startedAt + deps.requestTimeoutMs - NAMES_MARGIN_MS - performance.now(), 'PostgreSQL');
          players = await settleBy(deps.profiles.load(ids, since), deadline);
        } catch (error) {
          if (!isStoreUnavailable(error)) throw error;
          deps.log.warn({ err: error }, 'player profiles unavailable; answering ids only');
          players = ids.map((id) => ({ id, displayName: null, avatarUrl: null }));
        }
        let from = 0;
        return lists.map((list) => players.slice(from, (from += list.length)));
      },
      {
        cache: false,
        // DataLoader's own schedule, after the reads held: the fields a read's answer names are
        // resolved in the promise jobs that follow it, all run before the tick that sends the load.
        batchScheduleFn: (send) => {
          void Promise.allSettled(held.splice(0)).then(() => process.nextTick(send));
        },
      },
    );
  }

  /** The players of these ids, in their order; throws what the profile cache throws (PostgreSQL unavailable is not thrown). */
  load(ids: readonly string[]): Promise<Player[]> {
    return this.loader.load(ids);
  }

  /** Holds this request's next name load until `read` settles, and answers `read`. */
  after<T>(read: Promise<T>): Promise<T> {
    this.held.push(read);
    return read;
  }
}
