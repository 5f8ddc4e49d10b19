import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type DocumentNode, GraphQLError } from 'graphql';
import { createLRUCache, createYoga, maskError } from 'graphql-yoga';
import { type IndexDriftOptions, createIndexDriftGauge } from './jobs/index-drift.js';
import { type IndexCatchUp, type IndexCatchUpOptions, startIndexCatchUp } from './jobs/index-catch-up.js';
import { type IndexRecovery, type IndexRecoveryOptions, startIndexRecovery } from './jobs/index-recovery.js';
import { type BucketCloser, settleMsFor, startBucketCloser } from './jobs/bucket-closer.js';
import { type ResultPartitions, type ResultPartitionsOptions, startResultPartitions } from './jobs/result-partitions.js';
import { type InactivePlayers, type InactivePlayersOptions, startInactivePlayers } from './jobs/inactive-players.js';
import type { Logger } from 'pino';
import { type ContextDeps, type LiveTops, createContext } from './resolvers/context.js';
import { createKeyring } from './auth/keys.js';
import type { Database } from './db/client.js';
import { SecretNotLoadedError } from './db/service-secrets.js';
import { type Storage, createStorage } from './db/storage.js';
import { type TopFeed, createTopFeed, subscriberFor } from './pubsub/top-feed.js';
import { topChangedView, watchTopChanged } from './pubsub/top-changed.js';
import { type CohortFeed, createCohortFeed, watchCohortChanged } from './pubsub/cohort-changed.js';
import { createOvertakenFeed, watchFriendOvertook } from './pubsub/friend-overtook.js';
import { createOvertaking } from './writes/overtaking.js';
import { type TopWebhookOptions, createTopWebhooks } from './writes/top-webhooks.js';
import { type IndexGeneration, createIndexGeneration, guardReads } from './ranking/generation.js';
import { type RankingIndex, createRankingIndex } from './ranking/index.js';
import type { ReplicaReads } from './ranking/replicas.js';
import { type TopCache, createTopCache } from './ranking/top-cache.js';
import { type ReadSides, createReadSide } from './reads/read-side.js';
import { createBucketReads } from './reads/bucket-reads.js';
import { createLeagueReads } from './reads/league.js';
import type { RedisClient } from './redis.js';
import { type BacklogConfirmer, createBacklogConfirmer } from './services/backlog-confirmer.js';
import { type BoardDirectory, createBoardDirectory } from './services/board-directory.js';
import { createFrozenDirectory } from './services/frozen-directory.js';
import { closedNow } from './services/buckets.js';
import { createCursorCodec } from './services/cursor.js';
import { createDriftReports } from './services/drift-reports.js';
import { type FlagChanges, createFlagChanges } from './services/flag-changes.js';
import type { GroupCommitOptions } from './services/group-commit.js';
import { type Metrics, createMetrics, showReplicas } from './services/metrics.js';
import { type ProfileCache, createProfileCache } from './services/profile-cache.js';
import { type RateLimitOptions, createRateLimits } from './services/rate-limits.js';
import { createRebuildJobs } from './services/rebuild-jobs.js';
import { type SeasonDirectory, createSeasonDirectory } from './services/season-directory.js';
import { type ClosedLists, createClosedLists } from './services/closed-lists.js';
import { probeStores } from './services/store-health.js';
import { timeStoreCalls } from './services/store-timing.js';
import { createSubmissionHealth } from './services/submission-health.js';
import { type AdminSide, createAdminSide } from './writes/admin.js';
import { type WriteSide, createWriteSide } from './writes/index.js';
import { forgetDeletedBoard } from './writes/board-deletion.js';
import type { DeletedBoard } from './db/board-deletion.js';
import { dropBoardKeys } from './ranking/board-keys.js';
import { createRecords } from './writes/records.js';
import { createSubmissionGroups } from './writes/submission-groups.js';
import { unavailable } from './errors.js';
import { isStoreUnavailable } from './store-errors.js';
import { attachGraphqlWs } from './http/live-socket.js';
import { useTopCacheControl } from './http/cache-control.js';
import { boundedDocumentCache, useDocumentLimits } from './http/document-limits.js';
import { type PreparedContext, createFastGraphql } from './http/fast-graphql.js';
import { createBodyLimits } from './http/body-limit.js';
import { createClientAddressOf, createTrustedProxies } from './http/client-address.js';
import { limitConnections } from './http/connection-limits.js';
import { type CorsOrigins, useCorsPolicy } from './http/cors.js';
import { answerHealth, answerReadiness } from './http/health.js';
import { answerMetrics, showPostgresPrimary } from './services/metrics.js';
import { createResponseCache } from './http/response-cache.js';
import { createCachedBodies } from './http/cached-bodies.js';
import { type PersistedDocumentsOptions, createPersistedDocuments, usePersistedDocuments } from './http/persisted-documents.js';
import { useJsonDepth } from './http/json-depth.js';
import { createMetricsAccess } from './http/metrics-access.js';
import { type ExportRouteOptions, createExportRoute } from './http/export-route.js';
import { createOperationObserver, useObservability } from './http/observe.js';
import { useRequestErrorCodes } from './http/request-errors.js';
import { useGraphqlJit } from './http/graphql-jit.js';
import { createReadBudget } from './http/read-limit.js';
import { createValidationBudget } from './http/validation-budget.js';
import { MAX_BODY_BYTES, type RequestLimits, requestLimitsOf } from './http/request-limits.js';
import { useRequestDeadline } from './http/request-deadline.js';
import { executeHooksTogether } from './http/execute-hooks.js';
import { graphiqlOptions, useIntrospection } from './http/graphiql.js';
import { createLandingRoute } from './http/landing.js';
import { packageRoot } from './http/page-route.js';
import { createConsoleRoute } from './console/route.js';
import { createOverlayRoute } from './overlay/route.js';
import { schema } from './schema/index.js';
import type { WebhookOptions } from './model/webhooks.js';
import { type WebhookDirectory, createWebhookDirectory } from './services/webhook-directory.js';
import { createWebhookSender } from './services/webhook-sender.js';
import { systemLookup } from './services/webhook-addresses.js';
import { type WebhookDelivery, type WebhookDeliveryOptions, startWebhookDelivery } from './jobs/webhook-delivery.js';
import { createWebhookAdmin } from './writes/webhooks.js';

