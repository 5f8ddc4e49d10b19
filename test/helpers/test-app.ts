import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { type RunnerTask, type RunnerTestSuite, afterAll, beforeEach, inject } from 'vitest';
import { type App, type AppDeps, buildApp } from '../../src/app.js';
import { type Database, type Pooling, createDatabase, sessionTimeoutsFor } from '../../src/db/client.js';
import { createLogger } from '../../src/logger.js';
import type { RateLimitOptions } from '../../src/services/rate-limits.js';
import type { RequestLimits } from '../../src/http/request-limits.js';
import type { IndexCatchUpOptions } from '../../src/jobs/index-catch-up.js';
import type { IndexRecoveryOptions } from '../../src/jobs/index-recovery.js';
import type { ResultPartitionsOptions } from '../../src/jobs/result-partitions.js';
import type { IndexDriftOptions } from '../../src/jobs/index-drift.js';
import type { GroupCommitOptions } from '../../src/services/group-commit.js';
import { subscriberFor } from '../../src/pubsub/top-feed.js';
import { openReplicaReads } from '../../src/ranking/replicas.js';
import { type RedisTarget, createRedisClient, deleteKeysUnder } from '../../src/redis.js';
import type { RedisClusterFixture } from './redis-cluster.js';
import { TEST_REDIS_URL } from './redis-keys.js';

/**
 * What this file's tests started (apps, stores) and have not closed yet, oldest first, each with
 * the describe block (or file) that was running when it started: its beforeAll, or one of its
 * tests. One place stops them, newest first (an app before the stores it shares with another), so
 * a test file need not write an afterAll for them: once that block's tests are done, before the
 * next test of the file starts, and at the latest once the file's tests are done. A test that wants
 * one gone sooner (a restart, a resource counted) still calls close().
 */
const started = new Map<{ close(): Promise<void> }, RunnerTestSuite | undefined>();

/**
 * The describe block (or file) running now. Vitest keeps the task it runs in its worker state,
 * which it does not export: the suite whose hooks run, or the test (whose block owns what it starts).
 * Undefined elsewhere: then the file's end closes it.
 */
function runningBlock(): RunnerTestSuite | undefined {
  const current = (globalThis as { __vitest_worker__?: { current?: RunnerTask } }).__vitest_worker__?.current;
  return current?.type === 'test' ? (current.suite ?? current.file) : current;
}

/** Closes `what` once its block's tests are done, unless it was closed before; the close answered is idempotent. */
function closedAtEnd<T extends { close(): Promise<void> }>(what: T): T {
  let closing: Promise<void> | undefined;
  const close = what.close.bind(what);
  const once = {
    close: () => {
      started.delete(once);
      return (closing ??= close());
    },
  };
  started.set(once, runningBlock());
  what.close = once.close;
  return what;
}

/** Closes, newest first, what `done` picks; throws what failed, once each was tried. */
async function closeStarted(done: (block: RunnerTestSuite | undefined) => boolean): Promise<void> {
  const failures: unknown[] = [];
  for (const [each, block] of [...started].reverse()) {
    if (done(block)) await each.close().catch((error: unknown) => failures.push(error));
  }
  if (failures.length > 0) throw new AggregateError(failures, `${failures.length} test fixtures failed to close`);
}

const CLOSING_MS = 120_000;
// Registered as the file is collected: Vitest imports this helper once per test file (each file
// its own module graph), within the file's root suite, so these run for every test of the file.
// A block is done once Vitest has given it its result (after its afterAll hooks).
beforeEach(() => closeStarted((block) => block?.result?.state !== undefined && block.result.state !== 'run'), CLOSING_MS);
afterAll(() => closeStarted(() => true), CLOSING_MS);

export const ADMIN_KEY = 'test-admin-key-0123456789';
/** See TestAppOptions.requestTimeoutMs. */
const TEST_REQUEST_TIMEOUT_MS = 30_000;
export const SERVER_KEY = 'test-server-key-0123456789';

export interface GraphQLResponse<T = Record<string, unknown>> {
  data?: T | null;
  errors?: { message: string; path?: string[]; extensions?: { code?: string } }[] | undefined;
}

/** The first error's `extensions.code` of an answer, or undefined when it has none. */
export const codeOf = (answer: { errors?: readonly { extensions?: { code?: string } }[] | undefined }): string | undefined =>
  answer.errors?.[0]?.extensions?.code;

