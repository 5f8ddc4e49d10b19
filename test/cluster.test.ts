import calculateSlot from 'cluster-key-slot';
import { type Client, createClient } from 'graphql-ws';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ConfigError, loadConfig, redisTarget } from '../src/config.js';
import {
  type ModelBoard,
  type ModelBucket,
  type ModelResult,
  allMatch,
  bucketRef,
  expectBucketMatches,
  expectedRows,
  modelBuckets,
  pagesOf,
  submitAll,
  submitInput,
} from './helpers/board-views.js';
import { seeded } from './helpers/random.js';
import { type ClusterNodeState, type RedisClusterFixture, startRedisCluster } from './helpers/redis-cluster.js';
import { startService } from './helpers/service-process.js';
import { runCli } from './helpers/cli.js';
import { movableClock } from './helpers/clock.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';

/**
 * The service on a real local Redis Cluster (three masters, test/helpers/redis-cluster.ts), as
 * REDIS_CLUSTER_NODES runs it: every read equals a plain model of the results
 * (helpers/board-views.ts), topChanged crosses processes over sharded pub/sub, rebuilds work, and
 * a master that fails over, or comes back empty, is noticed through its own generation marker and
 * healed (its buckets alone rebuilt) with no acknowledged result lost.
 */

const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`;
const REBUILD = `mutation($board: ID!, $period: Period, $bucket: String, $region: String) { rebuildBoard(board: $board, period: $period, bucket: $bucket, region: $region) }`;

interface BoardSpec extends ModelBoard {
  shards: number;
}

/** `count` results over `players` players, each at its own millisecond of today (UTC), some with a region. */
function results(board: ModelBoard, seed: number, count: number, players: number, prefix: string): ModelResult[] {
  const next = seeded(seed);
  const score = () => (board.aggregate === 'SUM' ? 1 + Math.floor(next() * 40) : 1 + Math.floor(next() * 400) * 5);
  const now = Date.now();
  const midnight = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate());
  return Array.from({ length: count }, (_, i) => ({
    board: board.id,
    playerId: `${prefix}${String(Math.floor(next() * players)).padStart(3, '0')}`,
    matchId: `${prefix}-m${seed}-${i}`,
    score: score(),
    region: board.regions.length && next() < 0.5 ? board.regions[Math.floor(next() * board.regions.length)]! : null,
    achievedAt: new Date(Math.max(now - Math.floor(next() * 3_600_000), midnight) + i),
  }));
}

async function createBoard(t: TestApp, board: BoardSpec, extra: Record<string, unknown> = {}) {
  const { shards, ...model } = board;
  const response = await t.admin(CREATE, {
    input: {
      id: model.id,
      title: model.id,
      order: model.order,
      aggregate: model.aggregate,
      maxScore: 5_000,
      periods: model.periods,
      regions: model.regions,
      shards,
      ...extra,
    },
  });
  expect(response.errors).toBeUndefined();
}

/** Every sorted-set key of a bucket as keys.ts lays them out (before the key prefix): the whole bucket is the hash tag. */
function keysOf(bucket: { board: { id: string }; period: string; label: string; region: string | null }, shards: number): string[] {
  const tag = `${bucket.board.id}:${bucket.period}:${bucket.label}${bucket.region === null ? '' : `:${bucket.region}`}`;
  return shards === 1 ? [`lb:{${tag}}`] : Array.from({ length: shards }, (_, i) => `lb:{${tag}#${i}}`);
}

const serves = (node: ClusterNodeState, key: string) => {
  const slot = calculateSlot(key);
  return node.slots.some(([from, to]) => from <= slot && slot <= to);
};

/** The master serving a key now. */
async function masterOf(cluster: RedisClusterFixture, key: string): Promise<ClusterNodeState> {
  return (await cluster.state()).find((node) => node.role === 'master' && serves(node, key))!;
}

