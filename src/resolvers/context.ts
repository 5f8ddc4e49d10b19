import DataLoader from 'dataloader';
import type { Logger } from 'pino';
import { type Caller, type Keyring, bearerKey } from '../auth/keys.js';
import type { Database } from '../db/client.js';
import type { Player } from '../db/players.js';
import type { Metrics } from '../http/metrics.js';
import type { RateLimits } from '../http/rate-limits.js';
import type { BacklogConfirmer } from '../jobs/index-catch-up.js';
import type { RebuildJobs } from '../jobs/rebuild-jobs.js';
import type { IndexGeneration } from '../ranking/generation.js';
import type { RankingIndex } from '../ranking/index.js';
import type { TopCache } from '../ranking/top-cache.js';
import type { TopFeed } from '../pubsub/top-feed.js';
import type { BoardDirectory } from './board-directory.js';
import type { CursorCodec } from './cursor.js';
import type { ProfileCache } from './profile-cache.js';
import type { SeasonDirectory } from './season-directory.js';
import { recordedScoreLoader } from './recorded-scores.js';
import { isStoreUnavailable } from './store-errors.js';
import type { StoreProbes } from './store-health.js';
import type { SubmissionGroups } from './submission-groups.js';
import type { SubmissionHealth } from './submission-health.js';
import { deadlineSignal, settleBy } from '../deadline.js';

/** What every operation may use; built once by the app. */
export interface Services {
  database: Database;
  /** Reads of a bucket Redis may have lost refuse (IndexRecoveringError) until it is rebuilt: see ranking/generation.ts. */
  index: RankingIndex;
  /** Whether Redis still holds the index, and which buckets are back after it lost it. */
  indexGeneration: IndexGeneration;
  /** Confirms committed batches' index_backlog rows once the index holds their board scores. */
  backlog: BacklogConfirmer;
  /** The group commit every submission goes through (see resolvers/submission-groups.ts). */
  submissions: SubmissionGroups;
  /** The shared top cache: `top` reads go through it. */
  topCache: TopCache;
  /** Player profiles shared in Redis, exact after renames and erasures: the names reads show go through it, and the changes of them. */
  profiles: ProfileCache;
  /** topChanged's fan-out (one Redis subscription per watched bucket); null where nothing is served (the CLI). */
  topFeed: TopFeed | null;
  boards: BoardDirectory;
  /** Each board's open season, cached about a second. */
  seasons: SeasonDirectory;
  keyring: Keyring;
  /** Rebuilds started from the console, with their progress readable from any process. */
  rebuilds: RebuildJobs;
  /** Asks PostgreSQL and Redis whether they answer (what /readyz and the console's store health show). */
  probeStores(): Promise<StoreProbes>;
  cursors: CursorCodec;
  /** Loads what the services need from the stores before the first request (the cursor secret). */
  ready(): Promise<void>;
  limits: RateLimits;
  metrics: Metrics;
  log: Logger;
  /** The clock; tests move it. */
  now(): Date;
  /** Every request is answered within this many milliseconds, whatever a store does (REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** Whether submissions commit lately: /readyz answers 503 while they do not. */
  submissionHealth: SubmissionHealth;
}

/** Per request. */
export interface Context {
  services: Services;
  /** Null for anonymous callers and for keys nobody issued. */
  caller: Caller | null;
  loaders: { player: DataLoader<string, Player>; recorded: ReturnType<typeof recordedScoreLoader> };
  /** Aborted when the client goes away. */
  signal?: AbortSignal | undefined;
  /** The client's address, for per-client limits. */
  client: string;
  /** performance.now() when the request came in; its deadline is this plus services.requestTimeoutMs. */
  startedAt: number;
  /**
   * Set by a request whose answer may be shared (http/shared-answers.ts): each `top` read appends
   * the bucket's key and the top cache's read it answered from. Default: unset.
   */
  topReads?: [bucket: string, read: number][];
}

/**
 * A signal that aborts `marginMs` before the deadline of a request that came in at `startedAt`,
 * for the waits on PostgreSQL a request can do without (names, a key lookup): leaving the margin
 * to answer without them.
 */
export const beforeDeadline = (services: Services, startedAt: number, marginMs: number): AbortSignal =>
  deadlineSignal(startedAt + services.requestTimeoutMs - marginMs - performance.now(), 'PostgreSQL');

/** How long before its deadline a request stops waiting for names, so that it answers with ids alone. */
const NAMES_MARGIN_MS = 500;

/**
 * One load for every player a response names, through the shared profile cache (a query only
 * for those Redis does not hold). When PostgreSQL does not answer, players come back with their id
 * alone: a ranking read from Redis is still worth serving without names.
 */
function playerLoader(services: Services, startedAt: number) {
  return new DataLoader<string, Player>(async (ids) => {
    try {
      return await settleBy(services.profiles.load(ids), beforeDeadline(services, startedAt, NAMES_MARGIN_MS));
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
  const startedAt = performance.now();
  const key = bearerKey(authorization);
  const address = client ?? 'unknown';
  return {
    services,
    signal,
    client: address,
    startedAt,
    // A stored key is looked up in PostgreSQL: not past the request's bound (UNAVAILABLE then).
    caller: key ? await settleBy(identify(services, key, address), beforeDeadline(services, startedAt, NAMES_MARGIN_MS)) : null,
    loaders: { player: playerLoader(services, startedAt), recorded: recordedScoreLoader(services) },
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
