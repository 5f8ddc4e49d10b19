import { crc32 } from 'node:zlib';
import calculateSlot from 'cluster-key-slot';
import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type OracleBoard, type OracleEntry, type OracleResult, foldResults, rankEntries, rankScores } from './helpers/oracle.js';
import { type RedisClusterFixture, startRedisCluster } from './helpers/redis-cluster.js';
import { type TestApp, type TestAppOptions, startTestApp } from './helpers/test-app.js';
import { seeded } from './helpers/random.js';
import { STANDING_ROW, type StandingRow, standingRowOf } from './helpers/board-views.js';

/**
 * Sharded buckets: boards split into 3 and 8 sorted sets are fed exactly the same results as a
 * one-key board (1 shard), and every read of every bucket must equal both the one-key board's
 * answer and a plain sort of the data (the oracle): top, size, standing, around at the edges,
 * every page, friends, the places a submission answers, topChanged, a flag, and a rebuild from
 * PostgreSQL after the keys are wiped. Few distinct scores and shared match times make most
 * players tie on score and time, so their order is decided by the player id's bytes, which the
 * merge of the shards must get right too. All of it runs twice: on one Redis node, and on a local
 * Redis Cluster of three masters (test/helpers/redis-cluster.ts), where the shards of a bucket
 * spread over the masters.
 */

// A date to come (2037 has 2026's calendar): the app sets Redis expiries from this clock, so a
// past date would expire the keys at once.
const NOW = new Date('2037-11-29T12:00:00.000Z');
const SHARDS = [1, 3, 8] as const;
const PERIODS = ['ALL_TIME', 'DAILY'];
const REGIONS = ['eu', 'us'];
const RESULTS = 1_200;
const PAGE_SIZE = 11;

/** Ids whose byte order differs from naive or locale order (case, accents, U+FF21 and an astral emoji), and ids that prefix one another. */
const ODD_IDS = ['Zoë', 'zoë', 'zoe', 'Émile', 'émile', 'e', 'E', 'Ａ', '😀', '日本', 'p1', 'p10', 'p100', 'p1000', 'a b'];
const PLAYERS = [...ODD_IDS, ...Array.from({ length: 140 }, (_, i) => `p${(i * 7919).toString(36)}`)];

interface Config extends OracleBoard {
  name: string;
}
const CONFIGS: Config[] = [
  { name: 'best-high', id: '', order: 'HIGH_FIRST', aggregate: 'BEST', periods: PERIODS },
  { name: 'sum-low', id: '', order: 'LOW_FIRST', aggregate: 'SUM', periods: PERIODS },
];
const boardOf = (config: Config, shards: number) => `${config.name}-${shards}`;

interface Submission extends OracleResult {
  matchId: string;
}