/** A client of one node of the cluster, for what the test asks a node itself. */
async function onNode<T>(node: { host: string; port: number }, use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({ host: node.host, port: node.port, lazyConnect: true, maxRetriesPerRequest: 0 });
  await redis.connect();
  try {
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

/** Every result PostgreSQL holds for these boards, as `board/match/player` strings. */
async function loggedResults(databaseUrl: string): Promise<Set<string>> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<{ id: string }[]>`select board_id || '/' || match_id || '/' || player_id as id from results`;
    return new Set(rows.map((row) => row.id));
  } finally {
    await sql.end();
  }
}

interface View {
  entries: { score: number; player: { id: string } }[];
}

/** One graphql-ws subscription to a board's top, collecting every view. */
function watch(t: TestApp, board: string, limit: number) {
  const client: Client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  const views: [string, number][][] = [];
  const stop = client.subscribe<{ topChanged: View }>(
    { query: `subscription($b: ID!, $l: Int!) { topChanged(board: $b, limit: $l) { entries { score player { id } } } }`, variables: { b: board, l: limit } },
    {
      next: (result) => void (result.data && views.push(result.data.topChanged.entries.map((entry) => [entry.player.id, entry.score]))),
      error: () => undefined,
      complete: () => undefined,
    },
  );
  return {
    views,
    reach: (rows: [string, number][]) =>
      until(() => views.some((view) => JSON.stringify(view) === JSON.stringify(rows)), 5_000, `view ${JSON.stringify(rows)}`),
    async close() {
      stop();
      await client.dispose();
    },
  };
}

