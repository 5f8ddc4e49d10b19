/**
 * The service under test, as a real process: `node --import tsx src/main.ts` (or `node
 * dist/main.js` after `npm run build`, with runtime 'dist'), on a bench target's database, Redis
 * (REDIS_URL, or REDIS_CLUSTER_NODES for a cluster) and key prefix, with the bench's API keys and
 * no rate limits, logging only warnings (to a file).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PERIODS } from '../../src/model/board.js';
import { freePort } from '../../test/helpers/ports.js';
import { startPgBouncer } from '../../test/helpers/pgbouncer.js';
import { sessionTimeoutsFor } from '../../src/db/client.js';
import { allocationSocket } from './store-calls.js';
import { BENCH_ADMIN_KEY, BENCH_SERVER_KEY, BENCH_TARGET, type BenchTarget, REDIS_URL, benchDatabaseUrl } from './env.js';

export interface ServiceOptions {
  /** The database, Redis and key prefix it serves, and the board it is waited for on. Default {@link BENCH_TARGET}. */
  target?: BenchTarget;
  /** 'dist' runs the build (npm run build first), as npm start does; 'tsx' runs src/ through tsx. Default 'tsx'; the harness (bench/run.ts) defaults to 'dist'. */
  runtime?: 'tsx' | 'dist';
  /** Write a V8 CPU profile (node --cpu-prof) into this folder when the service exits. */
  cpuProfileDir?: string;
  /** Variables set over the bench's own (e.g. the per-client budgets, which the bench turns off). Default: none. */
  env?: Record<string, string>;
  /**
   * Whether the service reaches PostgreSQL through a PgBouncer of its own in transaction pooling
   * (test/helpers/pgbouncer.ts, DATABASE_POOLING=transaction, the session timeouts of the default
   * 10 s bound set by its connect_query). Default: BENCH_PGBOUNCER=1, which `--pgbouncer` sets.
   */
  pgbouncer?: boolean;
}

export interface ServiceProcess {
  /** http://127.0.0.1:PORT/graphql */
  url: string;
  /** ws://127.0.0.1:PORT/graphql */
  wsUrl: string;
  pid: number;
  /** Where its output goes. */
  logFile: string;
  /** SIGTERM, then waits for it to exit (and write its profile). */
  stop(): Promise<void>;
}

/** The load generator is one address standing for thousands of clients: no per-client budgets. */
const NO_CLIENT_LIMITS = {
  RATE_LIMIT_SUBMISSIONS_PER_SECOND: '0',
  RATE_LIMIT_READS_PER_SECOND: '0',
  RATE_LIMIT_READ_ROWS_PER_SECOND: '0',
  SUBSCRIPTIONS_PER_CLIENT: '1000000',
  WS_OPERATIONS_PER_SOCKET: '100000',
};

/**
 * Those settings left empty, for {@link ServiceOptions.env}: the service then applies its own
 * defaults (it reads an empty variable as unset), as a service deployed without them does.
 */
export const SERVICE_DEFAULT_LIMITS: Record<string, string> = Object.fromEntries(Object.keys(NO_CLIENT_LIMITS).map((name) => [name, '']));

const everyPeriodRead = (boardId: string) =>
  `{ ${PERIODS.map((period) => `${period}: standing(board: "${boardId}", playerId: "p1", period: ${period}) { rank }`).join(' ')} }`;

/**
 * Waits until the service answers a read of every period of the bench board. A service that finds
 * the index lost (Redis restarted, or never held this prefix's generation) rebuilds it from
 * PostgreSQL first and answers UNAVAILABLE meanwhile: that is not what a scenario measures.
 */
