import { type Client, createClient } from 'graphql-ws';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ConfigError, loadConfig } from '../src/config.js';
import { type OwnRedis, startOwnRedis } from './helpers/redis-server.js';
import { type RedisClusterFixture, startRedisCluster } from './helpers/redis-cluster.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';

/**
 * Redis read replicas (issue 54, part 3): with REDIS_REPLICA_URLS (or a Cluster's replicas) the
 * reads that may be a little stale go to a replica that keeps up, while writes and a submission's
 * own answer stay on the master. The replica is made to differ from its master on purpose (a
 * member written on the replica alone), so which node answered is seen in the answer itself: the
 * master's value or the replica's. A replica cut off from its master is skipped once its lag passes
 * REDIS_REPLICA_MAX_LAG_MS; a killed one costs no read an error; topChanged still delivers a change
 * the replica did not have when it was heard. On a Cluster, each node's command counts show where
 * the reads went.
 */

const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`;
const SUBMIT = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate standings { period standing { rank score } } } }`;
const STANDING = `query($board: ID!, $player: ID!) { standing(board: $board, playerId: $player) { rank score } }`;
const AROUND = `query($board: ID!, $player: ID!) { around(board: $board, playerId: $player, radius: 3) { rank player { id } } }`;
const PAGE = `query($board: ID!) { standings(board: $board, first: 10) { edges { node { rank player { id } } } } }`;
const TOP = `query($board: ID!) { top(board: $board, limit: 10) { entries { rank score player { id } } } }`;

interface Submitted {
  submitScore: { duplicate: boolean; standings: { period: string; standing: { rank: number; score: number } }[] };
}

async function createBoard(t: TestApp, id: string) {
  const answer = await t.admin(CREATE, { input: { id, title: id, maxScore: 1_000_000, periods: ['ALL_TIME'] } });
  expect(answer.errors).toBeUndefined();
}

async function submit(t: TestApp, board: string, playerId: string, score: number, matchId: string) {
  const answer = await t.server<Submitted>(SUBMIT, { input: { board, playerId, score, matchId } });
  expect(answer.errors).toBeUndefined();
  return answer.data!.submitScore;
}

/** The player's standing as a read serves it (null: not ranked), failing on any error. */
async function standing(t: TestApp, board: string, player: string) {
  const answer = await t.gql<{ standing: { rank: number; score: number } | null }>(STANDING, { board, player });
  expect(answer.errors).toBeUndefined();
  return answer.data!.standing;
}

async function client(port: number): Promise<Redis> {
  const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0 });
  // A killed node's client reconnects quietly until it is disconnected.
  redis.on('error', () => undefined);
  await redis.connect();
  return redis;
}

/** Whether a replica's link to its master is up. */
const linked = async (replica: Redis) => /master_link_status:up/.test(await replica.info('replication'));

/** The one sorted set of the test's boards on a node (each test board has one bucket, ALL_TIME). */
async function bucketKeyOn(redis: Redis, keyPrefix: string): Promise<string | undefined> {
  for (const key of await redis.keys(`${keyPrefix}lb:{*`)) if ((await redis.type(key)) === 'zset') return key;
  return undefined;
}

/**
 * Puts a member on the replica alone (its master never has it): the replica is made writable for
 * this, as no replica in production is. The member ties the bucket's top (same packed value), so
 * it is ranked wherever the replica answers. Answers the bucket's key.
 */
async function divergeReplica(replica: Redis, keyPrefix: string, top: string, member: string): Promise<string> {
  const key = await bucketKeyOn(replica, keyPrefix);
  expect(key).toBeDefined();
  const packed = await replica.zscore(key!, top);
  expect(packed).not.toBeNull();
  await replica.config('SET', 'replica-read-only', 'no');
  await replica.zadd(key!, packed!, member);
  await replica.config('SET', 'replica-read-only', 'yes');
  return key!;
}