const SPREAD: BoardSpec = {
  id: 'spread',
  order: 'HIGH_FIRST',
  aggregate: 'BEST',
  periods: ['ALL_TIME', 'MONTHLY', 'WEEKLY', 'DAILY'],
  regions: ['eu', 'us'],
  shards: 1,
};
const SUMS: BoardSpec = { id: 'sums', order: 'LOW_FIRST', aggregate: 'SUM', periods: ['ALL_TIME', 'DAILY'], regions: ['eu'], shards: 1 };
const SPLIT: BoardSpec = { id: 'split', order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME', 'DAILY'], regions: [], shards: 3 };
const BOARDS = [SPREAD, SUMS, SPLIT];
const shardsOf = (id: string) => BOARDS.find((board) => board.id === id)!.shards;

describe('the service on a three-master Redis Cluster with a replica each', () => {
  let cluster: RedisClusterFixture;
  let t: TestApp;
  let second: TestApp;
  let submitted: ModelResult[] = [];
  const buckets = () => modelBuckets(BOARDS, submitted);
  // Both processes' clock: the system's, moved on to age the top caches' views instead of sleeping.
  const clock = movableClock();

  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
    t = await startTestApp({ redisCluster: cluster, now: clock.now });
    second = await startTestApp({ redisCluster: cluster, now: clock.now, shareStoresOf: { databaseUrl: t.databaseUrl, keyPrefix: t.keyPrefix } });
    for (const board of BOARDS) await createBoard(t, board);
  }, 60_000);
  afterAll(async () => {
    await second?.close();
    await t?.close();
    await cluster?.stop();
  });

  it(
    'answers every read (top, size, standing, around, friends, pages) exactly as the model, through either process; the buckets spread over every master',
    { timeout: 90_000 },
    async () => {
      submitted = [...results(SPREAD, 1, 300, 90, 'p'), ...results(SUMS, 2, 200, 60, 's'), ...results(SPLIT, 3, 250, 80, 'x')];
      await submitAll(t, submitted.slice(0, 400), 50);
      await submitAll(second, submitted.slice(400), 50);
      const friends = { p001: ['p002', 'p010', 'p050', 'nobody'], s003: ['s004', 's005'], x007: ['x001', 'x002', 'x070'] };
      for (const [id, list] of Object.entries(friends)) {
        expect((await t.server(`mutation($id: ID!, $f: [ID!]!) { setFriends(playerId: $id, friendIds: $f) }`, { id, f: list })).errors).toBeUndefined();
      }

      const model = buckets();
      expect(model.length).toBe(12 + 4 + 2);
      for (const bucket of model) {
        const players = bucket.ranked.length
          ? [bucket.ranked[0]!.playerId, bucket.ranked[Math.floor(bucket.ranked.length / 2)]!.playerId, bucket.ranked.at(-1)!.playerId, 'absent']
          : ['absent'];
        const probe = { players, friendsOf: Object.fromEntries(Object.entries(friends).filter(([id]) => id[0] === bucket.board.id[0])) };
        await expectBucketMatches(t, bucket, probe);
        await expectBucketMatches(second, bucket, probe);
      }

      // Different buckets (and a sharded bucket's shards) land on different masters.
      const masters = new Set<string>();
      for (const bucket of model) for (const key of keysOf(bucket, shardsOf(bucket.board.id))) masters.add((await masterOf(cluster, key)).id);
      expect(masters.size).toBe(3);
      for (const node of cluster.masters) expect(await onNode(node, (redis) => redis.dbsize())).toBeGreaterThan(0);

      const ready = await fetch(`${t.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ postgres: 'up', postgresHost: expect.any(String) as unknown, redis: 'up', submissions: 'ok' });
    },
  );

  it('topChanged reaches the viewers of both processes, over sharded pub/sub on the masters serving the bucket', async () => {
    await createBoard(t, { id: 'live', order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME'], regions: [], shards: 1 }, { topSize: 3 });
    await createBoard(t, { id: 'live3', order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME'], regions: [], shards: 3 }, { topSize: 3 });
    for (const board of ['live', 'live3']) {
      const onSecond = watch(second, board, 3);
      const onFirst = watch(t, board, 3);
      await until(() => onSecond.views.length > 0 && onFirst.views.length > 0, 5_000, 'the first views');
      expect(onSecond.views[0]).toEqual([]);

      // Each process subscribed once to each shard's channel, on the master serving its slot.
      for (const key of keysOf({ board: { id: board }, period: 'ALL_TIME', label: 'all', region: null }, board === 'live' ? 1 : 3)) {
        const channel = `${t.keyPrefix}${key}#top`;
        const [, subscribers] = (await onNode(await masterOf(cluster, channel), (redis) => redis.pubsub('SHARDNUMSUB', channel))) as [string, number];
        expect(Number(subscribers)).toBe(2);
      }

      const submit = (app: TestApp, playerId: string, score: number) =>
        app.server(`mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }`, {
          input: { board, playerId, score, matchId: `${board}-${playerId}-${score}` },
        });
      await submit(t, 'ann', 7);
      await onSecond.reach([['ann', 7]]);
      await submit(second, 'bob', 9);
      await submit(second, 'cid', 8);
      await submit(t, 'dan', 1);
      await onFirst.reach([
        ['bob', 9],
        ['cid', 8],
        ['ann', 7],
      ]);
      await onSecond.reach([
        ['bob', 9],
        ['cid', 8],
        ['ann', 7],
      ]);
      await onFirst.close();
      await onSecond.close();
    }
  });

  it('rebuildBoard and the CLI (REDIS_CLUSTER_NODES) rebuild a bucket on the cluster', async () => {
    const model = buckets();
    const allTime = model.find((b) => b.board.id === 'spread' && b.period === 'ALL_TIME' && b.region === null)!;
    const [key] = keysOf(allTime, 1);
    await t.redis.zadd(key!, 7, 'ghost');
    await t.redis.zrem(key!, allTime.ranked[0]!.playerId);
    expect(await allMatch(t, [allTime])).toBe(false);
    expect((await t.admin(REBUILD, { board: 'spread' })).errors).toBeUndefined();
    await expectBucketMatches(t, allTime, { players: ['ghost', allTime.ranked[0]!.playerId], friendsOf: {} });

    const daily = model.find((b) => b.board.id === 'split' && b.period === 'DAILY')!;
    for (const shardKey of keysOf(daily, 3)) await t.redis.zadd(shardKey, 1, `ghost-${shardKey}`);
    expect(await allMatch(t, [daily])).toBe(false);
    const { stdout } = await runCli(t, ['rebuild', '--board', 'split', '--period', 'DAILY', '--bucket', daily.label], {
      REDIS_CLUSTER_NODES: cluster.nodesSetting,
    });
    expect(stdout).toMatch(new RegExp(`: ${daily.ranked.length} players ranked in \\d+\\.\\d\\d s\\n$`));
    await expectBucketMatches(t, daily, { players: [daily.ranked[0]!.playerId], friendsOf: {} });
  }, 60_000);

  it('the service process (npm start) runs on the cluster with REDIS_CLUSTER_NODES, and stops cleanly', { timeout: 60_000 }, async () => {
    const allTime = buckets().find((b) => b.board.id === 'sums' && b.period === 'ALL_TIME' && b.region === null)!;
    const service = startService({
      DATABASE_URL: t.databaseUrl,
      REDIS_CLUSTER_NODES: cluster.nodesSetting,
      REDIS_KEY_PREFIX: t.keyPrefix,
      PORT: '0',
      WORKERS: '1',
    });
    const url = await service.listening;
    const ready = await fetch(`${url}/readyz`);
    expect(await ready.json()).toEqual({ postgres: 'up', postgresHost: expect.any(String) as unknown, redis: 'up', submissions: 'ok' });
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ top(board: "sums", limit: 5) { size entries { rank score player { id } } } }` }),
    });
    const top = (await response.json()) as { data: { top: { size: number; entries: { rank: number; score: number; player: { id: string } }[] } } };
    expect(top.data.top).toEqual({
      size: allTime.ranked.length,
      entries: expectedRows(allTime)
        .slice(0, 5)
        .map((row) => ({ rank: row.rank, score: row.score, player: { id: row.player } })),
    });
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });

  it(
    'a master killed: its replica takes over, the buckets with a key on it are rebuilt, and no acknowledged result is lost',
    { timeout: 120_000 },
    async () => {
      const target = await masterOf(cluster, keysOf({ board: SPREAD, period: 'ALL_TIME', label: 'all', region: null }, 1)[0]!);
      const before = new Map(t.app.parts.indexGeneration.nodes().map((node) => [node.marker, node.generation]));
      expect([...before.values()].every((generation) => generation !== null)).toBe(true);
      // A viewer of a bucket on that master, subscribed (SSUBSCRIBE) there before it dies.
      const viewer = watch(second, 'spread', 3);
      await until(() => viewer.views.length > 0, 5_000, 'the first view');

      // Submissions go on, ten batches of five at a time through both processes, while the master dies.
      const during = [...results(SPREAD, 11, 150, 120, 'p'), ...results(SUMS, 12, 100, 70, 's'), ...results(SPLIT, 13, 150, 90, 'x')]
        .map((r) => ({ ...r, matchId: `${r.matchId}-failover` }))
        .sort((a, b) => a.achievedAt.getTime() - b.achievedAt.getTime());
      const acknowledged: ModelResult[] = [];
      let next = 0;
      const lanes = [t, second, t, second].map(async (app) => {
        while (next < during.length) {
          const batch = during.slice(next, next + 5);
          next += 5;
          const response = await app.server<{ submitScores: unknown[] }>(
            `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`,
            {
              inputs: batch.map(submitInput),
            },
          );
          // Redis trouble never refuses a submission: it is recorded and answered from PostgreSQL.
          expect(response.errors).toBeUndefined();
          acknowledged.push(...batch);
        }
      });
      // The master dies once submissions are flowing, with most of them still to come.
      const failover = (async () => {
        await until(() => acknowledged.length >= 20, 30_000, 'the first submissions acknowledged', 10);
        return cluster.failOverSlot(target.slots[0]![0]);
      })();
      const [{ promoted }] = await Promise.all([failover, ...lanes]);
      expect(promoted.id).not.toBe(target.id);
      submitted = [...submitted, ...acknowledged];

      // Every acknowledged result is in PostgreSQL...
      const logged = await loggedResults(t.databaseUrl);
      for (const r of acknowledged) expect(logged.has(`${r.board}/${r.matchId}/${r.playerId}`), r.matchId).toBe(true);

      // ...and, once healed, in the index with the right rank, through both processes.
      const model = buckets();
      await until(async () => (await allMatch(t, model)) && (await allMatch(second, model)), 60_000, 'the index healed');
      // Pages are read uncached; `top` comes through each process's top cache, which may serve a
      // view up to a second old (read before the catch-up's last writes): age it past that bound.
      clock.advance(1_100);
      for (const bucket of model) await expectBucketMatches(second, bucket, { players: bucket.ranked.slice(0, 2).map((e) => e.playerId), friendsOf: {} });

      // The promoted master got a new generation (its buckets were rebuilt); the others kept theirs.
      await until(() => t.app.parts.indexGeneration.state() === 'ready' && second.app.parts.indexGeneration.state() === 'ready', 10_000, 'ready again');
      const after = t.app.parts.indexGeneration.nodes();
      const moved = after.find((node) => node.address.endsWith(`:${promoted.port}`))!;
      expect(moved.generation).not.toBe(before.get(moved.marker));
      for (const node of after.filter((n) => n !== moved)) expect(node.generation).toBe(before.get(node.marker));

      // The old master, back empty, rejoins as a replica; nothing changes for the index.
      await cluster.restart(target);
      await expectBucketMatches(t, model[0]!, { players: [], friendsOf: {} });

      // The viewer's subscription moved to the promoted master: a new leader reaches it.
      const champion = { board: 'spread', playerId: 'champion', matchId: 'champion-1', score: 4_999, region: null, achievedAt: new Date() };
      await submitAll(t, [champion]);
      await until(() => viewer.views.at(-1)?.[0]?.[0] === 'champion', 5_000, 'the new leader, seen by the viewer');
      expect(viewer.views.at(-1)![0]).toEqual(['champion', 4_999]);
      await viewer.close();
    },
  );
});

describe('a master restarted empty (no replicas): noticed through its own marker, only its buckets rebuilt', () => {
  let cluster: RedisClusterFixture;
  let t: TestApp;
  let second: TestApp;
  let direct: postgres.Sql;
  let lock: postgres.ReservedSql;

  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
    t = await startTestApp({ redisCluster: cluster });
    second = await startTestApp({ redisCluster: cluster, shareStoresOf: { databaseUrl: t.databaseUrl, keyPrefix: t.keyPrefix } });
    direct = postgres(t.databaseUrl, { max: 2, onnotice: () => {} });
    lock = await direct.reserve();
    for (const board of BOARDS) await createBoard(t, board);
  }, 60_000);
  afterAll(async () => {
    lock?.release();
    await second?.close();
    await t?.close();
    await direct?.end();
    await cluster?.stop();
  });

  it(
    "reads of its buckets are refused until rebuilt, the other masters' buckets answer throughout, and every result is back",
    { timeout: 120_000 },
    async () => {
      const submitted = [...results(SPREAD, 21, 300, 90, 'p'), ...results(SUMS, 22, 200, 60, 's'), ...results(SPLIT, 23, 250, 80, 'x')];
      await submitAll(t, submitted, 50);
      const model = modelBuckets(BOARDS, submitted);
      expect(await allMatch(t, model)).toBe(true);

      const target = await masterOf(cluster, keysOf({ board: SPREAD, period: 'ALL_TIME', label: 'all', region: null }, 1)[0]!);
      const holds = (bucket: ModelBucket) => keysOf(bucket, shardsOf(bucket.board.id)).some((key) => serves(target, key));
      const lost = model.filter(holds);
      const kept = model.filter((bucket) => !holds(bucket));
      expect(lost.length).toBeGreaterThan(0);
      expect(kept.length).toBeGreaterThan(0);
      const before = new Map(t.app.parts.indexGeneration.nodes().map((node) => [node.marker, node.generation]));

      // The recovery waits on its lock while the test holds it, as it would behind another process.
      await lock`select pg_advisory_lock(7361203)`;
      await cluster.restartMasterEmpty(target.slots[0]![0]);
      const address = `${target.host}:${target.port}`;
      const states = (app: TestApp) => app.app.parts.indexGeneration.nodes().map((node) => (node.address === address ? node.state : `other:${node.state}`));
      await until(
        () => [t, second].every((app) => JSON.stringify(states(app).sort()) === JSON.stringify(['other:ready', 'other:ready', 'recovering'])),
        10_000,
        'both apps noticed, on that master alone',
      );

      // The restarted master's buckets are refused (never read from the empty node); the others answer, right.
      for (const app of [t, second]) {
        for (const bucket of lost)
          expect((await pagesOf(app, bucketRef(bucket))).code, `${bucket.board.id} ${bucket.period} ${bucket.region}`).toBe('UNAVAILABLE');
        expect(await allMatch(app, kept)).toBe(true);
      }

      // Results keep being recorded meanwhile; the rebuild carries them.
      const meanwhile = [...results(SPREAD, 24, 60, 120, 'p'), ...results(SPLIT, 25, 60, 90, 'x')].map((r) => ({ ...r, matchId: `${r.matchId}-meanwhile` }));
      await submitAll(second, meanwhile, 20);
      const all = modelBuckets(BOARDS, [...submitted, ...meanwhile]);

      await lock`select pg_advisory_unlock(7361203)`;
      await until(async () => (await allMatch(t, all)) && (await allMatch(second, all)), 30_000, 'every bucket back');
      await until(() => t.app.parts.indexGeneration.state() === 'ready' && second.app.parts.indexGeneration.state() === 'ready', 10_000, 'ready again');

      // Only the restarted master got a new generation.
      const after = t.app.parts.indexGeneration.nodes();
      expect(after.filter((node) => node.generation !== before.get(node.marker)).map((node) => node.address)).toEqual([address]);
      for (const bucket of all.slice(0, 4)) await expectBucketMatches(t, bucket, { players: bucket.ranked.slice(0, 2).map((e) => e.playerId), friendsOf: {} });
    },
  );

  it('/readyz says Redis is down while a master with no replica is away, and up once it is back', { timeout: 60_000 }, async () => {
    const readiness = async () => {
      const response = await fetch(`${t.url}/readyz`);
      // Which PostgreSQL host the pool writes to is not this test's concern.
      const { postgresHost: _host, ...body } = (await response.json()) as Record<string, unknown>;
      return { status: response.status, body };
    };
    expect(await readiness()).toEqual({ status: 200, body: { postgres: 'up', redis: 'up', submissions: 'ok' } });
    const [master] = cluster.masters;
    await cluster.kill(master!);
    await until(
      async () => JSON.stringify(await readiness()) === JSON.stringify({ status: 503, body: { postgres: 'up', redis: 'down', submissions: 'ok' } }),
      20_000,
      'readiness down',
    );
    await cluster.restart(master!);
    await until(async () => (await readiness()).status === 200, 20_000, 'readiness up again');
  });
});

describe('REDIS_CLUSTER_NODES', () => {
  it('switches to the cluster when set, and is checked with every other variable', () => {
    const config = loadConfig({ REDIS_CLUSTER_NODES: ' 10.0.0.1:7000 , redis-b:7001,' });
    expect(config.REDIS_CLUSTER_NODES).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: 'redis-b', port: 7001 },
    ]);
    expect(redisTarget(config)).toEqual({ cluster: config.REDIS_CLUSTER_NODES });
    expect(redisTarget(loadConfig({}))).toBe('redis://127.0.0.1:6379');
    expect(redisTarget(loadConfig({ REDIS_CLUSTER_NODES: '' }))).toBe('redis://127.0.0.1:6379');

    for (const bad of ['10.0.0.1', 'a:0', 'a:70000', 'a:1,b', ',', 'a b:1']) {
      let error: unknown;
      try {
        loadConfig({ REDIS_CLUSTER_NODES: bad, PORT: 'eighty' });
      } catch (caught) {
        error = caught;
      }
      expect(error, bad).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems.join('\n');
      expect(problems, bad).toMatch(/^REDIS_CLUSTER_NODES/m);
      expect(problems, bad).toMatch(/^PORT/m);
    }
  });
});
