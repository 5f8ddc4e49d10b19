import type { RedisClient } from './redis.js';
import type { Logger } from 'pino';
import { createKeyring } from './auth/keys.js';
import { findLiveKey } from './db/api-keys.js';
import type { Database } from './db/client.js';
import { createBacklogConfirmer } from './jobs/index-catch-up.js';
import { createRebuildJobs } from './jobs/rebuild-jobs.js';
import { createIndexGeneration, guardReads } from './ranking/generation.js';
import { createRankingIndex } from './ranking/index.js';
import { createMetrics } from './http/metrics.js';
import { timeStoreCalls } from './http/store-timing.js';
import { type RateLimitOptions, createRateLimits } from './http/rate-limits.js';
import { createTopCache } from './ranking/top-cache.js';
import { createTopFeed } from './pubsub/top-feed.js';
import { createBoardDirectory } from './resolvers/board-directory.js';
import type { Services } from './resolvers/context.js';
import { createCursorCodec } from './resolvers/cursor.js';
import { SecretNotLoadedError, sharedSecret } from './db/service-secrets.js';
import { createProfileCache } from './resolvers/profile-cache.js';
import { createSeasonDirectory } from './resolvers/season-directory.js';
import type { GroupCommitOptions } from './resolvers/group-commit.js';
import { probeStores } from './resolvers/store-health.js';
import { createSubmissionGroups } from './resolvers/submission-groups.js';
import { createSubmissionHealth } from './resolvers/submission-health.js';

export interface ServiceDeps {
  database: Database;
  redis: RedisClient;
  /**
   * A second connection to the same Redis for topChanged to subscribe on (see subscriberFor in
   * src/pubsub/top-feed.ts); the caller closes it after the app. Default: none, so this process
   * serves no subscriptions (the CLI).
   */
  subscriber?: RedisClient | undefined;
  log: Logger;
  /** The admin key. Default: none, so admin operations are refused. */
  adminKey?: string | undefined;
  /** Game-server keys. Default: none. */
  serverKeys?: readonly string[];
  /**
   * The key page cursors are signed with; every process of a deployment needs the same one.
   * Default: a random secret the deployment keeps in PostgreSQL (service_secrets), made by its
   * first process and read by every other at start (see Services.ready): never derived from an API
   * key, so a cursor, which anyone may hold, gives nothing to test key guesses against.
   */
  cursorSecret?: string | undefined;
  /** The clock. Default: the system's. */
  now?: () => Date;
  /** Request budgets. Default: see RateLimitOptions. */
  rateLimits?: RateLimitOptions;
  /**
   * How submissions are grouped into transactions: at most `maxGroupWeight` results per group
   * (default 500) and `maxInFlight` groups committing at once (default 4). See GroupCommitOptions.
   */
  groupCommit?: GroupCommitOptions;
  /** Every request is answered within this many milliseconds, whatever a store does. Default 10,000. */
  requestTimeoutMs?: number;
}

/** What every operation uses, built once per process: by the app, and by the CLI for its commands. */
export function createServices(given: ServiceDeps): Services {
  const metrics = createMetrics();
  // Every PostgreSQL and Redis call below is timed into leaderboard_store_seconds (see http/store-timing.ts).
  const deps = timeStoreCalls(given, metrics);
  let cursorSecret = deps.cursorSecret;
  const indexGeneration = createIndexGeneration(deps.redis);
  const index = guardReads(createRankingIndex(deps.redis), indexGeneration);
  // The cache dates and ages its views by the services' clock (the system's unless one is given),
  // so that a test moving the clock ages them too.
  const clock = deps.now;
  const topCache = createTopCache((at, limit) => index.top(at, limit), clock ? { now: () => clock().getTime() } : {});
  const topFeed = deps.subscriber
    ? createTopFeed({ subscriber: deps.subscriber, topCache, index, log: deps.log, watchers: metrics.topChangedSubscribers })
    : null;
  const services: Services = {
    database: deps.database,
    index,
    indexGeneration,
    backlog: createBacklogConfirmer(deps.database, deps.log),
    submissions: createSubmissionGroups(() => services, deps.groupCommit),
    topCache,
    topFeed,
    profiles: createProfileCache(deps.redis, deps.database, deps.log),
    boards: createBoardDirectory(deps.database.db),
    seasons: createSeasonDirectory(deps.database.db, deps.redis),
    keyring: createKeyring({
      adminKey: deps.adminKey,
      serverKeys: deps.serverKeys ?? [],
      stored: { find: (digest) => findLiveKey(deps.database.db, digest) },
    }),
    rebuilds: createRebuildJobs(deps.redis),
    probeStores: () => probeStores(deps),
    cursors: createCursorCodec(() => {
      // PostgreSQL was away when the process started: pages answer UNAVAILABLE until it is back.
      if (!cursorSecret) throw new SecretNotLoadedError('cursor');
      return cursorSecret;
    }),
    async ready() {
      // Loaded before the first request when PostgreSQL answers; else tried again each second, and
      // the process serves everything that needs no cursor meanwhile (as it does reads from Redis).
      const load = async (): Promise<void> => {
        try {
          cursorSecret ??= await sharedSecret(deps.database.db, 'cursor');
        } catch (error) {
          // The pool was closed (the process is stopping): nothing to wait for.
          if ((error as { code?: unknown }).code === 'CONNECTION_ENDED') return;
          deps.log.warn({ err: error }, 'the page-cursor secret could not be read from PostgreSQL; trying again in a second');
          setTimeout(() => void load(), 1_000).unref();
        }
      };
      await load();
    },
    limits: createRateLimits(deps.rateLimits),
    metrics,
    log: deps.log,
    now: deps.now ?? (() => new Date()),
    requestTimeoutMs: deps.requestTimeoutMs ?? 10_000,
    submissionHealth: createSubmissionHealth(),
  };
  return services;
}