describe('REDIS_REPLICA_URLS and REDIS_REPLICA_MAX_LAG_MS', () => {
  it('are validated: redis:// URLs, a positive lag', () => {
    const base = { DATABASE_URL: 'postgres://u@h:5432/db' };
    const config = loadConfig({ ...base, REDIS_REPLICA_URLS: 'redis://a:6380, redis://b:6381' });
    expect(config.REDIS_REPLICA_URLS).toEqual(['redis://a:6380', 'redis://b:6381']);
    expect(config.REDIS_REPLICA_MAX_LAG_MS).toBe(1_000);
    expect(config.REDIS_CLUSTER_REPLICA_READS).toBe(false);
    expect(() => loadConfig({ ...base, REDIS_REPLICA_URLS: 'http://a:6380' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, REDIS_REPLICA_MAX_LAG_MS: '0' })).toThrow(ConfigError);
  });
});

describe('one Redis with a read replica', () => {
  let master: OwnRedis;
  let replica: OwnRedis;
  let onReplica: Redis;
  let t: TestApp;

  beforeAll(async () => {
    master = await startOwnRedis();
    replica = await startOwnRedis({ replicaOf: master.port });
    onReplica = await client(replica.port);
    await until(() => linked(onReplica), 10_000, 'the replica linked to its master');
    t = await startTestApp({ redisUrl: master.url, replicas: { urls: [replica.url], maxLagMs: 1_000, heartbeatMs: 100 } });
    await createBoard(t, 'rep');
    await submit(t, 'rep', 'ann', 900, 'm1');
    await submit(t, 'rep', 'bob', 700, 'm2');
    await submit(t, 'rep', 'cy', 500, 'm3');
    await until(async () => t.replicaReads!.states().every((state) => state.fresh), 10_000, 'the replica fresh');
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    onReplica?.disconnect();
    await replica?.kill();
    await master?.kill();
  });

  /** The replica's gauges as /metrics gives them: whether reads go to it, and its lag (undefined: no series). */
  async function replicaGauges(): Promise<{ reads: number | undefined; lagSeconds: number | undefined }> {
    const text = await (await fetch(`${t.url}/metrics`)).text();
    const value = (name: string) => {
      const match = new RegExp(`^${name}\\{replica="127\\.0\\.0\\.1:${replica.port}"\\} (\\S+)$`, 'm').exec(text);
      return match ? Number(match[1]) : undefined;
    };
    return { reads: value('leaderboard_redis_replica_reads'), lagSeconds: value('leaderboard_redis_replica_lag_seconds') };
  }

  it('says in /metrics which replica takes reads, and how far behind it is', async () => {
    const { reads, lagSeconds } = await replicaGauges();
    expect(reads).toBe(1);
    // At most the bound: one heartbeat period (100 ms) and its round trip on an idle local replica.
    expect(lagSeconds).toBeGreaterThanOrEqual(0);
    expect(lagSeconds).toBeLessThan(1);
  });

  it('serves standing, around, pages and top from the replica, and each submission its own answer from the master', async () => {
    // Nothing read yet: the replica holds what the master holds.
    expect(await standing(t, 'rep', 'ghost')).toBeNull();
    await divergeReplica(onReplica, t.keyPrefix, 'ann', 'ghost');

    // Each read that may be a little stale is answered by the replica: the ghost is there.
    expect((await standing(t, 'rep', 'ghost'))?.score).toBe(900);
    const around = await t.gql<{ around: { player: { id: string } }[] }>(AROUND, { board: 'rep', player: 'bob' });
    expect(around.data!.around.map((row) => row.player.id)).toContain('ghost');
    const page = await t.gql<{ standings: { edges: { node: { player: { id: string } } }[] } }>(PAGE, { board: 'rep' });
    expect(page.data!.standings.edges.map((edge) => edge.node.player.id)).toContain('ghost');
    const top = await t.gql<{ top: { entries: { player: { id: string } }[] } }>(TOP, { board: 'rep' });
    expect(top.data!.top.entries.map((entry) => entry.player.id)).toContain('ghost');
    expect((await t.server(`mutation { setFriends(playerId: "cy", friendIds: ["ghost", "bob"]) }`)).errors).toBeUndefined();
    const friends = await t.gql<{ friends: { player: { id: string } }[] }>(`{ friends(board: "rep", playerId: "cy") { player { id } } }`);
    expect(friends.data!.friends.map((row) => row.player.id).sort()).toEqual(['bob', 'cy', 'ghost']);

    // A submission's places come from the master, which has no ghost: dee is second there, third on the replica.
    const first = await submit(t, 'rep', 'dee', 800, 'm4');
    expect(first.standings).toEqual([{ period: 'ALL_TIME', standing: { rank: 2, score: 800 } }]);
    await until(async () => (await standing(t, 'rep', 'dee')) !== null, 5_000, 'dee on the replica');
    expect(await standing(t, 'rep', 'dee')).toEqual({ rank: 3, score: 800 });
    // Its replay answers as the first call would now: from the master too.
    const replay = await submit(t, 'rep', 'dee', 800, 'm4');
    expect(replay.duplicate).toBe(true);
    expect(replay.standings).toEqual([{ period: 'ALL_TIME', standing: { rank: 2, score: 800 } }]);
  });

  it('skips a replica cut off from its master once its lag passes the bound, and comes back to it once it catches up', async () => {
    expect(await standing(t, 'rep', 'ghost')).not.toBeNull();
    const dead = await startOwnRedis();
    const deadPort = dead.port;
    await dead.kill();
    // The replica still answers, but takes nothing more from its master.
    const lagAtCut = t.replicaReads!.states()[0]!.lagMs!;
    await onReplica.replicaof('127.0.0.1', deadPort);
    const cutAt = Date.now();
    await submit(t, 'rep', 'eve', 600, 'm5');
    await until(async () => !t.replicaReads!.states()[0]!.fresh, 5_000, 'the replica skipped');
    // Skipped for its lag, not for the link: no sooner than its last heartbeat grew older than the bound.
    expect(Date.now() - cutAt).toBeGreaterThanOrEqual(1_000 - lagAtCut - 20);
    // Reads go to the master now: eve (written after the cut) is there, the ghost is not.
    expect(await standing(t, 'rep', 'eve')).toEqual({ rank: 4, score: 600 });
    expect(await standing(t, 'rep', 'ghost')).toBeNull();
    expect(await onReplica.zscore((await bucketKeyOn(onReplica, t.keyPrefix))!, 'eve')).toBeNull();

    await onReplica.replicaof('127.0.0.1', master.port);
    await until(() => linked(onReplica), 10_000, 'the replica linked again');
    await until(async () => t.replicaReads!.states()[0]!.fresh, 5_000, 'the replica fresh again');
    // It took reads again: a member on it alone shows.
    await divergeReplica(onReplica, t.keyPrefix, 'ann', 'ghost2');
    expect(await standing(t, 'rep', 'ghost2')).not.toBeNull();
  });

  it('moves the reads of a killed replica to the master with no error', async () => {
    expect(await standing(t, 'rep', 'ghost2')).not.toBeNull();
    await replica.kill();
    // At once, before any heartbeat noticed: every read still answers, from the master.
    const answers = await Promise.all(Array.from({ length: 10 }, () => t.gql(STANDING, { board: 'rep', player: 'ann' })));
    for (const answer of answers) expect(answer).toEqual({ data: { standing: { rank: 1, score: 900 } } });
    expect(await standing(t, 'rep', 'ghost2')).toBeNull();
    await until(async () => !t.replicaReads!.states()[0]!.fresh, 5_000, 'the killed replica skipped');
    expect(await standing(t, 'rep', 'ann')).toEqual({ rank: 1, score: 900 });
    expect(await replicaGauges()).toEqual({ reads: 0, lagSeconds: undefined });
  });
});

