import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, createClient } from 'graphql-ws';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { loadConfig } from '../src/config.js';
import { ensureDatabase } from '../src/db/client.js';
import { POSTGRES_URL } from './helpers/global-setup.js';
import { type OracleBoard, type OracleResult, bucketId, foldResults, rankEntries } from './helpers/oracle.js';
import { type LogLine, type ServiceProcess, startService } from './helpers/service-process.js';
import { seeded } from './helpers/random.js';
import { ADMIN_KEY, type GraphQLResponse, SERVER_KEY, createTestStores } from './helpers/test-app.js';
import { until } from './helpers/wait.js';

/**
 * Several API processes of one deployment: process A runs WORKERS=2 (a primary and two workers on
 * one port), process B runs alone (WORKERS=1, no primary); both on one database and one Redis
 * prefix. What one process accepts, the other ranks and replays as a duplicate; a live top watched
 * on one moves with a submission through the other; a cached top is never older than its bound.
 * Then the primary replaces a killed worker, and SIGTERM stops every worker cleanly.
 */

/** The top cache's documented bound (TopCacheOptions.maxAgeMs, default 1,000 ms; README "Read path"). */
const TOP_CACHE_MAX_AGE_MS = 1_000;

const isListening = (line: LogLine) => line.msg === 'listening';

/** A POST on a connection of its own, so that successive calls to a WORKERS > 1 port spread over its workers. */
function gql<T = Record<string, unknown>>(url: string, query: string, variables: Record<string, unknown> = {}, key?: string): Promise<GraphQLResponse<T>> {
  const body = JSON.stringify({ query, variables });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}/graphql`,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(key ? { authorization: `Bearer ${key}` } : {}) },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => {
          try {
            resolve(JSON.parse(text) as GraphQLResponse<T>);
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`;
const SUBMIT = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }`;
const STANDINGS = `query($board: ID!) { standings(board: $board, first: 100) { edges { node { rank score player { id } } } } }`;
const TOP = `query($board: ID!, $limit: Int!) { top(board: $board, limit: $limit) { size asOf entries { rank score player { id } } } }`;
const TOP_CHANGED = `subscription($board: ID!, $limit: Int!) { topChanged(board: $board, limit: $limit) { entries { rank score player { id } } } }`;

interface Row {
  rank: number;
  score: number;
  player: { id: string };
}
interface TopAnswer {
  top: { size: number; asOf: string; entries: Row[] };
}
const rowsOf = (rows: Row[]) => rows.map((row) => [row.rank, row.player.id, row.score]);

async function createBoard(url: string, input: Record<string, unknown>): Promise<void> {
  const answer = await gql(url, CREATE, { input: { title: String(input.id), maxScore: 1_000_000, ...input } }, ADMIN_KEY);
  expect(answer.errors).toBeUndefined();
}

/** What each process answered to the submissions of this file: its /metrics must count exactly that. */
const answered = new Map<string, { accepted: number; duplicate: number }>();

async function submit(url: string, input: Record<string, unknown>): Promise<boolean> {
  const answer = await gql<{ submitScore: { duplicate: boolean } }>(url, SUBMIT, { input }, SERVER_KEY);
  expect(answer.errors).toBeUndefined();
  const { duplicate } = answer.data!.submitScore;
  const tally = answered.get(url) ?? { accepted: 0, duplicate: 0 };
  tally[duplicate ? 'duplicate' : 'accepted']++;
  answered.set(url, tally);
  return duplicate;
}

/** GET /metrics on a connection of its own (so successive scrapes of a WORKERS > 1 port reach different workers). */
function scrape(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/metrics`, { agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Every sample of a metric family in a scrape, as `name{labels}` → value. */
function samples(text: string, name: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) {
      const at = line.lastIndexOf(' ');
      found.set(line.slice(0, at), Number(line.slice(at + 1)));
    }
  }
  return found;
}

async function top(url: string, board: string, limit = 10): Promise<TopAnswer['top']> {
  const answer = await gql<TopAnswer>(url, TOP, { board, limit });
  expect(answer.errors).toBeUndefined();
  return answer.data!.top;
}