export interface TestAppOptions {
  /** The app's clock. Default: the system's. */
  now?: () => Date;
  /** Request budgets; default: none, so tests are not throttled. */
  rateLimits?: RateLimitOptions;
  /** Counts every SQL statement the app sends. */
  onQuery?: (statement: string) => void;
  /**
   * Another test app whose database and Redis prefix this one uses too, as a second API process of
   * one deployment would. close() then leaves both to that app. Default: stores of its own.
   */
  shareStoresOf?: { databaseUrl: string; keyPrefix: string };
  /** How often the app's bucket closer passes (null: never). Default: the app's. */
  seasonCloseIntervalMs?: number | null;
  /**
   * Where the app reaches PostgreSQL (a TCP proxy in front of it, see tcp-proxy.ts); the app's
   * database is still created, read by the test (`databaseUrl`) and dropped directly. Default: directly.
   */
  databaseVia?: { host?: string; port: number };
  /**
   * How the app's connections reach PostgreSQL (see Pooling): 'transaction' with databaseVia naming
   * a PgBouncer. Default: 'transaction' through the run's PgBouncer when the run has one
   * (LB_TEST_PGBOUNCER=1, see global-setup.ts) and databaseVia is not given, 'session' otherwise.
   */
  pooling?: Pooling;
  /**
   * The Redis the app uses: a proxy in front of the shared one, or a test's own redis-server.
   * Default: TEST_REDIS_URL, or the shared Redis on 127.0.0.1:6379.
   */
  redisUrl?: string;
  /**
   * A Redis Cluster of the test's own (see redis-cluster.ts) for the app to use instead, through
   * ioredis Cluster, as REDIS_CLUSTER_NODES makes the service do; the key prefix is still the
   * app's own. Default: none (one node, see redisUrl).
   */
  redisCluster?: Pick<RedisClusterFixture, 'nodes'>;
  /**
   * Read replicas for the app's reads that may be a little stale (see ranking/replicas.ts): the
   * URLs of replicas of `redisUrl` (REDIS_REPLICA_URLS), or `cluster` for the replicas of
   * `redisCluster` (REDIS_CLUSTER_REPLICA_READS); with the max lag and heartbeat period. Default: none.
   */
  replicas?: { urls?: string[]; cluster?: boolean; maxLagMs?: number; heartbeatMs?: number };
  /** How the app catches the index up after it fell behind. Default: the app's. */
  indexCatchUp?: IndexCatchUpOptions;
  /** How the app watches for, and rebuilds, a lost index. Default: the app's. */
  indexRecovery?: IndexRecoveryOptions;
  /** How the app groups submissions into transactions. Default: the app's. */
  groupCommit?: GroupCommitOptions;
  /** How the app keeps the score log's partitions ahead. Default: the app's. */
  resultPartitions?: ResultPartitionsOptions;
  /** How often the app renews its measurement of the index drift. Default: the app's. */
  indexDrift?: IndexDriftOptions;
  /**
   * The app's request bound, from which its PostgreSQL session timeouts follow. Default 30 s, not
   * the service's 10 s: the tests check answers, and a loaded machine must not turn a slow group
   * into UNAVAILABLE (the fault tests, which check the bound itself, set their own).
   */
  requestTimeoutMs?: number;
  /** The token /metrics asks for. Default: none (open). */
  metricsToken?: string;
  /** What a request, operation and connection may hold. Default: the app's. */
  requestLimits?: RequestLimits;
  /** HTTP settings, as the environment gives them to the service (GRAPHIQL, INTROSPECTION, ...). Default: the app's. */
  http?: Pick<AppDeps, 'graphiql' | 'introspection' | 'trustedProxies' | 'corsOrigins' | 'persistedDocuments'>;
  /** The app's logger, for a test that reads what the app logs. Default: TEST_LOG_LEVEL's (silent), on standard output. */
  log?: AppDeps['log'];
  /** How the app delivers webhooks (allowPrivate for a receiver on 127.0.0.1, the job's interval). Default: the app's. */
  webhooks?: AppDeps['webhooks'];
  /** How the app writes TOP_CHANGED webhook events (its window). Default: the app's. */
  topWebhooks?: AppDeps['topWebhooks'];
}

/**
 * A running app on a free port, with its own database (a copy of the run's migrated template) and
 * its own Redis key prefix, so that no two test apps ever see each other's data. close() stops the
 * app and removes both; its describe block's tests ending does too, when no test did (see `started`).
 */