describe('a read that fails on a replica', () => {
  let master: OwnRedis;
  let replica: OwnRedis;
  let onReplica: Redis;
  let t: TestApp;

  beforeAll(async () => {
    master = await startOwnRedis();
    replica = await startOwnRedis({ replicaOf: master.port });
    onReplica = await client(replica.port);
    await until(() => linked(onReplica), 10_000, 'the replica linked to its master');
    // Heartbeats seconds apart: between two of them the replica is taken as fresh whatever it does.
    t = await startTestApp({ redisUrl: master.url, replicas: { urls: [replica.url], maxLagMs: 20_000, heartbeatMs: 5_000 } });
    await createBoard(t, 'fails');
    await submit(t, 'fails', 'ann', 900, 'f1');
    await until(async () => t.replicaReads!.states()[0]!.fresh, 15_000, 'the replica fresh');
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    onReplica?.disconnect();
    await replica?.kill();
    await master?.kill();
  });

  /** How many script calls the replica refused so far (INFO commandstats rejected_calls). */
  const refused = async () =>
    [...(await onReplica.info('commandstats')).matchAll(/cmdstat_(?:evalsha|eval):.*rejected_calls=(\d+)/g)].reduce((n, match) => n + Number(match[1]), 0);

  it('is read again on the master at once: the client gets the master\u2019s answer, no error', async () => {
    const dead = await startOwnRedis();
    await dead.kill();
    // Cut off, and told to refuse reads meanwhile (MASTERDOWN), as a replica set so does.
    await onReplica.config('SET', 'replica-serve-stale-data', 'no');
    await onReplica.replicaof('127.0.0.1', dead.port);
    const before = await refused();
    for (let i = 0; i < 5; i++) {
      expect(await t.gql(STANDING, { board: 'fails', player: 'ann' })).toEqual({ data: { standing: { rank: 1, score: 900 } } });
    }
    // The replica was asked, and refused: those reads were answered by the master.
    expect((await refused()) - before).toBeGreaterThanOrEqual(1);
  });
});

