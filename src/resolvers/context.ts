import DataLoader from 'dataloader';
import type { Logger } from 'pino';
import { type Caller, type Keyring, bearerKey } from '../auth/keys.js';
import type { Database } from '../db/client.js';
import type { Player } from '../db/players.js';
import type { Metrics } from '../http/metrics.js';
import type { RateLimits } from '../http/rate-limits.js';
import type { BacklogConfirmer } from '../jobs/index-catch-up.js';
import type { IndexGeneration } from '../ranking/generation.js';
import type { RankingIndex } from '../ranking/index.js';
import type { TopCache } from '../ranking/top-cache.js';
import type { TopFeed } from '../pubsub/top-feed.js';
import type { BoardDirectory } from './board-directory.js';
import type { CursorCodec } from './cursor.js';
import type { ProfileCache } from './profile-cache.js';
import type { SeasonDirectory } from './season-directory.js';
import { isStoreUnavailable } from './store-errors.js';
import type { SubmissionGroups } from './submit.js';

/** What every operation may use; built once by the app. */
export interface Services {
  database: Database;
  /** Reads of a bucket Redis may have lost refuse (IndexRecoveringError) until it is rebuilt: see ranking/generation.ts. */
  index: RankingIndex;
  /** Whether Redis still holds the index, and which buckets are back after it lost it. */
  indexGeneration: IndexGeneration;
  /** Confirms committed batches' index_backlog rows once the index holds their board scores. */
  backlog: BacklogConfirmer;
  /** The group commit every submission goes through (see resolvers/submit.ts). */
  submissions: SubmissionGroups;
  /** The shared top cache: `top` reads go through it. */
  topCache: TopCache;
  /** Player profiles kept in this process, exact after renames and erasures: the names reads show go through it. */
  profiles: ProfileCache;
  /** topChanged's fan-out (one Redis subscription per watched bucket); null where nothing is served (the CLI). */
  topFeed: TopFeed | null;
  boards: BoardDirectory;
  /** Each board's open season, cached about a second. */
  seasons: SeasonDirectory;
  keyring: Keyring;
  cursors: CursorCodec;
  limits: RateLimits;
  metrics: Metrics;
  log: Logger;
  /** The clock; tests move it. */
  now(): Date;
}

/** Per request. */
export interface Context {
  services: Services;
  /** Null for anonymous callers and for keys nobody issued. */
  caller: Caller | null;
  loaders: { player: DataLoader<string, Player> };
  /** Aborted when the client goes away. */
  signal?: AbortSignal | undefined;
  /** The client's address, for per-client limits. */
  client: string;
}

/**
 * One load for every player a response names, through the process's profile cache (a query only
 * for those it does not hold). When PostgreSQL does not answer, players come back with their id
 * alone: a ranking read from Redis is still worth serving without names.
 */
function playerLoader(services: Services) {
  return new DataLoader<string, Player>(async (ids) => {
    try {
      return await services.profiles.load(ids);
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
      services.log.warn({ err: error }, 'player profiles unavailable; answering ids only');
      return ids.map((id) => ({ id, displayName: null, avatarUrl: null }));
    }
  });
}

export interface RequestFacts {
  authorization: string | null | undefined;
  /** The peer's address. */
  client: string | undefined;
  signal?: AbortSignal | undefined;
}

export async function createContext(services: Services, { authorization, client, signal }: RequestFacts): Promise<Context> {
  const key = bearerKey(authorization);
  const address = client ?? 'unknown';
  return {
    services,
    signal,
    client: address,
    caller: key ? await identify(services, key, address) : null,
    loaders: { player: playerLoader(services) },
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
