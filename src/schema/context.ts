import DataLoader from 'dataloader';
import { type Caller, bearerKey } from '../auth/keys.js';
import type { Player } from '../db/players.js';
import type { Services } from '../operations/services.js';
import type { TopRead } from '../operations/standings.js';
import { isStoreUnavailable } from '../store-errors.js';
import { deadlineSignal, settleBy } from '../deadline.js';

/** Per request. */
export interface Context {
  services: Services;
  /** Null for anonymous callers and for keys nobody issued. */
  caller: Caller | null;
  /**
   * Per request: players' profiles, a list of ids a load (a read's standings, or one player), in
   * their order. Not cached: every load reads the shared profile cache, so a profile changed by
   * an earlier field of the request (a mutation) is read as changed.
   */
  loaders: { players: DataLoader<readonly string[], Player[]> };
  /**
   * Holds the request's names back until `read` (a read whose answer names players, when another
   * root field names players too: recorded-fields.ts, namesTogether) settles, and answers it: the
   * names the read brings are then one load with every other name of the request, whichever read
   * comes back first.
   */
  namesAfter<T>(read: Promise<T>): Promise<T>;
  /** Aborted when the client goes away. */
  signal?: AbortSignal | undefined;
  /** The client's address, for per-client limits. */
  client: string;
  /** performance.now() when the request came in; its deadline is this plus services.requestTimeoutMs. */
  startedAt: number;
  /**
   * Set by a request whose answer may be shared (http/shared-answers.ts): each `top` read appends
   * what it was built from (the top cache's read, the board's definition). Default: unset.
   */
  topReads?: TopRead[];
}

/**
 * A signal that aborts `marginMs` before the deadline of a request that came in at `startedAt`,
 * for the waits on PostgreSQL a request can do without (names, a key lookup): leaving the margin
 * to answer without them.
 */
const beforeDeadline = (services: Services, startedAt: number, marginMs: number): AbortSignal =>
  deadlineSignal(startedAt + services.requestTimeoutMs - marginMs - performance.now(), 'PostgreSQL');

/** How long before its deadline a request stops waiting for names, so that it answers with ids alone. */
const NAMES_MARGIN_MS = 500;

/**
 * One load for every player a response names, through the shared profile cache (a query only
 * for those Redis does not hold). When PostgreSQL does not answer, players come back with their id
 * alone: a ranking read from Redis is still worth serving without names. A load is sent once the
 * reads in `heldBy` have settled (none: as DataLoader would, after the current ticks), so that the
 * names those reads bring go in the same load. Its keys are lists, so a read's names cost one
 * promise here, not one an id. `since` is when the request came in, on the profile cache's clock:
 * names Redis answered since then are taken as answered (services/profile-sightings.ts).
 */
function playersLoader(services: Services, startedAt: number, since: number, heldBy: Promise<unknown>[]) {
  return new DataLoader<readonly string[], Player[]>(
    async (lists) => {
      const ids = lists.flat();
      let players: Player[];
      try {
        players = await settleBy(services.profiles.load(ids, since), beforeDeadline(services, startedAt, NAMES_MARGIN_MS));
      } catch (error) {
        if (!isStoreUnavailable(error)) throw error;
        services.log.warn({ err: error }, 'player profiles unavailable; answering ids only');
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
        void Promise.allSettled(heldBy.splice(0)).then(() => process.nextTick(send));
      },
    },
  );
}

export interface RequestFacts {
  authorization: string | null | undefined;
  /** The peer's address. */
  client: string | undefined;
  signal?: AbortSignal | undefined;
}

export async function createContext(services: Services, { authorization, client, signal }: RequestFacts): Promise<Context> {
  const startedAt = performance.now();
  const key = bearerKey(authorization);
  const address = client ?? 'unknown';
  const namesHeldBy: Promise<unknown>[] = [];
  return {
    services,
    signal,
    client: address,
    startedAt,
    // A stored key is looked up in PostgreSQL: not past the request's bound (UNAVAILABLE then).
    caller: key ? await settleBy(identify(services, key, address), beforeDeadline(services, startedAt, NAMES_MARGIN_MS)) : null,
    loaders: {
      players: playersLoader(services, startedAt, services.profiles.clock(), namesHeldBy),
    },
    namesAfter(read) {
      namesHeldBy.push(read);
      return read;
    },
  };
}

/**
 * The key's caller. Unknown keys are budgeted per client (rate-limits.ts): past the budget, a key
 * that would need a PostgreSQL lookup is refused RATE_LIMITED before it, so guessing keys costs
 * the database nothing; keys of the environment and cached lookups are answered as always.
 */
async function identify(services: Services, key: string, client: string): Promise<Caller | null> {
  const caller = await services.keyring.identify(key, { beforeLookup: () => services.limits.authFailureAllowed(client) });
  if (!caller) await services.limits.authFailed(client);
  return caller;
}