interface View {
  entries: { score: number; player: { id: string } }[];
}

describe('topChanged with a read replica that lags', () => {
  let master: OwnRedis;
  let replica: OwnRedis;
  let onReplica: Redis;
  let t: TestApp;

  beforeAll(async () => {
    master = await startOwnRedis();
    replica = await startOwnRedis({ replicaOf: master.port });
    onReplica = await client(replica.port);
    await until(() => linked(onReplica), 10_000, 'the replica linked to its master');
    // A lag bound long enough that the cut-off replica still takes reads when the change is heard.
    t = await startTestApp({ redisUrl: master.url, replicas: { urls: [replica.url], maxLagMs: 3_000, heartbeatMs: 100 } });
    await createBoard(t, 'live');
    await submit(t, 'live', 'ann', 900, 'l1');
    await until(async () => t.replicaReads!.states()[0]!.fresh, 10_000, 'the replica fresh');
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    onReplica?.disconnect();
    await replica?.kill();
    await master?.kill();
  });

  it('delivers a change the replica did not hold when it was heard, once the replica is past the bound', async () => {
    const ws: Client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    const views: View[] = [];
    const stop = ws.subscribe<{ topChanged: View }>(
      { query: `subscription { topChanged(board: "live", limit: 3) { entries { score player { id } } } }` },
      { next: (message) => views.push(message.data!.topChanged), error: () => undefined, complete: () => undefined },
    );
    try {
      await until(async () => views.length > 0, 10_000, 'the first view');
      expect(views.at(-1)!.entries.map((entry) => entry.player.id)).toEqual(['ann']);
      const dead = await startOwnRedis();
      await dead.kill();
      await onReplica.replicaof('127.0.0.1', dead.port);
      const heardAt = Date.now();
      // The master announces bob's new top place; the replica, still within the bound, has not got it.
      await submit(t, 'live', 'bob', 1_000, 'l2');
      await until(async () => views.at(-1)!.entries[0]?.player.id === 'bob', 8_000, 'bob on top in topChanged');
      // It came from the master once the replica could no longer show it: after the bound, not at once.
      expect(Date.now() - heardAt).toBeGreaterThanOrEqual(2_500);
    } finally {
      stop();
      await ws.dispose();
    }
  });
});

