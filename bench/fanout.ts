/**
 * topChanged fan-out: how long a top change takes to reach every subscriber of one process, how
 * many views a second it delivers, and what a subscriber costs in memory. Run by hand, not in the
 * test suite:
 *
 *     npx tsx bench/fanout.ts [--subscribers 1000] [--changes 100] [--interval 150] [--saturate 5]
 *
 * It starts the service as a real child process (`node --import tsx src/main.ts`) on a free port,
 * with a database and a Redis key prefix of its own, opens `subscribers` graphql-ws clients (one
 * WebSocket each) on topChanged of one board, then submits `changes` scores one every `interval`
 * ms, each a new first place (the interval is above the 100 ms coalescing window, so each change
 * is a view of its own). For each change it records the time from the submission's answer to the
 * moment the last subscriber holds a view at least that new (a slow subscriber may skip straight to
 * a later view: it only ever gets the latest). Then it submits back to back for `saturate` seconds
 * and counts the views delivered a second. Memory per subscriber is the service's RSS after
 * subscribing minus before, divided by the subscribers.
 *
 * Baselines in the same run: Redis PUBLISH to message with one plain subscriber, and the same
 * stream of changes with one service subscriber. Every subscriber lives in this one process, so
 * "received" includes its own event loop's time to parse a thousand messages.
 *
 * Environment: FANOUT_NODE_ARGS adds arguments to the service's node (say, --cpu-prof
 * --cpu-prof-dir=DIR, then bench/profile-summary.ts on the file); BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the
 * server, REDIS_URL (default redis://127.0.0.1:6379) the Redis. Everything it makes is removed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type Client, createClient } from 'graphql-ws';
import * as hdr from 'hdr-histogram-js';
import postgres from 'postgres';
import { WebSocket } from 'ws';
import { createRedis, deleteKeysUnder } from '../src/redis.js';
import { freePort } from '../test/helpers/ports.js';

const { values: args } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '1000' },
    changes: { type: 'string', default: '100' },
    interval: { type: 'string', default: '150' },
    saturate: { type: 'string', default: '5' },
  },
});
const SUBSCRIBERS = Number(args.subscribers);
const CHANGES = Number(args.changes);
const INTERVAL_MS = Number(args.interval);
const SATURATE_S = Number(args.saturate);

const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ADMIN_KEY = 'fanout-admin-key-000000000000000';
const SERVER_KEY = 'fanout-server-key-00000000000000';
const BOARD = 'fanout';
const TOP_SIZE = 10;

const run = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const databaseName = `lb_bench_fanout_${run}`;
const keyPrefix = `lbbench:fanout:${run}:`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The service as operators run it, in a process of its own. */
async function startService(): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const port = await freePort();
  const databaseUrl = new URL(POSTGRES_URL);
  databaseUrl.pathname = `/${databaseName}`;
  // FANOUT_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", goes to the service's node.
  const nodeArgs = (process.env.FANOUT_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: databaseUrl.toString(),
      REDIS_URL,
      REDIS_KEY_PREFIX: keyPrefix,
      ADMIN_API_KEY: ADMIN_KEY,
      SERVER_API_KEYS: SERVER_KEY,
      // Every viewer comes from this one address: the per-client budgets would refuse most of them.
      RATE_LIMIT_READ_ROWS_PER_SECOND: '0',
      RATE_LIMIT_READS_PER_SECOND: '0',
      SUBSCRIPTIONS_PER_CLIENT: '1000000',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) throw new Error(`the service did not get ready:\n${output}`);
    const ready = await fetch(`${url}/readyz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) return { child, url, output: () => output };
    await sleep(100);
  }
}

/** CPU time (user + system) a process has used, in milliseconds, from /proc (Linux). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of stat, counted in clock ticks (100 a second on Linux).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** Resident set size of a process, from /proc (Linux). */
function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error('no VmRSS in /proc');
  return Number(match[1]) * 1024;
}

async function gql<T>(url: string, query: string, variables: Record<string, unknown>, key: string): Promise<T> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: T; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data!;
}

const SUBMIT = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }`;
const TOP_CHANGED = `subscription { topChanged(board: "${BOARD}", limit: ${TOP_SIZE}) { asOf entries { rank score player { id displayName } } } }`;

/** Microsecond histogram; p50, p99 and max in milliseconds. */
function histogram() {
  const h = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
  return {
    record: (ms: number) => h.recordValue(Math.max(1, Math.round(ms * 1000))),
    summary: () =>
      `p50 ${fmt(h.getValueAtPercentile(50) / 1000, 2)} ms, p99 ${fmt(h.getValueAtPercentile(99) / 1000, 2)} ms, max ${fmt(h.maxValue / 1000, 2)} ms (n=${h.totalCount})`,
  };
}

/** The raw channel: PUBLISH to message with one plain subscriber, no service in between. */
async function redisBaseline(samples: number): Promise<string> {
  const sub = createRedis(REDIS_URL);
  const pub = createRedis(REDIS_URL);
  await Promise.all([sub.connect(), pub.connect()]);
  const channel = `${keyPrefix}baseline`;
  const h = histogram();
  let resolveMessage: (() => void) | undefined;
  sub.on('message', () => resolveMessage?.());
  await sub.subscribe(channel);
  for (let i = 0; i < samples; i++) {
    const received = new Promise<void>((resolve) => (resolveMessage = resolve));
    const started = performance.now();
    await pub.publish(channel, String(i));
    await received;
    h.record(performance.now() - started);
  }
  await sub.quit();
  await pub.quit();
  return h.summary();
}

/**
 * `count` topChanged subscribers. Each view's first score names the change it shows (scores rise
 * by one per change), so each subscriber tracks the newest change it has seen, and the fleet knows,
 * per change, when its last subscriber got there.
 */
async function subscribeFleet(url: string, count: number) {
  const clients: Client[] = [];
  const newest: number[] = new Array<number>(count).fill(-1);
  const reached = new Map<number, { count: number; lastAt: number }>();
  let delivered = 0;
  let firstViews = 0;
  const errors: unknown[] = [];
  const wsUrl = `${url.replace('http', 'ws')}/graphql`;
  for (let i = 0; i < count; i++) {
    const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
    clients.push(client);
    client.subscribe<{ topChanged: { entries: { score: number }[] } }>(
      { query: TOP_CHANGED },
      {
        next: (result) => {
          const now = performance.now();
          if (result.errors) errors.push(result.errors);
          const top = result.data?.topChanged.entries[0]?.score ?? -1;
          delivered++;
          if (newest[i] === -1) {
            firstViews++;
            newest[i] = Math.max(top, 0);
            return;
          }
          for (let change = Math.max(newest[i]!, 0) + 1; change <= top; change++) {
            const entry = reached.get(change) ?? { count: 0, lastAt: 0 };
            entry.count++;
            entry.lastAt = now;
            reached.set(change, entry);
          }
          newest[i] = Math.max(newest[i]!, top, 0);
        },
        error: (error) => errors.push(error),
        complete: () => undefined,
      },
    );
    // Open sockets in steps, so the service's accept queue is never the thing measured.
    if (i % 100 === 99) await sleep(20);
  }
  return {
    reached,
    errors,
    get delivered() {
      return delivered;
    },
    get firstViews() {
      return firstViews;
    },
    async close() {
      await Promise.all(clients.map(async (client) => client.dispose()));
    },
  };
}

type Fleet = Awaited<ReturnType<typeof subscribeFleet>>;

/** Submits `changes` new first places, one every `intervalMs`; per change, answer → last subscriber. */
async function streamChanges(url: string, fleet: Fleet, size: number, firstScore: number, changes: number, intervalMs: number) {
  const h = histogram();
  const answeredAt = new Map<number, number>();
  const startedAt = performance.now();
  const deliveredBefore = fleet.delivered;
  for (let i = 0; i < changes; i++) {
    const score = firstScore + i;
    const sent = performance.now();
    await gql(url, SUBMIT, { input: { board: BOARD, playerId: `leader${i % 25}`, score, matchId: `c${score}` } }, SERVER_KEY);
    answeredAt.set(score, performance.now());
    const wait = intervalMs - (performance.now() - sent);
    if (wait > 0) await sleep(wait);
  }
  const last = firstScore + changes - 1;
  const deadline = performance.now() + 30_000;
  while ((fleet.reached.get(last)?.count ?? 0) < size && performance.now() < deadline) await sleep(10);
  const seconds = (performance.now() - startedAt) / 1000;
  let incomplete = 0;
  for (const [score, answered] of answeredAt) {
    const entry = fleet.reached.get(score);
    if (!entry || entry.count < size) incomplete++;
    else h.record(entry.lastAt - answered);
  }
  return { latency: h.summary(), incomplete, viewsPerSecond: (fleet.delivered - deliveredBefore) / seconds };
}

/** Back-to-back submissions (4 in flight) for `seconds`: views delivered per second at saturation. */
async function saturate(url: string, fleet: Fleet, firstScore: number, seconds: number) {
  const before = fleet.delivered;
  const started = performance.now();
  let next = firstScore;
  const worker = async () => {
    while (performance.now() - started < seconds * 1000) {
      const score = next++;
      await gql(url, SUBMIT, { input: { board: BOARD, playerId: `leader${score % 25}`, score, matchId: `s${score}` } }, SERVER_KEY);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  const submitted = next - firstScore;
  await sleep(500);
  const elapsed = (performance.now() - started) / 1000;
  return { submitted, submissionsPerSecond: submitted / seconds, viewsPerSecond: (fleet.delivered - before) / elapsed, next };
}

async function cleanUp(child: ChildProcess | undefined): Promise<void> {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(15_000)]);
  }
  const sql = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await sql`drop database if exists ${sql(databaseName)} with (force)`;
  await sql.end();
  await deleteKeysUnder(REDIS_URL, keyPrefix);
}

