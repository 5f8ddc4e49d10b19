import type { Logger } from 'pino';
import { type Keyring, createKeyring } from '../auth/keys.js';
import type { Database } from '../db/client.js';
import { SecretNotLoadedError } from '../db/service-secrets.js';
import { type Storage, createStorage } from '../db/storage.js';
import { type TopFeed, createTopFeed } from '../pubsub/top-feed.js';
import { type IndexGeneration, createIndexGeneration, guardReads } from '../ranking/generation.js';
import { type RankingIndex, createRankingIndex } from '../ranking/index.js';
import type { ReplicaReads } from '../ranking/replicas.js';
import { type TopCache, createTopCache } from '../ranking/top-cache.js';
import type { RedisClient } from '../redis.js';
import { type BacklogConfirmer, createBacklogConfirmer } from '../services/backlog-confirmer.js';
import { type BoardDirectory, createBoardDirectory } from '../services/board-directory.js';
import { type CursorCodec, createCursorCodec } from '../services/cursor.js';
import { type DriftReports, createDriftReports } from '../services/drift-reports.js';
import { type FlagChanges, createFlagChanges } from '../services/flag-changes.js';
import type { GroupCommitOptions } from '../services/group-commit.js';
import { type Metrics, createMetrics, showReplicas } from '../services/metrics.js';
import { type ProfileCache, createProfileCache } from '../services/profile-cache.js';
import { type RateLimitOptions, type RateLimits, createRateLimits } from '../services/rate-limits.js';
import { type RebuildJobs, createRebuildJobs } from '../services/rebuild-jobs.js';
import { type SeasonDirectory, createSeasonDirectory } from '../services/season-directory.js';
import { type StoreProbes, probeStores } from '../services/store-health.js';
import { timeStoreCalls } from '../services/store-timing.js';
import { type SubmissionHealth, createSubmissionHealth } from '../services/submission-health.js';
import { type SubmissionGroups, createSubmissionGroups } from './submission-groups.js';
import { type ReadSides, createReadSide } from '../reads/read-side.js';

/** What every operation takes: the per-process parts, built once by createServices (by the app, and by the CLI for its commands). */
export interface Services {
  /** PostgreSQL, the system of record. */
  storage: Storage;
  /**
   * Reads of a bucket Redis may have lost refuse (IndexRecoveringError) until it is rebuilt: see
   * ranking/generation.ts. Its reads go to Redis replicas that keep up, when there are
   * (ServiceDeps.replicaReads): they may be up to REDIS_REPLICA_MAX_LAG_MS behind.
   */
  index: RankingIndex;
  /**
   * The same index with every read on the masters: what a submission answers from (its own
   * standings, a replay's), which must hold its own write. `index` itself without replicas.
   */
  masterIndex: RankingIndex;
  /** Whether Redis still holds the index, and which buckets are back after it lost it. */
  indexGeneration: IndexGeneration;
  /** Confirms committed batches' index_backlog rows once the index holds their board scores. */
  backlog: BacklogConfirmer;
  /** The group commit every submission goes through (see operations/submission-groups.ts). */
  submissions: SubmissionGroups;
  /** The shared top cache: `top` reads go through it. */
  topCache: TopCache;
  /** Player profiles shared in Redis, exact after renames and erasures: the names reads show go through it, and the changes of them. */
  profiles: ProfileCache;
  /** Every read (top, standing, around, friends, pages, season results), batched across requests (see reads/read-side.ts). */
  reads: ReadSides;
  /** topChanged's fan-out (one Redis subscription per watched bucket); null where nothing is served (the CLI). */
  topFeed: TopFeed | null;
  boards: BoardDirectory;
  /** Each board's open season, cached about a second. */
  seasons: SeasonDirectory;
  /** Whether a player was flagged over a span (the write path's flag check; see operations/flag-recheck.ts). */
  flagChanges: FlagChanges;
  keyring: Keyring;
  /** Rebuilds started from the console, with their progress readable from any process. */
  rebuilds: RebuildJobs;
  /** The deployment's last measurement of the index's drift, readable from any process (see jobs/index-drift.ts). */
  driftReports: DriftReports;
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
  now?: (() => Date) | undefined;
  /** Request budgets. Default: see RateLimitOptions. */
  rateLimits?: RateLimitOptions;
  /**
   * How submissions are grouped into transactions: at most `maxGroupWeight` results per group
   * (default 500) and `maxInFlight` groups committing at once (default 2). See GroupCommitOptions.
   */
  groupCommit?: GroupCommitOptions | undefined;
  /** Every request is answered within this many milliseconds, whatever a store does. Default 10,000. */
  requestTimeoutMs?: number;
  /**
   * Redis replicas the index's reads that may be a little stale go to (see ranking/replicas.ts),
   * started and stopped by the caller. Default: none, every read on the masters.
   */
  replicaReads?: ReplicaReads | undefined;
}