describe('a Redis Cluster read from its replicas (REDIS_CLUSTER_REPLICA_READS)', () => {
  let cluster: RedisClusterFixture;
  let t: TestApp;

  /** EVAL and EVALSHA calls a node has run so far (INFO commandstats). */
  async function scriptCalls(node: { host: string; port: number }): Promise<number> {
    const redis = await client(node.port);
    try {
      const stats = await redis.info('commandstats');
      return [...stats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)].reduce((total, match) => total + Number(match[1]), 0);
    } finally {
      redis.disconnect();
    }
  }

  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
    t = await startTestApp({ redisCluster: cluster, replicas: { cluster: true, maxLagMs: 1_000, heartbeatMs: 100 } });
    await createBoard(t, 'clu');
    await submit(t, 'clu', 'ann', 900, 'c1');
    await submit(t, 'clu', 'bob', 700, 'c2');
    await until(
      async () => {
        const states = t.replicaReads!.states();
        return states.length === 3 && states.every((state) => state.fresh);
      },
      20_000,
      'every replica fresh',
    );
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await cluster?.stop();
  });

  it('sends the reads to the replica of the bucket\u2019s master, and to the master once that replica is gone', async () => {
    const nodes = await cluster.state();
    const before = await Promise.all(nodes.map(scriptCalls));
    for (let i = 0; i < 20; i++) expect(await standing(t, 'clu', i % 2 ? 'ann' : 'bob')).not.toBeNull();
    const after = await Promise.all(nodes.map(scriptCalls));
    const grew = nodes.map((node, i) => ({ node, by: after[i]! - before[i]! }));
    // Every read ran on one replica; its master ran none of them (only the service's own background
    // scripts, the generation check, which stay on the masters).
    const reader = grew.find(({ node, by }) => node.role === 'replica' && by >= 20);
    expect(reader).toBeDefined();
    const itsMaster = grew.find(({ node }) => node.id === reader!.node.masterId)!;
    expect(itsMaster.by).toBeLessThan(5);

    // The replica stops answering (CLIENT PAUSE): skipped once its heartbeat is older than the
    // bound, and its reads go to its master, quickly, meanwhile.
    const name = `${reader!.node.host}:${reader!.node.port}`;
    const pauser = await client(reader!.node.port);
    await pauser.client('PAUSE', 4_000, 'ALL');
    await until(async () => t.replicaReads!.states().find((state) => state.replica === name)?.fresh === false, 3_000, 'the paused replica skipped');
    const masterBeforePause = await scriptCalls(itsMaster.node);
    for (let i = 0; i < 5; i++) {
      const startedAt = Date.now();
      expect(await standing(t, 'clu', 'bob')).toEqual({ rank: 2, score: 700 });
      expect(Date.now() - startedAt).toBeLessThan(1_000);
    }
    expect((await scriptCalls(itsMaster.node)) - masterBeforePause).toBeGreaterThanOrEqual(5);
    await until(async () => t.replicaReads!.states().find((state) => state.replica === name)?.fresh === true, 10_000, 'the replica fresh again');
    pauser.disconnect();

    // The replica goes: reads answer at once, with no error, from its master.
    await cluster.kill(reader!.node);
    const answers = await Promise.all(Array.from({ length: 10 }, () => t.gql(STANDING, { board: 'clu', player: 'ann' })));
    for (const answer of answers) expect(answer).toEqual({ data: { standing: { rank: 1, score: 900 } } });
    const masterBefore = await scriptCalls(itsMaster.node);
    for (let i = 0; i < 5; i++) expect(await standing(t, 'clu', 'bob')).toEqual({ rank: 2, score: 700 });
    expect((await scriptCalls(itsMaster.node)) - masterBefore).toBeGreaterThanOrEqual(5);
  });
});