async function main(): Promise<void> {
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  try {
    console.log(`topChanged fan-out: ${SUBSCRIBERS} WebSocket subscribers, ${CHANGES} changes every ${INTERVAL_MS} ms, ${SATURATE_S} s saturated`);
    console.log(`baseline, Redis PUBLISH → message, one plain subscriber: ${await redisBaseline(1_000)}`);

    service = await startService();
    const { url, child } = service;
    await gql(url, `mutation { createBoard(input: { id: "${BOARD}", title: "fan-out", maxScore: 1000000000, topSize: ${TOP_SIZE} }) { id } }`, {}, ADMIN_KEY);
    for (let i = 0; i < 25; i++) {
      await gql(
        url,
        `mutation($input: PlayerInput!) { upsertPlayer(input: $input) { id } }`,
        { input: { id: `leader${i}`, displayName: `Leader ${i}` } },
        SERVER_KEY,
      );
      await gql(url, SUBMIT, { input: { board: BOARD, playerId: `leader${i}`, score: 0, matchId: `seed${i}` } }, SERVER_KEY);
    }
    let score = 1;

    // Baseline through the service: one subscriber, the same stream.
    const one = await subscribeFleet(url, 1);
    while (one.firstViews < 1) await sleep(10);
    const single = await streamChanges(url, one, 1, score, Math.min(CHANGES, 50), INTERVAL_MS);
    score += Math.min(CHANGES, 50);
    await one.close();
    console.log(`baseline, one service subscriber, submission answered → view received: ${single.latency}`);
    await sleep(500);

    const rssBefore = rssBytes(child.pid!);
    const opening = performance.now();
    const fleet = await subscribeFleet(url, SUBSCRIBERS);
    while (fleet.firstViews < SUBSCRIBERS) {
      if (fleet.errors.length > 0) throw new Error(`subscription errors: ${JSON.stringify(fleet.errors.slice(0, 3))}`);
      await sleep(20);
    }
    const openedMs = performance.now() - opening;
    await sleep(1_000);
    const rssAfter = rssBytes(child.pid!);
    console.log(`${SUBSCRIBERS} subscribed, each with its first view, in ${fmt(openedMs)} ms`);
    console.log(
      `service RSS ${fmt(rssBefore / 2 ** 20, 1)} MiB before, ${fmt(rssAfter / 2 ** 20, 1)} MiB after: ${fmt((rssAfter - rssBefore) / SUBSCRIBERS / 1024, 1)} KiB per subscriber`,
    );

    const serviceCpu = cpuMs(child.pid!);
    const ownCpu = process.cpuUsage();
    const deliveredBefore = fleet.delivered;
    const stream = await streamChanges(url, fleet, SUBSCRIBERS, score, CHANGES, INTERVAL_MS);
    score += CHANGES;
    const views = fleet.delivered - deliveredBefore;
    const own = process.cpuUsage(ownCpu);
    console.log(`${SUBSCRIBERS} subscribers, submission answered → last subscriber received: ${stream.latency}`);
    if (stream.incomplete > 0) console.log(`  (${stream.incomplete} changes did not reach every subscriber within 30 s)`);
    console.log(`  views delivered during the steady stream: ${fmt(stream.viewsPerSecond)} a second`);
    console.log(
      `  CPU per view delivered: service ${fmt(((cpuMs(child.pid!) - serviceCpu) * 1000) / views)} µs, these clients ${fmt((own.user + own.system) / views)} µs`,
    );

    const saturated = await saturate(url, fleet, score, SATURATE_S);
    console.log(
      `saturated: ${fmt(saturated.submissionsPerSecond)} top-changing submissions a second → ${fmt(saturated.viewsPerSecond)} views delivered a second (coalesced to at most 10 views a second per subscriber)`,
    );
    if (fleet.errors.length > 0) console.log(`subscription errors: ${JSON.stringify(fleet.errors.slice(0, 3))}`);
    await fleet.close();
  } catch (error) {
    if (service) console.error(service.output());
    throw error;
  } finally {
    await cleanUp(service?.child);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