async function waitForReads(base: string, boardId: string, exited: () => boolean, logFile: string): Promise<void> {
  const deadline = Date.now() + 15 * 60_000;
  let said = false;
  for (;;) {
    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: everyPeriodRead(boardId) }),
    });
    const text = await response.text();
    if (response.status === 200 && !text.includes('"errors"')) return;
    if (exited()) throw new Error(`the service exited; see ${logFile}`);
    if (Date.now() > deadline) throw new Error(`the service did not answer reads of every period within 15 minutes: ${text.slice(0, 300)}`);
    if (!said) {
      process.stdout.write(`waiting for the service to answer reads of every period (rebuilding its index?): ${text.slice(0, 200)}\n`);
      said = true;
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

const ALLOCATION_METER = fileURLToPath(new URL('allocation-meter.js', import.meta.url));

/** The flags `npm start` gives node ($npm_package_config_nodeFlags: the young generation's size). */
const START_NODE_FLAGS = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { config: { nodeFlags: string } }
).config.nodeFlags
  .split(' ')
  .filter(Boolean);

/** Starts the service and waits until /readyz answers 200 and it answers reads of every period. */
export async function startService(options: ServiceOptions = {}): Promise<ServiceProcess> {
  const target = options.target ?? BENCH_TARGET;
  const port = await freePort();
  const logFile = join(tmpdir(), `lb-bench-service-${port}.log`);
  const pgbouncer =
    (options.pgbouncer ?? process.env.BENCH_PGBOUNCER === '1') ? await startPgBouncer({ timeouts: sessionTimeoutsFor(10_000), poolSize: 20 }) : undefined;
  const databaseUrl = benchDatabaseUrl(target.database);
  const log = createWriteStream(logFile);
  const nodeArgs: string[] = [];
  if (options.cpuProfileDir) {
    mkdirSync(options.cpuProfileDir, { recursive: true });
    nodeArgs.push('--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir);
  }
  // As npm start runs it: the flags it gives node (package.json's config.nodeFlags), then the entry;
  // beside them the allocation meter (allocation-meter.js), which serves a figure on a socket of its own.
  nodeArgs.push(...START_NODE_FLAGS, '--import', ALLOCATION_METER, ...(options.runtime === 'dist' ? ['dist/main.js'] : ['--import', 'tsx', 'src/main.ts']));
  const child: ChildProcess = spawn(process.execPath, nodeArgs, {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: pgbouncer ? pgbouncer.via(databaseUrl) : databaseUrl,
      ...(pgbouncer ? { DATABASE_POOLING: 'transaction' } : {}),
      BENCH_ALLOCATION_SOCKET: allocationSocket(port),
      REDIS_URL: typeof target.redis === 'string' ? target.redis : REDIS_URL,
      // Set (and so preferred to REDIS_URL) only for a cluster target; empty reads as unset.
      REDIS_CLUSTER_NODES: typeof target.redis === 'string' ? '' : target.redis.cluster.map(({ host, port: node }) => `${host}:${node}`).join(','),
      REDIS_KEY_PREFIX: target.keyPrefix,
      ADMIN_API_KEY: BENCH_ADMIN_KEY,
      SERVER_API_KEYS: BENCH_SERVER_KEY,
      ...NO_CLIENT_LIMITS,
      LOG_LEVEL: 'warn',
      // As npm start runs it: graphql-js skips its development-only checks.
      NODE_ENV: 'production',
      ...target.serviceEnv,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}; see ${logFile}`);
    try {
      if ((await fetch(`${base}/readyz`)).status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the service was not ready within 60 s; see ${logFile}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await waitForReads(base, target.boardId, () => child.exitCode !== null, logFile);
  // Scraped once as Prometheus would be from the start, so that the drift measurement this starts
  // (in the background, once a minute: jobs/index-drift.ts) runs during the warm-up rather than in
  // the measured window: a window of seconds holds one only by chance.
  await (await fetch(`${base}/metrics`)).text();
  return {
    url: `${base}/graphql`,
    wsUrl: `ws://127.0.0.1:${port}/graphql`,
    pid: child.pid!,
    logFile,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await exited;
      await pgbouncer?.stop();
      log.end();
      if (code !== 0) process.stderr.write(`the service exited with ${code}; see ${logFile}\n`);
    },
  };
}