export interface AppDeps {
  database: Database;
  redis: RedisClient;
  /**
   * A second connection to the same Redis for topChanged to subscribe on (see subscriberFor in
   * src/pubsub/top-feed.ts); the caller closes it after the app. Default: one the app makes and closes.
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
   * first process and read by every other at start (see start()): never derived from an API key,
   * so a cursor, which anyone may hold, gives nothing to test key guesses against.
   */
  cursorSecret?: string | undefined;
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
  /** Where to listen. Default 127.0.0.1. */
  host?: string;
  /** Default 4000; 0 picks a free port. */
  port?: number;
  /** How long stop() waits for requests in flight before closing them. Default 10,000 ms. */
  shutdownTimeoutMs?: number;
  /** The clock. Default: the system's. */
  now?: (() => Date) | undefined;
  /**
   * How often this process looks for buckets (calendar buckets and seasons) whose end plus their
   * board's grace has passed, and closes them (jobs/bucket-closer.ts). Every process may run it:
   * each bucket is frozen once. null: never (a test that counts another part's store calls).
   * @default 5000
   */
  seasonCloseIntervalMs?: number | null | undefined;
  /** How long after a bucket closes it is frozen (BUCKET_CLOSE_SETTLE_MS; see BucketCloserOptions.settleMs). Default: requestTimeoutMs + 5,000. */
  bucketCloseSettleMs?: number | undefined;
  /** How this process re-applies committed results the index missed (see jobs/index-catch-up.ts). Default: its defaults. */
  indexCatchUp?: IndexCatchUpOptions | undefined;
  /** How this process watches for a Redis that lost the index and rebuilds it (see jobs/index-recovery.ts). Default: its defaults. */
  indexRecovery?: IndexRecoveryOptions | undefined;
  /** How this process keeps the score log's monthly partitions ahead (see jobs/result-partitions.ts). Default: its defaults. */
  resultPartitions?: ResultPartitionsOptions | undefined;
  /** How often the deployment's measurement of the index drift is renewed (see jobs/index-drift.ts). Default: its defaults. */
  indexDrift?: IndexDriftOptions | undefined;
  /** How this process takes inactive players out of the index (see jobs/inactive-players.ts). Default: its defaults (hourly, and at start). */
  inactivePlayers?: InactivePlayersOptions | undefined;
  /**
   * Every worker's metrics, for `/metrics` in a worker of several sharing the port (see
   * http/cluster-metrics.ts). Default: none, so `/metrics` serves this process's own.
   */
  metricsOfEveryWorker?: (() => Promise<string>) | undefined;
  /** When set, `/metrics` answers only requests with `Authorization: Bearer <metricsToken>` (401 otherwise). Default: none, so it is open. */
  metricsToken?: string | undefined;
  /** What one request, operation and connection may hold (see http/request-limits.ts). Default: its defaults. */
  requestLimits?: RequestLimits | undefined;
  /** Whether `/graphql` serves GraphiQL to a browser (GRAPHIQL), from the service itself, no CDN. Default true. */
  graphiql?: boolean;
  /** Whether the schema may be introspected (INTROSPECTION). Default true. */
  introspection?: boolean;
  /**
   * The documents run by id (`documentId`, APQ), and whether only they run (PERSISTED_DOCUMENTS_ONLY).
   * Default: the typed client's operations (client/persisted-documents.json), beside any query.
   */
  persistedDocuments?: PersistedDocumentsOptions;
  /**
   * Proxies (addresses or CIDR ranges) whose forwarding headers name the client (TRUSTED_PROXIES;
   * see http/client-address.ts). Default none: the client is the socket's peer.
   */
  trustedProxies?: readonly string[];
  /** Which web pages may call the API from a browser (CORS_ORIGINS; see http/cors.ts). Default '*': any, without credentials. */
  corsOrigins?: CorsOrigins;
  /** The bounds of `GET /export` (see http/export-route.ts). Default: its defaults. */
  exports?: ExportRouteOptions | undefined;
  /**
   * How webhooks are delivered (issue 58; see jobs/webhook-delivery.ts): `allowPrivate`
   * (WEBHOOK_ALLOW_PRIVATE) lets a webhook use http to a loopback or private address. Default: only
   * https to public addresses, and the delivery job's defaults.
   */
  webhooks?: (WebhookOptions & WebhookDeliveryOptions) | undefined;
  /** How TOP_CHANGED webhook events are written (issue 58; see writes/top-webhooks.ts). Default: one a second per bucket at most. */
  topWebhooks?: TopWebhookOptions | undefined;
}