/** Matches of 1 to 6 players over three days, most sharing the match's minute, on 25 distinct scores. */
function generate(seed: number): Submission[] {
  const next = seeded(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  // One match of the odd ids alone, five days back (a DAILY bucket of its own), all on one score
  // at one time: there their order is decided by the bytes of their ids alone, across shards.
  const out: Submission[] = ODD_IDS.map((playerId) => ({
    matchId: 'odd',
    playerId,
    score: 12,
    region: 'eu',
    achievedAt: new Date(NOW.getTime() - 5 * 86_400_000),
  }));
  let match = 0;
  while (out.length < RESULTS) {
    match += 1;
    const matchTime = NOW.getTime() - Math.floor(next() * 3 * 24 * 60) * 60_000;
    const seen = new Set<string>();
    for (let k = 1 + Math.floor(next() * 6); k > 0; k--) {
      const playerId = pick(PLAYERS);
      if (seen.has(playerId)) continue;
      seen.add(playerId);
      out.push({
        matchId: `m${match}`,
        playerId,
        score: Math.floor(next() * 25),
        region: next() < 0.6 ? pick(REGIONS) : null,
        achievedAt: new Date(next() < 0.7 ? matchTime : matchTime - Math.floor(next() * 2) * 60_000),
      });
    }
  }
  return out;
}

type Row = StandingRow;
const ROW = STANDING_ROW;
const BUCKET_VARS = '$b: ID!, $p: Period!, $k: String, $r: String';
const BUCKET_ARGS = 'board: $b, period: $p, bucket: $k, region: $r';

const rowOf = standingRowOf;
const rowsOf = (ranked: OracleEntry[], from = 0, to = ranked.length) => ranked.slice(from, to).map((entry, i) => rowOf(entry, from + i + 1, ranked.length));

interface BucketRef {
  period: string;
  bucket: string;
  region: string | null;
}

/** One graphql-ws subscription, collecting every view it gets. */
function watch(t: TestApp, board: string, limit: number) {
  const client: Client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  const views: [string, number][][] = [];
  const errors: unknown[] = [];
  const unsubscribe = client.subscribe<{ topChanged: { entries: { score: number; player: { id: string } }[] } }>(
    { query: `subscription($b: ID!, $l: Int!) { topChanged(board: $b, limit: $l) { entries { score player { id } } } }`, variables: { b: board, l: limit } },
    {
      next: (result) => {
        if (result.errors) errors.push(...result.errors);
        if (result.data) views.push(result.data.topChanged.entries.map((entry) => [entry.player.id, entry.score]));
      },
      error: (error) => errors.push(error),
      complete: () => undefined,
    },
  );
  return {
    views,
    errors,
    async reach(rows: [string, number][]) {
      await expect.poll(() => views, { timeout: 5_000, interval: 10 }).toContainEqual(rows);
    },
    async close() {
      unsubscribe();
      await client.dispose();
    },
  };
}

/** Where a test app keeps its index: one Redis node, or a local Redis Cluster started for the run. */
const TARGETS = [
  { name: 'one Redis node', cluster: false },
  { name: 'a Redis Cluster of three masters', cluster: true },
] as const;

describe.each(TARGETS)('on $name', ({ cluster }) => {
  let fixture: RedisClusterFixture | undefined;
  const appOptions = (): TestAppOptions => (fixture ? { redisCluster: fixture } : {});
  beforeAll(async () => {
    if (cluster) fixture = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
  }, 60_000);
  afterAll(() => fixture?.stop());

  describe('sharded buckets answer exactly as one sorted set', () => {
    let t: TestApp;
    const results = new Map<string, Submission[]>();
    const hidden = new Set<string>();

    /** Every bucket of a config with its oracle ranking, flagged players left out. */
    function expected(config: Config): (BucketRef & { ranked: OracleEntry[] })[] {
      return [...foldResults(config, results.get(config.name)!)].map(([id, entries]) => {
        const [period, bucket, region] = id.split('|') as [string, string, string];
        const kept = [...entries.values()].filter((entry) => !hidden.has(entry.playerId));
        return { period, bucket, region: region || null, ranked: rankEntries(config, kept) };
      });
    }

    const vars = (board: string, at: BucketRef) => ({ b: board, p: at.period, k: at.bucket, r: at.region });

    async function ok<T>(answer: Promise<{ data?: T | null; errors?: unknown }>): Promise<T> {
      const { data, errors } = await answer;
      expect(errors).toBeUndefined();
      return data!;
    }

    /** Submits results to every board of a config (one batch per call, every shard count in it); answers each input's standings. */
    async function feed(config: Config, batch: Submission[]) {
      const inputs = SHARDS.flatMap((shards) =>
        batch.map((s) => ({
          board: boardOf(config, shards),
          playerId: s.playerId,
          score: s.score,
          matchId: s.matchId,
          region: s.region,
          achievedAt: s.achievedAt.toISOString(),
        })),
      );
      type Standings = { period: string; bucket: string; region: string | null; standing: { rank: number; score: number } }[];
      const data = await ok(
        t.server<{ submitScores: { duplicate: boolean; standings: Standings }[] }>(
          `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate standings { period bucket region standing { rank score } } } }`,
          { inputs },
        ),
      );
      expect(data.submitScores.every((payload) => !payload.duplicate)).toBe(true);
      results.get(config.name)!.push(...batch);
      return data.submitScores;
    }

    async function top(board: string, at: BucketRef) {
      return ok(
        t.gql<{ top: { size: number; entries: Row[] }; board: { size: number } }>(
          `query(${BUCKET_VARS}) { top(${BUCKET_ARGS}, limit: 1000) { size entries { ${ROW} } } board(id: $b) { size(period: $p, bucket: $k, region: $r) } }`,
          vars(board, at),
        ),
      );
    }

    async function allPages(board: string, at: BucketRef, first: number): Promise<Row[]> {
      const rows: Row[] = [];
      let after: string | null = null;
      for (let page = 0; page < 1_000; page++) {
        type Page = { standings: { edges: { cursor: string; node: Row }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } };
        const data: Page = await ok(
          t.gql<Page>(
            `query(${BUCKET_VARS}, $first: Int!, $after: String) {
              standings(${BUCKET_ARGS}, first: $first, after: $after) { edges { cursor node { ${ROW} } } pageInfo { hasNextPage endCursor } }
            }`,
            { ...vars(board, at), first, after },
          ),
        );
        rows.push(...data.standings.edges.map((edge) => edge.node));
        if (!data.standings.pageInfo.hasNextPage) return rows;
        after = data.standings.pageInfo.endCursor;
      }
      throw new Error('pages never ended');
    }

    beforeAll(async () => {
      t = await startTestApp({ now: () => NOW, ...appOptions() });
      for (const [i, config] of CONFIGS.entries()) {
        results.set(config.name, []);
        for (const shards of SHARDS) {
          const board = await ok(
            t.admin<{ createBoard: { shards: number } }>(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { shards } }`, {
              input: {
                id: boardOf(config, shards),
                title: config.name,
                order: config.order,
                aggregate: config.aggregate,
                maxScore: 8_000,
                periods: PERIODS,
                regions: REGIONS,
                topSize: 5,
                // Results from the last five days count in their days (docs/closing.md).
                closeGraceSeconds: 30 * 86_400,
                ...(shards === 1 ? {} : { shards }),
              },
            }),
          );
          expect(board.createBoard.shards).toBe(shards);
        }
        const all = generate(7_000 + i);
        for (let from = 0; from < all.length; from += 150) await feed(config, all.slice(from, from + 150));
      }
    }, 180_000);
    afterAll(() => t?.close());

    it('refuses a shard count outside 1..64 or not whole (BAD_USER_INPUT), and creates nothing', async () => {
      for (const shards of [0, 65, -1]) {
        const answer = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
          input: { id: 'bad-shards', title: 'x', maxScore: 10, shards },
        });
        expect(answer.errors?.[0]?.extensions?.code, JSON.stringify(answer.errors)).toBe('BAD_USER_INPUT');
      }
      // A fraction is not an Int: GraphQL itself refuses it, before any resolver runs (as for every
      // Int argument, with GraphQL's own error: no contract code).
      const fraction = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
        input: { id: 'bad-shards', title: 'x', maxScore: 10, shards: 2.5 },
      });
      expect(fraction.errors?.[0]?.message).toMatch(/Int cannot represent non-integer value/);
      expect(await ok(t.gql<{ board: unknown }>(`{ board(id: "bad-shards") { id } }`))).toEqual({ board: null });
      const data = await ok(t.gql<{ board: { shards: number } }>(`{ board(id: "best-high-8") { shards } }`));
      expect(data.board.shards).toBe(8);
    });

    it('puts each player in shard CRC32(id) mod n, each shard a hash tag of its own', async () => {
      for (const config of CONFIGS) {
        const ranked = expected(config).find((at) => at.period === 'ALL_TIME' && at.region === null)!.ranked;
        for (const shards of [3, 8]) {
          const board = boardOf(config, shards);
          expect(await t.redis.exists(`lb:{${board}:ALL_TIME:all}`)).toBe(0);
          for (let shard = 0; shard < shards; shard++) {
            const members = await t.redis.zrange(`lb:{${board}:ALL_TIME:all#${shard}}`, 0, -1);
            const wanted = ranked.filter((entry) => crc32(entry.playerId) % shards === shard).map((entry) => entry.playerId);
            expect(members.sort()).toEqual(wanted.sort());
            expect(members.length).toBeGreaterThan(0);
          }
        }
      }
      if (fixture) {
        // On the cluster, the shards of one bucket spread over the masters.
        const masters = (await fixture.state()).filter((node) => node.role === 'master');
        const holders = new Set(
          Array.from({ length: 8 }, (_, shard) => {
            const slot = calculateSlot(`${t.keyPrefix}lb:{best-high-8:ALL_TIME:all#${shard}}`);
            return masters.find((node) => node.slots.some(([from, to]) => from <= slot && slot <= to))!.port;
          }),
        );
        expect(holders.size).toBeGreaterThan(1);
      }
    });

    it.each(CONFIGS.map((c) => [c.name, c] as const))('%s: top and size of every bucket equal the oracle and the one-key board', async (_name, config) => {
      for (const at of expected(config)) {
        const single = await top(boardOf(config, 1), at);
        for (const shards of SHARDS) {
          const data = await top(boardOf(config, shards), at);
          expect(data.top.size).toBe(at.ranked.length);
          expect(data.board.size).toBe(at.ranked.length);
          expect(data.top.entries).toEqual(rowsOf(at.ranked));
          expect(data).toEqual(single);
        }
      }
    });

    it.each(CONFIGS.map((c) => [c.name, c] as const))('%s: standing and around at both edges, near them and in the middle', async (_name, config) => {
      for (const at of expected(config)) {
        const n = at.ranked.length;
        const probes = [...new Set([0, 1, 2, Math.floor(n / 2), n - 3, n - 2, n - 1].filter((i) => i >= 0 && i < n))];
        const query = `query(${BUCKET_VARS}, $id: ID!) {
          s: standing(${BUCKET_ARGS}, playerId: $id) { ${ROW} }
          z: around(${BUCKET_ARGS}, playerId: $id, radius: 0) { ${ROW} }
          a: around(${BUCKET_ARGS}, playerId: $id, radius: 3) { ${ROW} }
          w: around(${BUCKET_ARGS}, playerId: $id, radius: 50) { ${ROW} } }`;
        for (const i of [...probes, -1]) {
          const id = i < 0 ? 'never-played' : at.ranked[i]!.playerId;
          const single = await ok(t.gql<Record<string, unknown>>(query, { ...vars(boardOf(config, 1), at), id }));
          for (const shards of SHARDS) {
            const data = await ok(t.gql<Record<string, Row | Row[] | null>>(query, { ...vars(boardOf(config, shards), at), id }));
            if (i < 0) expect(data).toEqual({ s: null, z: [], a: [], w: [] });
            else {
              expect(data.s).toEqual(rowOf(at.ranked[i]!, i + 1, n));
              expect(data.z).toEqual(rowsOf(at.ranked, i, i + 1));
              expect(data.a).toEqual(rowsOf(at.ranked, Math.max(0, i - 3), i + 4));
              expect(data.w).toEqual(rowsOf(at.ranked, Math.max(0, i - 50), i + 51));
            }
            expect(data).toEqual(single);
          }
        }
      }
    });

    it.each(CONFIGS.map((c) => [c.name, c] as const))('%s: pages go through every bucket with no skip and no repeat', async (_name, config) => {
      for (const at of expected(config)) {
        for (const shards of SHARDS) {
          expect(await allPages(boardOf(config, shards), at, PAGE_SIZE)).toEqual(rowsOf(at.ranked));
        }
      }
      const allTime = expected(config).find((at) => at.period === 'ALL_TIME' && at.region === 'eu')!;
      expect(await allPages(boardOf(config, 8), allTime, 1)).toEqual(rowsOf(allTime.ranked));
    });

    it('friends: grouped by shard, each ranked on the whole bucket', async () => {
      const me = PLAYERS[20]!;
      const friends = [...PLAYERS.filter((_, i) => i % 3 === 0), 'has-no-score'];
      await ok(t.server(`mutation($p: ID!, $f: [ID!]!) { setFriends(playerId: $p, friendIds: $f) }`, { p: me, f: friends }));
      const circle = new Set([me, ...friends]);
      for (const config of CONFIGS) {
        for (const at of expected(config)) {
          const wanted = at.ranked.flatMap((entry, i) => (circle.has(entry.playerId) ? [rowOf(entry, i + 1, at.ranked.length)] : []));
          for (const shards of SHARDS) {
            const data = await ok(
              t.gql<{ friends: Row[] }>(`query(${BUCKET_VARS}, $me: ID!) { friends(${BUCKET_ARGS}, playerId: $me) { ${ROW} } }`, {
                ...vars(boardOf(config, shards), at),
                me,
              }),
            );
            expect(data.friends).toEqual(wanted);
          }
        }
      }
    });

    it('a submission answers its places on the whole bucket, and a page continues after a cursor whose player moved', async () => {
      const config = CONFIGS[0]!;
      const at = { period: 'ALL_TIME', bucket: 'all', region: null };
      const before = expected(config).find((b) => b.period === 'ALL_TIME' && b.region === null)!.ranked;
      // The first page of every board, then its last player and a player further down climb.
      const firstPages = await Promise.all(
        SHARDS.map((shards) =>
          ok(
            t.gql<{ standings: { edges: { node: Row }[]; pageInfo: { endCursor: string } } }>(
              `query(${BUCKET_VARS}) { standings(${BUCKET_ARGS}, first: 10) { edges { node { ${ROW} } } pageInfo { endCursor } } }`,
              vars(boardOf(config, shards), at),
            ),
          ),
        ),
      );
      for (const page of firstPages) expect(page.standings.edges.map((edge) => edge.node)).toEqual(rowsOf(before, 0, 10));
      const cursorEntry = before[9]!;
      const climber = before[30]!;
      const moves: Submission[] = [cursorEntry, climber].map((entry, k) => ({
        matchId: `climb-${k}`,
        playerId: entry.playerId,
        score: 7_000 + k,
        region: null,
        achievedAt: new Date(NOW.getTime() - 1_000),
      }));
      // One at a time: each answers its place as of its own write, so the oracle is taken after each.
      let after: OracleEntry[] = [];
      for (const move of moves) {
        const answers = await feed(config, [move]);
        after = expected(config).find((b) => b.period === 'ALL_TIME' && b.region === null)!.ranked;
        const rank = after.findIndex((entry) => entry.playerId === move.playerId) + 1;
        for (const answer of answers) {
          const allTime = answer.standings.find((st) => st.period === 'ALL_TIME' && st.region === null)!;
          expect(allTime.standing).toEqual({ rank, score: move.score });
        }
      }
      // The next page starts right after where the cursor's player was, in the new order.
      const cutoff = rankEntries(config, [...after, cursorEntry]).indexOf(cursorEntry);
      const wanted = rankEntries(config, [...after, cursorEntry])
        .slice(cutoff + 1)
        .slice(0, 10)
        .map((entry) => rowOf(entry, after.indexOf(entry) + 1, after.length));
      for (const [s, shards] of SHARDS.entries()) {
        const data = await ok(
          t.gql<{ standings: { edges: { node: Row }[] } }>(
            `query(${BUCKET_VARS}, $after: String) { standings(${BUCKET_ARGS}, first: 10, after: $after) { edges { node { ${ROW} } } } }`,
            { ...vars(boardOf(config, shards), at), after: firstPages[s]!.standings.pageInfo.endCursor },
          ),
        );
        expect(data.standings.edges.map((edge) => edge.node)).toEqual(wanted);
      }
    });

    it('a flag hides the player on every shard count; an unflag brings them back', async () => {
      const config = CONFIGS[1]!;
      const target = expected(config).find((b) => b.period === 'ALL_TIME' && b.region === null)!.ranked[1]!.playerId;
      const check = async () => {
        for (const at of expected(config)) {
          for (const shards of SHARDS) expect((await top(boardOf(config, shards), at)).top.entries).toEqual(rowsOf(at.ranked));
        }
      };
      await ok(t.admin(`mutation($p: ID!) { flagPlayer(playerId: $p, reason: "test") { id } }`, { p: target }));
      hidden.add(target);
      await check();
      await ok(t.admin(`mutation($p: ID!) { unflagPlayer(playerId: $p) { id } }`, { p: target }));
      hidden.delete(target);
      await check();
    });

    it('a rebuild after the keys are wiped brings every shard back from PostgreSQL', async () => {
      for (const config of CONFIGS) {
        const buckets = expected(config);
        // Every key of every board of the config, named by the layout: the bucket's hash tag, then `#shard`.
        const keys = buckets.flatMap((at) =>
          SHARDS.flatMap((shards) => {
            const tag = `${boardOf(config, shards)}:${at.period}:${at.bucket}${at.region ? `:${at.region}` : ''}`;
            return shards === 1 ? [`lb:{${tag}}`] : Array.from({ length: shards }, (_, i) => `lb:{${tag}#${i}}`);
          }),
        );
        const wiped = await Promise.all(keys.map((key) => t.redis.del(key)));
        // Every bucket had members, and on 3 and 8 shards each shard of the global ALL_TIME list did.
        expect(wiped.reduce((sum, n) => sum + n, 0)).toBeGreaterThan(buckets.length * 3);
        // board.size reads the index itself (top may come from the cache of about a second).
        for (const at of buckets) {
          for (const shards of SHARDS) expect((await top(boardOf(config, shards), at)).board.size).toBe(0);
        }
        for (const at of buckets) {
          for (const shards of SHARDS) {
            const data = await ok(
              t.admin<{ rebuildBoard: number }>(`mutation(${BUCKET_VARS}) { rebuildBoard(${BUCKET_ARGS}) }`, vars(boardOf(config, shards), at)),
            );
            expect(data.rebuildBoard).toBe(at.ranked.length);
          }
        }
        for (const at of buckets) {
          for (const shards of SHARDS) {
            expect((await top(boardOf(config, shards), at)).top.entries).toEqual(rowsOf(at.ranked));
            expect(await allPages(boardOf(config, shards), at, 50)).toEqual(rowsOf(at.ranked));
          }
        }
        const leftovers = await Promise.all(keys.map((key) => t.redis.exists(`${key}#rebuild`, `${key}#rebuild:removed`)));
        expect(leftovers.every((n) => n === 0)).toBe(true);
      }
    });
  });

  describe('topChanged on a sharded board', () => {
    let t: TestApp;
    let matches = 0;
    const best = new Map<string, number>();
    const submit = async (board: string, playerId: string, score: number) => {
      const answer = await t.server(`mutation($i: SubmitScoreInput!) { submitScore(input: $i) { duplicate } }`, {
        i: { board, playerId, score, matchId: `m${++matches}` },
      });
      expect(answer.errors).toBeUndefined();
    };
    // Every score is distinct, so times never decide the order.
    const oracleTop = (limit: number) => rankScores(best).slice(0, limit);

    beforeAll(async () => {
      t = await startTestApp(appOptions());
      const answer = await t.admin(`mutation { createBoard(input: { id: "live", title: "live", maxScore: 1000000, topSize: 3, shards: 8 }) { id } }`);
      expect(answer.errors).toBeUndefined();
    });
    afterAll(() => t?.close());

    it('a change in a shard top is only a candidate: a view goes out when the merged top changes, and only then', async () => {
      // Players spread over the shards, every score distinct.
      for (let i = 0; i < 12; i++) {
        await submit('live', `seed${i}`, 1_000 + 10 * i);
        best.set(`seed${i}`, 1_000 + 10 * i);
      }
      const viewer = watch(t, 'live', 3);
      await viewer.reach(oracleTop(3));
      expect(viewer.views).toHaveLength(1);

      // None of these enters the merged top 3, but those landing in a shard that holds fewer than 3
      // players enter that shard's top 3, so the shard announces a candidate change.
      const held = new Map<number, number>();
      for (const id of best.keys()) held.set(crc32(id) % 8, (held.get(crc32(id) % 8) ?? 0) + 1);
      let candidates = 0;
      for (let i = 0; i < 8; i++) {
        const shard = crc32(`low${i}`) % 8;
        if ((held.get(shard) ?? 0) < 3) candidates += 1;
        held.set(shard, (held.get(shard) ?? 0) + 1);
        await submit('live', `low${i}`, 500 + i);
        best.set(`low${i}`, 500 + i);
      }
      expect(candidates).toBeGreaterThan(0);
      // A player from whichever shard takes the lead: now the merged top changes.
      await submit('live', 'low3', 2_000);
      best.set('low3', 2_000);
      await viewer.reach(oracleTop(3));
      // Exactly two views: the first, and the one that changed the merged top. The candidates from
      // the low scores, each read and found to leave the merged top as it was, sent nothing.
      expect(viewer.views).toEqual([
        [
          ['seed11', 1_110],
          ['seed10', 1_100],
          ['seed9', 1_090],
        ],
        oracleTop(3),
      ]);
      expect(viewer.errors).toEqual([]);
      await viewer.close();
    });
  });
});