export async function startTestApp(options: TestAppOptions = {}) {
  const shared = options.shareStoresOf;
  const redisTarget: RedisTarget = options.redisCluster ? { cluster: options.redisCluster.nodes } : (options.redisUrl ?? TEST_REDIS_URL);
  const stores = shared ? undefined : await createTestStores({ redis: redisTarget });
  const databaseUrl = new URL(shared?.databaseUrl ?? stores!.databaseUrl);
  const keyPrefix = shared?.keyPrefix ?? stores!.keyPrefix;
  const appDatabaseUrl = new URL(databaseUrl);
  const runPgBouncer = options.databaseVia ? undefined : inject('pgbouncerPort');
  const via = options.databaseVia ?? (runPgBouncer ? { port: runPgBouncer } : undefined);
  if (via) {
    appDatabaseUrl.hostname = via.host ?? '127.0.0.1';
    appDatabaseUrl.port = String(via.port);
  }
  const database: Database = createDatabase(appDatabaseUrl.toString(), {
    pooling: options.pooling ?? (runPgBouncer ? 'transaction' : 'session'),
    onQuery: options.onQuery,
    timeouts: sessionTimeoutsFor(options.requestTimeoutMs ?? TEST_REQUEST_TIMEOUT_MS),
  });
  const redis = createRedisClient(redisTarget, { keyPrefix });
  await redis.connect();
  const subscriber = subscriberFor(redis);
  await subscriber.connect();
  const replicaSetup =
    options.replicas?.cluster && options.redisCluster
      ? { cluster: options.redisCluster.nodes }
      : options.replicas?.urls
        ? { urls: options.replicas.urls }
        : null;
  const replicaReads = replicaSetup
    ? await openReplicaReads(redis, { replicas: replicaSetup, keyPrefix, maxLagMs: options.replicas?.maxLagMs, heartbeatMs: options.replicas?.heartbeatMs })
    : undefined;
  const app: App = buildApp({
    database,
    redis,
    subscriber,
    replicaReads,
    log: options.log ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
    adminKey: ADMIN_KEY,
    serverKeys: [SERVER_KEY],
    port: 0,
    now: options.now,
    rateLimits: options.rateLimits ?? { readsPerSecond: 0, submissionsPerSecond: 0, readRowsPerSecond: 0, authFailuresPerSecond: 0, validationMsPerSecond: 0 },
    seasonCloseIntervalMs: options.seasonCloseIntervalMs,
    indexCatchUp: options.indexCatchUp,
    indexRecovery: options.indexRecovery,
    groupCommit: options.groupCommit,
    resultPartitions: options.resultPartitions,
    indexDrift: options.indexDrift,
    requestTimeoutMs: options.requestTimeoutMs ?? TEST_REQUEST_TIMEOUT_MS,
    metricsToken: options.metricsToken,
    requestLimits: options.requestLimits,
    webhooks: options.webhooks,
    topWebhooks: options.topWebhooks,
    ...options.http,
  });
  const { url } = await app.start();

  async function gql<T = Record<string, unknown>>(
    query: string,
    variables: Record<string, unknown> = {},
    { key }: { key?: string | null } = {},
  ): Promise<GraphQLResponse<T>> {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as GraphQLResponse<T>;
  }

  let stopped = false;
  const stopApp = async () => {
    if (stopped) return;
    stopped = true;
    await app.stop();
  };

  return closedAtEnd({
    url,
    app,
    /** Stops the app, as stopping its process would; its stores stay (close() removes them). */
    stop: stopApp,
    database,
    redis,
    /** The replica reads, when `replicas` was given: their states() tell which replicas take reads. */
    replicaReads,
    keyPrefix,
    /** The app's own database, for a child process (the CLI) to work on. */
    databaseUrl: databaseUrl.toString(),
    /** Anonymous. */
    gql,
    /** With the game-server key. */
    server: <T = Record<string, unknown>>(query: string, variables: Record<string, unknown> = {}) => gql<T>(query, variables, { key: SERVER_KEY }),
    /** With the admin key. */
    admin: <T = Record<string, unknown>>(query: string, variables: Record<string, unknown> = {}) => gql<T>(query, variables, { key: ADMIN_KEY }),
    async close() {
      await stopApp();
      await database.close();
      await replicaReads?.close();
      await subscriber.quit();
      await redis.quit();
      await stores?.drop();
    },
  });
}

export type TestApp = Awaited<ReturnType<typeof startTestApp>>;

function adminTarget(url: URL) {
  return { host: url.hostname, port: Number(url.port || 5432), user: decodeURIComponent(url.username || 'postgres'), database: 'postgres' };
}

/**
 * A database of its own (a copy of the run's migrated template) and a Redis key prefix, for a test
 * for an app of startTestApp, or for a test that runs the service as processes (see service-process.ts).
 * drop() removes both; its describe block's tests ending does too, when nothing did (see `started`).
 */
export async function createTestStores(options: { /** Where the keys are removed from. Default: the test Redis. */ redis?: RedisTarget } = {}) {
  const id = randomBytes(4).toString('hex');
  const templateUrl = new URL(inject('templateDatabaseUrl'));
  const template = templateUrl.pathname.slice(1);
  const name = `${template}_${id}`;
  const admin = postgres({ ...adminTarget(templateUrl), max: 1, onnotice: () => {} });
  await admin`create database ${admin(name)} template ${admin(template)}`;
  await admin.end();
  const databaseUrl = new URL(templateUrl);
  databaseUrl.pathname = `/${name}`;
  const keyPrefix = `${inject('redisRunPrefix')}${id}:`;
  const stores = closedAtEnd({
    async close() {
      await deleteKeysUnder(options.redis ?? TEST_REDIS_URL, keyPrefix);
      const drop = postgres({ ...adminTarget(templateUrl), max: 1, onnotice: () => {} });
      await drop`drop database if exists ${drop(name)} with (force)`;
      await drop.end();
    },
  });
  return { databaseUrl: databaseUrl.toString(), keyPrefix, drop: () => stores.close() };
}