/** What every operation uses, built once per process: by the app, and by the CLI for its commands. */
export function createServices(given: ServiceDeps): Services {
  const metrics = createMetrics();
  // Every PostgreSQL and Redis call below is timed into leaderboard_store_seconds (see services/store-timing.ts).
  const deps = timeStoreCalls(given, metrics);
  const storage = createStorage(deps.database);
  let cursorSecret = deps.cursorSecret;
  const indexGeneration = createIndexGeneration(deps.redis);
  const masterIndex = guardReads(createRankingIndex(deps.redis), indexGeneration);
  const index = deps.replicaReads ? guardReads(createRankingIndex(deps.redis, { reads: deps.replicaReads.reads }), indexGeneration) : masterIndex;
  // The cache dates and ages its views by the services' clock (the system's unless one is given),
  // so that a test moving the clock ages them too.
  const clock = deps.now;
  const topCache = createTopCache((at, limit, options) => index.top(at, limit, options), clock ? { now: () => clock().getTime() } : {});
  const topFeed = deps.subscriber
    ? createTopFeed({ subscriber: deps.subscriber, topCache, index, log: deps.log, watchers: metrics.topChangedSubscribers, replicas: deps.replicaReads })
    : null;
  const profiles = createProfileCache(deps.redis, storage.players, deps.log);
  if (deps.replicaReads) showReplicas(metrics, deps.replicaReads);
  const backlog = createBacklogConfirmer(storage.backlog, deps.log);
  const flagChanges = createFlagChanges(deps.redis);
  const submissionHealth = createSubmissionHealth();
  const submissions = createSubmissionGroups(
    { storage, index: masterIndex, backlog, flagChanges, topCache, submissionHealth, metrics, log: deps.log },
    deps.groupCommit,
  );
  const boards = createBoardDirectory(storage.boards);
  const seasons = createSeasonDirectory(storage.seasons, deps.redis);
  const cursors = createCursorCodec(() => {
    // PostgreSQL was away when the process started: pages answer UNAVAILABLE until it is back.
    if (!cursorSecret) throw new SecretNotLoadedError('cursor');
    return cursorSecret;
  });
  const now = deps.now ?? (() => new Date());
  const requestTimeoutMs = deps.requestTimeoutMs ?? 10_000;
  const reads = createReadSide({ index, topCache, profiles, storage, buckets: { boards, seasons, now }, cursors, log: deps.log, requestTimeoutMs });
  const services: Services = {
    storage,
    index,
    masterIndex,
    indexGeneration,
    backlog,
    submissions,
    topCache,
    topFeed,
    profiles,
    reads,
    boards,
    seasons,
    flagChanges,
    keyring: createKeyring({
      adminKey: deps.adminKey,
      serverKeys: deps.serverKeys ?? [],
      stored: { find: storage.apiKeys.findLive },
    }),
    rebuilds: createRebuildJobs(deps.redis, { log: deps.log }),
    driftReports: createDriftReports(deps.redis),
    probeStores: () => probeStores({ storage, redis: deps.redis }),
    cursors,
    async ready() {
      // Loaded before the first request when PostgreSQL answers; else tried again each second, and
      // the process serves everything that needs no cursor meanwhile (as it does reads from Redis).
      const load = async (): Promise<void> => {
        try {
          cursorSecret ??= await storage.sharedSecret('cursor');
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
    now,
    requestTimeoutMs,
    submissionHealth,
  };
  return services;
}