export interface App {
  /** Listens; answers the port it listens on. */
  start(): Promise<{ port: number; url: string }>;
  /**
   * Stops in order: WebSocket clients (1001), then topChanged streams, then the HTTP server once
   * in-flight requests finish. Stores (and a subscriber connection given in deps) are the caller's to close.
   */
  stop(): Promise<void>;
  /** What the app built, for the entry point (the metrics registry) and for tests: nothing in src/ takes it whole. */
  parts: AppParts;
}

/** The per-process parts the app built and hands out, each to what uses it. */
export interface AppParts {
  /** PostgreSQL, the system of record. */
  storage: Storage;
  /**
   * The index: reads of a bucket Redis may have lost refuse (IndexRecoveringError) until it is
   * rebuilt (ranking/generation.ts); its reads go to Redis replicas that keep up, when there are.
   */
  index: RankingIndex;
  /** The same index with every read on the masters: what a write reads its own writes from. */
  masterIndex: RankingIndex;
  indexGeneration: IndexGeneration;
  topCache: TopCache;
  topFeed: TopFeed;
  /** cohortChanged's fan-out (pubsub/cohort-changed.ts). */
  cohortFeed: CohortFeed;
  profiles: ProfileCache;
  boards: BoardDirectory;
  seasons: SeasonDirectory;
  /** The frozen lists this process knows of (see services/closed-lists.ts). */
  closedLists: ClosedLists;
  flagChanges: FlagChanges;
  backlog: BacklogConfirmer;
  metrics: Metrics;
  log: Logger;
  now(): Date;
  requestTimeoutMs: number;
  reads: ReadSides;
  writes: WriteSide;
  admin: AdminSide;
  /** Which events webhooks want, as this process knows it (services/webhook-directory.ts): what the write side asks before it computes an event. */
  webhookInterest: WebhookDirectory;
  /** Runs the webhook delivery job once now (jobs/webhook-delivery.ts pass()); for tests run with `webhooks.intervalMs` null. 0 before start(). */
  deliverWebhooks(): Promise<number>;
}

/** The most operations one batched HTTP request (a JSON array) may carry. */
export const MAX_BATCH_OPERATIONS = 10;