/** A topChanged subscription over graphql-ws, collecting each view's rows. */
function watch(url: string, board: string, limit: number) {
  const client: Client = createClient({ url: `${url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  const views: Row[][] = [];
  const errors: unknown[] = [];
  const closed: { code?: number } = {};
  client.on('closed', (event) => (closed.code = (event as { code: number }).code));
  client.subscribe<{ topChanged: { entries: Row[] } }>(
    { query: TOP_CHANGED, variables: { board, limit } },
    {
      next: (result) => {
        if (result.errors) errors.push(...result.errors);
        if (result.data) views.push(result.data.topChanged.entries);
      },
      error: (error) => errors.push(error),
      complete: () => undefined,
    },
  );
  return { views, errors, closed, close: () => client.dispose() };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('several API processes on one database and one Redis prefix', () => {
  let stores: Awaited<ReturnType<typeof createTestStores>>;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let urlA: string;
  let urlB: string;

  const environment = () => ({
    PORT: '0',
    DATABASE_URL: stores.databaseUrl,
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: stores.keyPrefix,
    ADMIN_API_KEY: ADMIN_KEY,
    SERVER_API_KEYS: SERVER_KEY,
    RATE_LIMIT_SUBMISSIONS_PER_SECOND: '0',
    RATE_LIMIT_READS_PER_SECOND: '0',
    SHUTDOWN_TIMEOUT_MS: '5000',
  });

  beforeAll(async () => {
    stores = await createTestStores();
    a = startService({ ...environment(), WORKERS: '2' });
    b = startService(environment());
    [urlA, urlB] = await Promise.all([a.listening, b.listening]);
    await until(() => a.lines().filter(isListening).length === 2, 20_000, 'both workers listening', 20);
  }, 60_000);

  afterAll(async () => {
    for (const service of [a, b]) {
      if (service?.child.exitCode === null && service.child.signalCode === null) {
        service.child.kill('SIGKILL');
        await service.exited;
      }
    }
    await stores?.drop();
  });

  it('WORKERS=2 runs a primary and two workers on one port; WORKERS=1 runs the app in the process itself', () => {
    const workers = a.lines().filter(isListening);
    expect(new Set(workers.map((line) => line.pid)).size).toBe(2);
    expect(workers.map((line) => line.pid)).not.toContain(a.child.pid);
    expect(new Set(workers.map((line) => line.url))).toEqual(new Set([urlA]));
    expect(
      b
        .lines()
        .filter(isListening)
        .map((line) => line.pid),
    ).toEqual([b.child.pid]);
    expect(b.lines().some((line) => line.msg === 'worker started')).toBe(false);
  });

  it("concurrent submissions for the same players through either process end in the oracle's standings, read through both", async () => {
    const board: OracleBoard = { id: 'sum-both', order: 'HIGH_FIRST', aggregate: 'SUM', periods: ['ALL_TIME'] };
    await createBoard(urlA, { id: board.id, aggregate: 'SUM' });
    const base = Date.now() - 60_000;
    const random = seeded(23);
    const results: (OracleResult & { matchId: string })[] = [];
    for (let player = 0; player < 8; player++) {
      for (let match = 0; match < 20; match++) {
        results.push({
          playerId: `p${player}`,
          score: random.int(0, 999),
          region: null,
          achievedAt: new Date(base + results.length),
          matchId: `m${match}`,
        });
      }
    }
    // Distinct totals, so the order does not hang on the tie-break's time resolution.
    const totals = new Map<string, number>();
    for (const result of results) totals.set(result.playerId, (totals.get(result.playerId) ?? 0) + result.score);
    for (let player = 0; player < 8; player++) {
      const last = results[player * 20 + 19]!;
      while ([...totals].some(([id, total]) => id !== last.playerId && total === totals.get(last.playerId))) {
        last.score++;
        totals.set(last.playerId, totals.get(last.playerId)! + 1);
      }
    }

    // Every player's results alternate between the processes, all in flight at once.
    const duplicates = await Promise.all(
      results.map((result, i) =>
        submit(i % 2 === 0 ? urlA : urlB, {
          board: board.id,
          playerId: result.playerId,
          score: result.score,
          matchId: result.matchId,
          achievedAt: result.achievedAt.toISOString(),
        }),
      ),
    );
    expect(duplicates.every((duplicate) => !duplicate)).toBe(true);

    const expected = rankEntries(
      board,
      foldResults(board, results)
        .get(bucketId('ALL_TIME', 'all', null))!
        .values(),
    ).map((entry, i) => [i + 1, entry.playerId, entry.score]);
    for (const url of [urlA, urlA, urlB]) {
      const standings = await gql<{ standings: { edges: { node: Row }[] } }>(url, STANDINGS, { board: board.id });
      expect(standings.errors).toBeUndefined();
      expect(rowsOf(standings.data!.standings.edges.map((edge) => edge.node))).toEqual(expected);
      expect(rowsOf((await top(url, board.id)).entries)).toEqual(expected);
    }
  });

  it('a topChanged viewer of one process sees the change a submission through the other makes', async () => {
    await createBoard(urlB, { id: 'live' });
    await submit(urlB, { board: 'live', playerId: 'seed', score: 10, matchId: 'seed' });
    for (const [watched, through, playerId, score] of [
      [urlA, urlB, 'from-b', 100],
      [urlB, urlA, 'from-a', 200],
    ] as const) {
      const viewer = watch(watched, 'live', 3);
      await until(() => viewer.views.length > 0 || viewer.errors.length > 0, 10_000, 'the first view', 20);
      expect(viewer.errors).toEqual([]);
      expect(viewer.views[0]![0]!.player.id).not.toBe(playerId);
      await submit(through, { board: 'live', playerId, score, matchId: `m-${playerId}` });
      await until(
        () => viewer.views.some((rows) => rows[0]?.player.id === playerId && rows[0].score === score) || viewer.errors.length > 0,
        10_000,
        `the view led by ${playerId}`,
        20,
      );
      expect(viewer.errors).toEqual([]);
      await viewer.close();
    }
  });

  it("each process's cached top is no older than its bound after a change through the other", async () => {
    await createBoard(urlA, { id: 'cached' });
    await submit(urlA, { board: 'cached', playerId: 'first', score: 100, matchId: 'm1' });
    for (const [reader, writer, playerId, score] of [
      [urlA, urlB, 'via-b', 500],
      [urlB, urlA, 'via-a', 900],
    ] as const) {
      // Fill the reader's caches (both of A's workers: each call is a connection of its own).
      for (let i = 0; i < 4; i++) await top(reader, 'cached');
      const before = Date.now();
      await submit(writer, { board: 'cached', playerId, score, matchId: `m-${playerId}` });
      const written = Date.now();
      // Within the bound a reader may still serve the view it had, dated before the change.
      for (let i = 0; i < 4; i++) {
        const view = await top(reader, 'cached');
        if (view.entries[0]?.player.id !== playerId) expect(new Date(view.asOf).getTime()).toBeLessThanOrEqual(before);
      }
      // Past it, never. Why a sleep: the bound itself is what is tested, in child processes that
      // read the system's clock (no clock can be handed to them), so that much time must pass.
      await sleep(Math.max(0, written + TOP_CACHE_MAX_AGE_MS + 50 - Date.now()));
      for (let i = 0; i < 4; i++) {
        const view = await top(reader, 'cached');
        expect(view.entries[0]).toMatchObject({ rank: 1, score, player: { id: playerId } });
        expect(new Date(view.asOf).getTime()).toBeGreaterThan(before);
      }
    }
  });

  it('a submission replayed through the other process is answered as a replay and counted once', async () => {
    await createBoard(urlB, { id: 'replays', aggregate: 'SUM' });
    expect(await submit(urlA, { board: 'replays', playerId: 'ann', score: 10, matchId: 'm1' })).toBe(false);
    expect(await submit(urlB, { board: 'replays', playerId: 'ann', score: 10, matchId: 'm1' })).toBe(true);
    expect(await submit(urlB, { board: 'replays', playerId: 'bob', score: 20, matchId: 'm2' })).toBe(false);
    expect(await submit(urlA, { board: 'replays', playerId: 'bob', score: 20, matchId: 'm2' })).toBe(true);
    // The same result sent to both at once: exactly one records it.
    const raced = await Promise.all([urlA, urlB, urlA, urlB].map((url) => submit(url, { board: 'replays', playerId: 'cid', score: 30, matchId: 'm3' })));
    expect(raced.filter((duplicate) => !duplicate)).toHaveLength(1);
    for (const url of [urlA, urlB]) {
      const standings = await gql<{ standings: { edges: { node: Row }[] } }>(url, STANDINGS, { board: 'replays' });
      expect(rowsOf(standings.data!.standings.edges.map((edge) => edge.node))).toEqual([
        [1, 'cid', 30],
        [2, 'bob', 20],
        [3, 'ann', 10],
      ]);
    }
  });

  it("/metrics counts every worker's submissions whichever worker takes the scrape, and the deployment's gauges once", async () => {
    for (const url of [urlA, urlA, urlA, urlA, urlB]) {
      const { status, text } = await scrape(url);
      expect(status).toBe(200);
      const submissions = samples(text, 'leaderboard_submissions_total');
      const tally = answered.get(url) ?? { accepted: 0, duplicate: 0 };
      expect(submissions.get('leaderboard_submissions_total{outcome="accepted"}') ?? 0).toBe(tally.accepted);
      expect(submissions.get('leaderboard_submissions_total{outcome="duplicate"}') ?? 0).toBe(tally.duplicate);
      // Measured for the deployment, not per process: one sample, this worker's, never a sum over workers.
      expect(samples(text, 'leaderboard_index_backlog').size).toBe(1);
      expect(text.match(/^# TYPE leaderboard_index_drift gauge$/gm)).toHaveLength(1);
    }
  });

  it('the primary replaces a killed worker, and SIGTERM stops every worker cleanly with exit code 0', async () => {
    const first = a
      .lines()
      .filter(isListening)
      .map((line) => line.pid as number);
    const killed = first[0]!;
    process.kill(killed, 'SIGKILL');
    const died = await a.logged((line) => line.msg === 'worker died unexpectedly; replacing it');
    expect(died).toMatchObject({ workerPid: killed, signal: 'SIGKILL' });
    const replacement = await a.logged((line) => isListening(line) && !first.includes(line.pid as number));
    expect(replacement.url).toBe(urlA);
    const workers = [first[1]!, replacement.pid as number];
    for (let i = 0; i < 4; i++) expect((await top(urlA, 'cached')).entries[0]!.player.id).toBe('via-a');

    // A WebSocket viewer is told the server is going away, as a single process tells it.
    const viewer = watch(urlA, 'live', 3);
    await until(() => viewer.views.length > 0, 10_000, 'the first view', 20);
    a.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    expect(await b.exited).toBe(0);
    for (const pid of workers) {
      expect(a.lines().some((line) => line.pid === pid && line.msg === 'stopped')).toBe(true);
      expect(alive(pid)).toBe(false);
    }
    expect(
      a
        .lines()
        .filter((line) => line.msg === 'worker stopped')
        .map((line) => line.code),
    ).toEqual([0, 0]);
    expect(a.lines().at(-1)).toMatchObject({ msg: 'every worker stopped', code: 0 });
    expect(b.lines().some((line) => line.msg === 'stopped')).toBe(true);
    await until(() => viewer.closed.code !== undefined, 10_000, 'the close', 20);
    expect(viewer.closed.code).toBe(1001);
    await viewer.close();
  });
});

describe('starting several processes', () => {
  const id = randomBytes(4).toString('hex');
  const missing = `lb_workers_test_${id}`;

  afterAll(async () => {
    const sql = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    await sql`drop database if exists ${sql(missing)} with (force)`;
    await sql.end();
  });

  it('reads WORKERS: 1 by default, a whole number from 1', () => {
    expect(loadConfig({}).WORKERS).toBe(1);
    expect(loadConfig({ WORKERS: '4' }).WORKERS).toBe(4);
    for (const bad of ['0', '-1', '1.5', 'many']) expect(() => loadConfig({ WORKERS: bad })).toThrow(/WORKERS/);
  });

  it('lets several processes create a missing database at the same moment (each starts; none dies on the race)', async () => {
    const databaseUrl = new URL(POSTGRES_URL);
    databaseUrl.pathname = `/${missing}`;
    // Workers start together: two CREATE DATABASE under way at once fail with 23505, not 42P04.
    const attempts = await Promise.allSettled(Array.from({ length: 4 }, () => ensureDatabase(databaseUrl.toString())));
    expect(attempts.filter((attempt) => attempt.status === 'rejected')).toEqual([]);
  });

  it('gives up loudly, exiting 1, when the workers keep dying', async () => {
    // Three workers, so that six deaths come in two rounds of starts.
    const service = startService({ PORT: '0', WORKERS: '3', DATABASE_URL: 'postgres://postgres@127.0.0.1:1/unreachable' });
    expect(await service.exited).toBe(1);
    const lines = service.lines();
    // Replaced with a growing backoff, five times, then the sixth death in a minute ends it.
    const delays = lines.filter((line) => line.msg === 'worker died unexpectedly; replacing it').map((line) => line.restartInMs);
    expect(delays).toEqual([100, 200, 400, 800, 1_600]);
    expect(lines.find((line) => line.level === 60)).toMatchObject({ msg: 'workers keep dying; giving up: stopping every worker and exiting 1', crashes: 6 });
    expect(lines.filter(isListening)).toEqual([]);
    // Two rounds of worker starts: far longer than a test on a loaded machine is usually given.
  }, 180_000);
});