/** Builds the service around clients it is given. Nothing listens or connects until start(). */
export function buildApp(deps: AppDeps): App {
  const log = deps.log;
  const metrics = createMetrics();
  // Every PostgreSQL and Redis call is timed into leaderboard_store_seconds (see services/store-timing.ts).
  const { database, redis } = timeStoreCalls({ database: deps.database, redis: deps.redis }, metrics);
  const now = deps.now ?? (() => new Date());
  const requestTimeoutMs = deps.requestTimeoutMs ?? 10_000;

  // The stores, the index and the per-process caches and directories.
  const storage = createStorage(database);
  const indexGeneration = createIndexGeneration(redis);
  const profiles = createProfileCache(redis, storage.players, log);
  // The players a write places for the first time get their profile, or that they have none, into Redis.
  // Every top change either index makes is told to the TOP_CHANGED webhooks (made below; told only once writes run).
  const masterIndex = guardReads(
    createRankingIndex(redis, { placed: (playerIds) => profiles.remember(playerIds), topChanged: (at) => topWebhooks.changed(at) }),
    indexGeneration,
  );
  const index = deps.replicaReads
    ? guardReads(createRankingIndex(redis, { reads: deps.replicaReads.reads, topChanged: (at) => topWebhooks.changed(at) }), indexGeneration)
    : masterIndex;
  if (deps.replicaReads) showReplicas(metrics, deps.replicaReads);
  // The cache dates and ages its views by the app's clock (the system's unless one is given), so
  // that a test moving the clock ages them too.
  const clock = deps.now;
  const topCache = createTopCache((at, limit, options) => index.top(at, limit, options), clock ? { now: () => clock().getTime() } : {});
  // topChanged subscribes on a connection of its own; the app makes one when the caller gives none.
  const ownSubscriber = deps.subscriber ? undefined : subscriberFor(deps.redis);
  const topFeed = createTopFeed({
    subscriber: deps.subscriber ?? ownSubscriber!,
    topCache,
    index,
    log,
    watchers: metrics.topChangedSubscribers,
    replicas: deps.replicaReads,
    // A watched bucket that closes sends no more views.
    closed: (at) => closedNow({ frozen, seasons, now }, at),
  });
  const boards = createBoardDirectory(storage.boards);
  const seasons = createSeasonDirectory(storage.seasons, redis);
  // The frozen lists the bucket closer knows of, kept out of results' buckets (see closed-lists.ts).
  const closedLists = createClosedLists();
  // Which buckets are closed (their reads are their frozen standings'), remembered once found.
  const frozen = createFrozenDirectory(storage.frozen.find, { knownClosed: (at) => closedLists.has(at) });
  const flagChanges = createFlagChanges(redis);
  const backlog = createBacklogConfirmer(storage.backlog, log);
  const submissionHealth = createSubmissionHealth();
  const rateLimits = createRateLimits(deps.rateLimits);
  const keyring = createKeyring({ adminKey: deps.adminKey, serverKeys: deps.serverKeys ?? [], stored: { find: storage.apiKeys.findLive } });
  const rebuilds = createRebuildJobs(redis, { log });
  const driftReports = createDriftReports(redis);
  const probe = () => probeStores({ storage, redis });
  let cursorSecret = deps.cursorSecret;
  const cursors = createCursorCodec(() => {
    // PostgreSQL was away when the process started: pages answer UNAVAILABLE until it is back.
    if (!cursorSecret) throw new SecretNotLoadedError('cursor');
    return cursorSecret;
  });
  /** Loads the cursor secret before the first request when PostgreSQL answers; else tries again each second meanwhile. */
  const loadCursorSecret = async (): Promise<void> => {
    try {
      cursorSecret ??= await storage.sharedSecret('cursor');
    } catch (error) {
      // The pool was closed (the process is stopping): nothing to wait for.
      if ((error as { code?: unknown }).code === 'CONNECTION_ENDED') return;
      log.warn({ err: error }, 'the page-cursor secret could not be read from PostgreSQL; trying again in a second');
      setTimeout(() => void loadCursorSecret(), 1_000).unref();
    }
  };

  // A board deleted by any process (deleteBoard): forgotten here at once (writes/board-deletion.ts).
  const forgetBoard = (board: DeletedBoard) => forgetDeletedBoard({ boards, topCache, frozen, closedLists, topFeed, topWebhooks }, board);
  const boardDeletions = storage.boardDeletion.listen(
    forgetBoard,
    // Told of nothing while the listener was away (or behind transaction pooling): the boards this process keeps are looked at.
    async () => {
      const kept = boards.kept();
      for (const id of await storage.boardDeletion.goneAmong(kept)) forgetBoard(kept.find((board) => board.id === id)!);
    },
    log,
  );

  // The sides the resolvers call, each use case given only what it uses (see each one's deps type).
  const buckets = { boards, seasons, frozen, now };
  const reads = createReadSide({ index, topCache, profiles, storage, buckets, cursors, log, requestTimeoutMs });
  const bucketReads = createBucketReads({ buckets, index, storage, cursors });
  const leagueReads = createLeagueReads({ buckets, index, storage });
  // The group commit is given what committing a group uses; a write reads its own writes on the masters.
  // Friends passed (issue 58): detected after each group's index write, off the submission's path.
  const overtaking = createOvertaking({
    index: masterIndex,
    followers: storage.players.followers,
    listed: storage.players.listedPairs,
    enqueue: storage.webhooks.enqueue,
    // The directory is made below, with the webhooks' side; asked only once writes run.
    webhooks: { wants: (boardId, event) => webhookDirectory.wants(boardId, event) },
    profiles,
    now,
    log,
    told: metrics.friendOvertakenEvents,
  });
  const submissions = createSubmissionGroups(
    {
      storage,
      index: masterIndex,
      backlog,
      flagChanges,
      topCache,
      submissionHealth,
      metrics,
      log,
      overtaking,
      suspects: { storage, index: masterIndex, flagChanges, topCache, boards, now, log },
    },
    deps.groupCommit,
  );
  const writes = createWriteSide({
    submit: { submissions, boards, seasons, members: storage.members, masterIndex, limits: rateLimits, requestTimeoutMs, closedLists, now, log },
    boards: { storage, boards },
    seasons: { storage, index, seasons, boards, now, log },
    players: { storage, profiles },
    flags: { storage, index, flagChanges, topCache, boards, now, log },
    erasure: { storage, index, profiles, topCache, boards, now, log },
    removal: { storage, index, topCache, boards, now, log },
    tournaments: { storage, boards },
    boardDeletion: { storage, freeKeys: (boardId) => dropBoardKeys(redis, boardId), seasons, forget: forgetBoard, requestTimeoutMs, log },
  });
  const admin = createAdminSide({
    keys: { storage, keyring, boards },
    rebuilds: { storage, index, topCache, rebuilds, boards, seasons, now, log },
    buckets: { storage, index, boards, seasons, now },
    status: { probeStores: probe, storage, indexGeneration },
    players: { storage },
    removals: { storage },
  });
  const records = createRecords({ boards, seasons, storage, now, playerStandings: { storage, index, boards, frozen, now, log } });
  const topChanged = { topFeed, profiles, boards, seasons, frozen, storage, now, log, metrics };
  // cohortChanged subscribes on a connection of its own, connected with its first watcher.
  const cohortSubscriber = subscriberFor(deps.redis);
  const cohortFeed = createCohortFeed({
    subscriber: cohortSubscriber,
    index,
    leagues: leagueReads,
    profiles,
    log,
    now,
    watchers: metrics.cohortChangedSubscribers,
    sent: metrics.cohortChangedEvents,
  });
  const webhookDirectory = createWebhookDirectory({ storage, log });
  // Webhooks (issue 58): the admin's, and the sender the delivery job (started in start()) uses.
  const webhookLookup = deps.webhooks?.lookup ?? systemLookup;
  const webhookSender = createWebhookSender({ allowPrivate: deps.webhooks?.allowPrivate ?? false, lookup: webhookLookup });
  const webhookAdmin = createWebhookAdmin({
    storage,
    boards,
    webhookInterest: webhookDirectory,
    cursors,
    allowPrivate: deps.webhooks?.allowPrivate ?? false,
    lookup: webhookLookup,
    now,
  });
  // friendOvertook subscribes on a connection of its own too: its subscriptions are what the detection counts.
  const overtakenSubscriber = subscriberFor(deps.redis);
  const overtakenFeed = createOvertakenFeed({ subscriber: overtakenSubscriber, index, log, watchers: metrics.friendOvertookSubscribers });
  // TOP_CHANGED webhooks: the view topChanged sends, at most one a second per bucket across processes, off the write path.
  const topWebhooks = createTopWebhooks(
    {
      interest: webhookDirectory,
      redis,
      topCache,
      reads,
      boards,
      profiles,
      frozen,
      seasons,
      now,
      log,
      enqueue: storage.webhooks.enqueue,
    },
    deps.topWebhooks,
  );
  const live: LiveTops = {
    watch: (args, signal) => watchTopChanged(topChanged, args, signal),
    view: (event, rankStyle) => topChangedView(topChanged, event, rankStyle),
    cohort: (args, signal) => watchCohortChanged({ leagues: leagueReads, cohortFeed }, args, signal),
    overtaken: (args, signal) => watchFriendOvertook({ boards, overtakenFeed }, args, signal),
  };
  const contextDeps: ContextDeps = {
    keyring,
    limits: rateLimits,
    requestTimeoutMs,
    reads,
    buckets: bucketReads,
    leagues: leagueReads,
    writes,
    admin,
    records,
    webhooks: webhookAdmin,
    live,
  };

  // Which PostgreSQL host the pool writes to (DATABASE_URL may name a primary and its standbys): a gauge, and /readyz.
  const unwatchPrimary = deps.database.primary.watch((host) => showPostgresPrimary(metrics, host));
  const limits = requestLimitsOf(deps.requestLimits);
  // Who a request is from, the same for HTTP, server-sent events and graphql-ws.
  const clientOf = createClientAddressOf(deps.trustedProxies);
  const corsOrigins = deps.corsOrigins ?? '*';
  const documents = createPersistedDocuments(deps.persistedDocuments);
  // What a read may return (its rows, from its arguments and variables), and its client's budget.
  const readBudget = createReadBudget(rateLimits, limits);
  const responseCache = createResponseCache({
    currentRead: (bucket) => topCache.currentRead(bucket),
    currentBoard: (id) => boards.known(id),
    profileChanges: () => profiles.changes(),
  });

  // A store that does not answer is the client's business (retry later); any other unexpected
  // error stays masked and is logged with its stack for us. Yoga and the fast path share it.
  const maskServiceError = (error: unknown, message: string, isDev?: boolean): Error => {
    const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
    if (isStoreUnavailable(original)) {
      // The one UNAVAILABLE that cannot promise "nothing was recorded" (see CommitInDoubtError).
      const inDoubt = original instanceof Error && original.name === 'CommitInDoubtError';
      return unavailable(
        inDoubt
          ? 'PostgreSQL went away while this batch was committed, and whether it was recorded is not known yet. Retry with the same matchIds: a recorded result answers duplicate: true.'
          : undefined,
      );
    }
    if (!(original instanceof GraphQLError)) log.error({ err: original }, 'unexpected error');
    return maskError(error, message, isDev);
  };

  const yoga = createYoga<{ req: IncomingMessage; res: ServerResponse }>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    ...graphiqlOptions(deps.graphiql ?? true),
    // Yoga's own CORS echoes any Origin with credentials allowed; the service's policy replaces it.
    cors: false,
    // A JSON array of operations in one request, each run (and limited, and rate limited) as its own.
    batching: { limit: MAX_BATCH_OPERATIONS },
    // A registered document's id (see persisted-documents.ts), in a body or a GET's search parameters.
    extraParamNames: ['documentId'],
    plugins: [
      // A registered document named by id becomes the request's query, before anything else looks at it.
      usePersistedDocuments(documents),
      // Variables nested deeper than the contract needs, refused before anything walks them (see json-depth.ts).
      useJsonDepth(),
      // What a document may be, refused before it runs: aliases, depth, tokens, directives, cost;
      // and the time validating it takes, charged to its client.
      ...useDocumentLimits({ bytes: limits.maxDocumentBytes, budget: createValidationBudget(rateLimits, clientOf) }),
      useCorsPolicy(corsOrigins),
      useIntrospection(deps.introspection ?? true),
      // What every operation meets as it runs, its execute hooks run as one (see execute-hooks.ts).
      ...executeHooksTogether([
        // A repeated query runs compiled (graphql-jit) where that answers the same bytes; first of the execute hooks, so the others wrap it.
        useGraphqlJit({ log }),
        // Request errors (variables that fail coercion, parse errors) named before the observation records their outcome.
        useRequestErrorCodes(),
        useObservability(metrics, log),
        useRequestDeadline(requestTimeoutMs),
        readBudget.plugin,
        // Before cached answers: a cached answer stops the execute hooks after it, and is as public as a fresh one.
        useTopCacheControl(),
        // A query of shared tops only, answered once per refresh of its views (after the budget charged it).
        responseCache.plugin,
      ]),
    ],
    // The body limit is enforced in front, from Content-Length (see body-limit.ts).
    maxRequestBodySize: false,
    // Only short documents are kept: every distinct large one would otherwise stay in memory.
    parserAndValidationCache: {
      documentCache: boundedDocumentCache<DocumentNode>(createLRUCache()),
      errorCache: boundedDocumentCache<Error>(createLRUCache()),
    },
    // The fast path and graphql-ws build the request context themselves (once per request).
    context: (initial) =>
      'prepared' in initial
        ? (initial as unknown as PreparedContext).prepared()
        : createContext(contextDeps, {
            authorization: initial.request.headers.get('authorization'),
            client: clientOf(initial.req),
            signal: initial.request.signal,
          }),
    logging: {
      debug: (...args) => log.debug(args),
      info: (...args) => log.info(args),
      warn: (...args) => log.warn(args),
      error: (...args) => log.error(args),
    },
    maskedErrors: { maskError: maskServiceError },
  });

  // POST /graphql with JSON in and out, through Yoga's pipeline without its Fetch layer (see fast-graphql.ts).
  const serveFast = createFastGraphql({
    yoga: yoga as never,
    batchingLimit: MAX_BATCH_OPERATIONS,
    // No abort signal: only subscriptions use one, and they are Yoga's.
    context: (req) => createContext(contextDeps, { authorization: req.headers.authorization, client: clientOf(req) }),
    maskError: maskServiceError,
    corsOrigins,
    documents,
    // An anonymous repeat of a shared top, answered before the pipeline while its answer is current.
    cachedBodies: createCachedBodies({ shared: responseCache, budget: readBudget, observe: createOperationObserver(metrics, log), clientOf }),
    log,
  });
  // Every registered document parsed and validated once now (Yoga's caches keep them), not on its first request.
  for (const text of documents.texts()) {
    const enveloped = yoga.getEnveloped({});
    enveloped.validate(enveloped.schema, enveloped.parse(text));
  }

  const answerOverlay = createOverlayRoute();
  const mayReadMetrics = createMetricsAccess(deps.metricsToken);
  const answerConsole = createConsoleRoute();
  // A bucket's whole standings as a file, for the admin key (see http/export-route.ts).
  const answerExport = createExportRoute({ keyring, limits: rateLimits, exports: { storage, boards, seasons, now }, clientOf, metrics, log }, deps.exports);
  const answerLanding = createLandingRoute({ graphiql: deps.graphiql ?? true, packageDir: packageRoot(dirname(fileURLToPath(import.meta.url))) });
  const indexDrift = createIndexDriftGauge({ storage, index, boards, seasons, driftReports, metrics, now, log }, deps.indexDrift);
  const refuseBody = createBodyLimits({
    maxBytes: MAX_BODY_BYTES,
    maxBytesInFlight: limits.maxBodyBytesInFlight,
    maxBytesInFlightPerClient: limits.maxBodyBytesInFlightPerClient,
    clientOf,
  });
  // How often Node looks for requests past their timeout, and the service for idle connections.
  const checkEveryMs = Math.min(1_000, limits.requestTimeoutMs);
  const server: Server = createServer(
    {
      // A request (headers and body) arriving slower than this is answered 408 and its connection
      // closed, so trickling bodies cannot hold connections; checked every second (Node's default: 30 s).
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: checkEveryMs,
      // An idle keep-alive connection is closed after this (see RequestLimits.keepAliveTimeoutMs).
      keepAliveTimeout: limits.keepAliveTimeoutMs,
    },
    (req, res) => {
      if (refuseBody(req, res)) return;
      if (serveFast(req, res)) return;
      if (answerOverlay(req, res)) return;
      if (answerConsole(req, res)) return;
      if (answerExport(req, res)) return;
      if (answerLanding(req, res)) return;
      if (req.url === '/healthz') return answerHealth(res);
      if (req.url === '/readyz') return void answerReadiness(res, { probeStores: probe, submissionHealth }, deps.database.primary);
      if (req.url === '/metrics') {
        if (mayReadMetrics(req, res)) void answerMetrics(res, metrics, () => indexDrift.refresh(), deps.metricsOfEveryWorker);
        return;
      }
      void yoga(req, res);
    },
  );
  server.maxConnections = limits.maxConnections;
  // One address's share of the connections, and no connection open for long without a request.
  limitConnections(server, {
    maxPerClient: limits.maxConnectionsPerClient,
    isTrustedProxy: createTrustedProxies(deps.trustedProxies),
    firstRequestMs: limits.requestTimeoutMs,
    keepAliveTimeoutMs: limits.keepAliveTimeoutMs,
    checkEveryMs,
  });

  const closeSockets = attachGraphqlWs(
    server,
    yoga as never,
    { contextOf: (facts) => createContext(contextDeps, facts), log },
    { ...limits, clientOf, documents },
  );
  let bucketCloser: BucketCloser | undefined;
  let indexRecovery: IndexRecovery | undefined;
  let indexCatchUp: IndexCatchUp | undefined;
  let resultPartitions: ResultPartitions | undefined;
  let inactivePlayers: InactivePlayers | undefined;
  let webhookDelivery: WebhookDelivery | undefined;

  // A key created or revoked by any process (or the CLI) is forgotten here at once.
  const keyChanges = storage.apiKeys.listenForChanges(() => keyring.forget(), log);
  return {
    parts: {
      storage,
      index,
      masterIndex,
      indexGeneration,
      topCache,
      topFeed,
      cohortFeed,
      profiles,
      boards,
      seasons,
      closedLists,
      flagChanges,
      backlog,
      metrics,
      log,
      now,
      requestTimeoutMs,
      reads,
      writes,
      admin,
      webhookInterest: webhookDirectory,
      deliverWebhooks: () => webhookDelivery?.pass() ?? Promise.resolve(0),
    },
    async start() {
      // The deployment's shared secrets (the cursor key) are known before the first request.
      await loadCursorSecret();
      await webhookDirectory.start();
      // Whether Redis still holds the index is known before the first request: until then no read is trusted.
      indexRecovery = startIndexRecovery({ storage, index, indexGeneration, topCache, boards, seasons, now, log }, deps.indexRecovery);
      await indexRecovery.ready;
      // The current month's score-log partition exists before the first submission, so none is
      // routed while it is being made (see ResultPartitions.firstPass).
      resultPartitions = startResultPartitions({ storage, now, log }, deps.resultPartitions);
      await resultPartitions.firstPass;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(deps.port ?? 4000, deps.host ?? '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
      bucketCloser = startBucketCloser(
        { storage, index, seasons, boards, closedLists, now, log },
        {
          intervalMs: deps.seasonCloseIntervalMs === null ? null : (deps.seasonCloseIntervalMs ?? 5_000),
          settleMs: deps.bucketCloseSettleMs ?? settleMsFor(requestTimeoutMs),
        },
      );
      indexCatchUp = startIndexCatchUp({ storage, index, boards, topCache, flagChanges, metrics, now, log }, deps.indexCatchUp);
      inactivePlayers = startInactivePlayers({ storage, masterIndex, topCache, boards, seasons, metrics, now, log }, deps.inactivePlayers);
      keyChanges.start();
      boardDeletions.start();
      webhookDelivery = startWebhookDelivery({ storage, webhooks: webhookDirectory, sender: webhookSender, metrics, now, log }, deps.webhooks);
      const { port } = server.address() as AddressInfo;
      const url = `http://${deps.host ?? '127.0.0.1'}:${port}`;
      log.info({ url }, 'listening');
      return { port, url };
    },
    async stop() {
      await bucketCloser?.stop();
      await indexCatchUp?.stop();
      await inactivePlayers?.stop();
      await webhookDelivery?.stop();
      webhookSender.close();
      await resultPartitions?.stop();
      await indexRecovery?.stop();
      await keyChanges.stop();
      await boardDeletions.stop();
      // Closes every WebSocket client with 1001 (going away), then the WebSocket server.
      await closeSockets();
      // Ends every topChanged stream, so server-sent event responses finish instead of holding the server open.
      topFeed.close();
      cohortFeed.close();
      overtakenFeed.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // A keep-alive connection whose response ends meanwhile (a finished event stream, say) goes
      // idle and would otherwise stay open until its keep-alive timeout: close those as they come.
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      const timeout = setTimeout(() => server.closeAllConnections(), deps.shutdownTimeoutMs ?? 10_000);
      await closed;
      clearInterval(sweep);
      clearTimeout(timeout);
      // No request writes any more: the TOP_CHANGED windows this process claimed are sent now.
      await topWebhooks.stop();
      await webhookDirectory.stop();
      // No scrape comes any more: a measurement of the drift a last one started ends before the stores close.
      await indexDrift.stop();
      // The last groups' overtakings are told before the stores close.
      await overtaking.idle();
      // Confirmations of the last requests' index writes; any left over are replayed harmlessly.
      await backlog.flush();
      ownSubscriber?.disconnect();
      cohortSubscriber.disconnect();
      overtakenSubscriber.disconnect();
      unwatchPrimary();
      log.info('stopped');
    },
  };
}
