import { createHash } from 'node:crypto';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type RedisTarget, createRedisClient, mastersOf } from '../src/redis.js';
import {
  type ModelBoard,
  type ModelBucket,
  type ModelResult,
  expectBucketMatches,
  modelBuckets,
  pagesOf,
  submitAll,
  submitInput,
} from './helpers/board-views.js';
import { closeBuckets, dayAgo } from './helpers/closed-days.js';
import { type OracleEntry, foldResults, rankEntries } from './helpers/oracle.js';
import { seeded } from './helpers/random.js';
import { startRedisClusterEarly } from './helpers/redis-cluster.js';
import { TEST_REDIS_URL } from './helpers/redis-keys.js';
import { ADMIN_KEY, type TestApp, codeOf, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';
import { movableClock } from './helpers/clock.js';

/**
 * removeEntry against an oracle of its own (the results folded and sorted here, the victim's on the
 * board left out): every read of every open bucket of the board (top, size, standing, around,
 * friends, pages, scoreDistribution, a season, a region, a DENSE board's ranks, a wide tie-break
 * board) shows the board without the victim, on 1 and 8 shards of one Redis node and 8 shards of
 * a Redis Cluster, and no index key of those boards on any master names the victim any more (a
 * SCAN of every master), while a closed day's frozen standings, the victim's other boards and
 * their profile stay as they were; the removal is recorded (entryRemovals); a later result counts
 * from scratch; and a result racing the removal leaves the index and PostgreSQL agreeing.
 */

// A date to come (2037 has 2026's calendar): the app sets Redis expiries from this clock, so a
// past date would expire the keys at once. A Sunday, noon: the past five days are in its ISO week.
// The clock runs from there (the top cache's age counts on it).
const NOW = new Date('2037-11-29T12:00:00.000Z');
const clock = movableClock({ startsAt: NOW });
const VICTIM = 'Vîctim-EU';
const PLAYERS = Array.from({ length: 10 }, (_, i) => `p${String(i).padStart(2, '0')}`);
const FRIENDS = [VICTIM, 'p03', 'p07'];
const REMOVE = `mutation($b: ID!, $p: ID!, $r: String!) { removeEntry(board: $b, playerId: $p, reason: $r) }`;
const REMOVALS = `query($b: ID, $p: ID, $n: Int! = 50) { entryRemovals(board: $b, playerId: $p, first: $n) { __typename board playerId reason removedBy removedAt results } }`;
// The admin key's id as the service names a caller: its SHA-256 digest's first 8 bytes, in hex.
const ADMIN_ID = createHash('sha256').update(ADMIN_KEY).digest('hex').slice(0, 16);

/** Results on one board, the victim's among them (about one in four), with the board's best score theirs. */
function generate(board: ModelBoard, seed: number, count: number, maxScore: number): ModelResult[] {
  const next = seeded(seed);
  const results: ModelResult[] = Array.from({ length: count }, (_, i) => ({
    board: board.id,
    playerId: next() < 0.25 ? VICTIM : PLAYERS[Math.floor(next() * PLAYERS.length)]!,
    matchId: `m${i}`,
    score: 1 + Math.floor(next() * (board.aggregate === 'SUM' ? 40 : maxScore / 2)),
    region: [null, ...board.regions][Math.floor(next() * (board.regions.length + 1))]!,
    // Days 1 to 3 before NOW's (Thursday to Saturday): each a DAILY bucket, all in NOW's week and month.
    achievedAt: new Date(NOW.getTime() - (1 + Math.floor(next() * 3)) * 86_400_000 + Math.floor(next() * 3_600_000)),
  }));
  results.push({ ...results[0]!, playerId: VICTIM, matchId: 'top', score: board.order === 'HIGH_FIRST' ? maxScore - 1 : 1, region: null });
  // One on the day the tests close, so that its frozen standings hold the victim.
  results.push({ ...results[0]!, playerId: VICTIM, matchId: 'closed', score: 3, region: null, achievedAt: dayAgo(3, NOW).noon });
  return results;
}

const without = (results: ModelResult[], board: string) => results.filter((r) => !(r.board === board && r.playerId === VICTIM));
const probe = { players: [VICTIM, 'p03'], friendsOf: { p03: FRIENDS } };

/** Polls (the top cache serves up to about a second old) until every bucket's top and pages read as the model has them, then reads them every way. */
async function expectBuckets(t: TestApp, buckets: ModelBucket[]): Promise<void> {
  const rowsOf = (bucket: ModelBucket) => bucket.ranked.map((entry, i) => ({ rank: i + 1, score: entry.score, player: { id: entry.playerId } }));
  const topOf = async (bucket: ModelBucket) => {
    const response = await t.gql<{ top: { entries: unknown[] } }>(
      `query($b: ID!, $p: Period!, $k: String, $r: String) { top(board: $b, period: $p, bucket: $k, region: $r, limit: 1000) { entries { rank score player { id } } } }`,
      { b: bucket.board.id, p: bucket.period, k: bucket.label, r: bucket.region },
    );
    return response.data?.top.entries;
  };
  for (const bucket of buckets) {
    let read = '';
    await until(
      async () => (read = JSON.stringify(await topOf(bucket))) === JSON.stringify(rowsOf(bucket)),
      5_000,
      () => `top of ${bucket.board.id} ${bucket.period} ${bucket.label} ${bucket.region ?? ''}: ${read}, expected ${JSON.stringify(rowsOf(bucket))}`,
      50,
    );
    await expectBucketMatches(t, bucket, probe);
  }
}

/** The victim's board scores as the admin API serves them (Player.boardScores), in a fixed order. */
async function boardScoresOf(t: TestApp, playerId: string) {
  const response = await t.admin<{
    player: { id: string; displayName: string; boardScores: { board: { id: string }; period: string; bucket: string; region: string | null; score: number }[] };
  }>(`query($id: ID!) { player(id: $id) { id displayName boardScores { board { id } period bucket region score } } }`, { id: playerId });
  expect(response.errors).toBeUndefined();
  const { boardScores, ...profile } = response.data!.player;
  const key = (s: (typeof boardScores)[number]) => `${s.board.id} ${s.period} ${s.bucket} ${s.region ?? ''}`;
  return { profile, boardScores: boardScores.map((s) => ({ ...s, key: key(s) })).sort((a, b) => a.key.localeCompare(b.key)) };
}

/**
 * The index keys of a board (`lb:{<board>:...`, every bucket, shard and region) that still name the
 * victim, on every master: a sorted set holding them as a member (on a wide tie-break board, a
 * member of ten hex digits of time then their id) or a member hash with their id as a field. Read
 * straight from Redis (SCAN of each master), not through the app. Keys without the prefix, each
 * with the index of the master holding it.
 */
async function keysNamingVictim(target: RedisTarget, prefix: string, board: string): Promise<{ key: string; master: number }[]> {
  const plain = createRedisClient(target);
  await plain.connect();
  const names = (member: string) => member === VICTIM || member.replace(/^[0-9a-f]{10}/, '') === VICTIM;
  try {
    const found: { key: string; master: number }[] = [];
    for (const [master, node] of mastersOf(plain).entries()) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}lb:{${board}:*`, 'COUNT', 1000);
        const named = await Promise.all(
          keys.map(async (key) => {
            const type = await node.type(key);
            if (type === 'zset') return (await node.zrange(key, 0, -1)).some(names);
            return type === 'hash' && (await node.hexists(key, VICTIM)) === 1;
          }),
        );
        found.push(...keys.filter((_, i) => named[i]).map((key) => ({ key: key.slice(prefix.length), master })));
        cursor = next;
      } while (cursor !== '0');
    }
    return found.sort((a, b) => a.key.localeCompare(b.key));
  } finally {
    await plain.quit();
  }
}

/** Makes the players (each a profile) and p03's friends in an app. */
async function makePlayers(t: TestApp): Promise<void> {
  for (const id of [VICTIM, ...PLAYERS]) {
    const made = await t.server(`mutation($id: ID!, $name: String) { upsertPlayer(input: { id: $id, displayName: $name }) { id } }`, {
      id,
      name: `name of ${id}`,
    });
    expect(made.errors).toBeUndefined();
  }
  const set = await t.server(`mutation($id: ID!, $f: [ID!]!) { setFriends(playerId: $id, friendIds: $f) }`, {
    id: 'p03',
    f: FRIENDS.filter((id) => id !== 'p03'),
  });
  expect(set.errors).toBeUndefined();
}

/** One app on the test's Redis node for the 1- and 8-shard blocks (each board its own id); the Cluster's block starts its own. */
let nodeApp: TestApp;
// The cluster starts while the one-node tests run: most of its start is waiting for the nodes to agree.
const redisCluster = startRedisClusterEarly({ masters: 3, replicasPerMaster: 0 });

beforeAll(async () => {
  nodeApp = await startTestApp({ now: clock.now });
  await makePlayers(nodeApp);
}, 60_000);

describe.each([
  { shards: 1, cluster: false },
  { shards: 8, cluster: false },
  { shards: 8, cluster: true },
])('removeEntry on $shards shard(s), Redis Cluster: $cluster', ({ shards, cluster }) => {
  const tag = `${shards}${cluster ? 'c' : ''}`;
  const race: ModelBoard = { id: `race-${tag}`, order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME', 'WEEKLY', 'DAILY'], regions: ['EU'] };
  const marathon: ModelBoard = { id: `marathon-${tag}`, order: 'LOW_FIRST', aggregate: 'SUM', periods: ['ALL_TIME', 'MONTHLY'], regions: [] };
  const wide: ModelBoard = { id: `wide-${tag}`, order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME'], regions: [] };
  const other: ModelBoard = { id: `other-${tag}`, order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME', 'DAILY'], regions: [] };
  let t: TestApp;
  let redisTarget: RedisTarget = TEST_REDIS_URL;
  const MAX = 1_000_000;
  const results = [
    ...generate(race, 11 + shards, 80, MAX),
    ...generate(marathon, 12 + shards, 60, MAX),
    ...generate(wide, 13 + shards, 50, MAX).map((r, i) => ({ ...r, score: r.matchId === 'top' ? MAX - 1 : 1 + i * 997 })),
    ...generate(other, 14 + shards, 30, MAX),
  ];
  // Results of the open season: achieved as it starts (set once it has).
  const inSeason: ModelResult[] = [VICTIM, 'p01', 'p02', 'p03'].map((playerId, i) => ({
    board: race.id,
    playerId,
    matchId: `s${i}`,
    score: playerId === VICTIM ? MAX - 2 : 1_000 * (i + 1),
    region: null,
    achievedAt: NOW,
  }));
  let seasonStart = NOW;
  const all = [...results, ...inSeason];
  // The race board's grace (2.75 days) keeps the day 3 days before NOW's open until NOW + 6 h; the
  // tests move the clock past that once every result is in, and the day closes.
  const GRACE_S = 237_600;
  const closedDays = [dayAgo(3, NOW).label];
  let season = '';

  /** The model's buckets of a board, the season's included (its results folded as one ALL_TIME list). */
  const bucketsOf = (board: ModelBoard, kept: ModelResult[]): ModelBucket[] => {
    const buckets = modelBuckets([board], kept).filter((b) => board !== race || !(b.period === 'DAILY' && closedDays.includes(b.label)));
    if (board !== race) return buckets;
    const folded = foldResults(
      { ...board, periods: ['ALL_TIME'] },
      kept.filter((r) => r.board === race.id && r.achievedAt >= seasonStart),
    );
    const entries = [...(folded.get('ALL_TIME|all|') ?? new Map<string, OracleEntry>()).values()];
    return [...buckets, { board, period: 'SEASON', label: season, region: null, ranked: rankEntries(board, entries) }];
  };

  /** A DENSE board's top read with the oracle's dense ranks: each distinct score one rank. */
  const expectDense = async (kept: ModelResult[]) => {
    const [bucket] = modelBuckets([marathon], kept).filter((b) => b.period === 'ALL_TIME');
    const ranked = bucket!.ranked;
    const distinct = [...new Set(ranked.map((e) => e.score))];
    const expected = ranked.map((e) => ({ rank: distinct.indexOf(e.score) + 1, score: e.score, player: { id: e.playerId } }));
    const read = async () =>
      (
        await t.gql<{ top: { size: number; entries: unknown[] } }>(
          `query($b: ID!) { top(board: $b, limit: 1000) { size entries { rank score player { id } } } }`,
          {
            b: marathon.id,
          },
        )
      ).data!.top;
    await until(async () => JSON.stringify((await read()).entries) === JSON.stringify(expected), 5_000, 'dense top', 50);
    expect(await read()).toEqual({ size: ranked.length, entries: expected });
    const standing = await t.gql<{ standing: unknown }>(`query($b: ID!, $p: ID!) { standing(board: $b, playerId: $p) { rank score } }`, {
      b: marathon.id,
      p: 'p03',
    });
    const at = ranked.findIndex((e) => e.playerId === 'p03');
    expect(standing.data!.standing).toEqual(at < 0 ? null : { rank: distinct.indexOf(ranked[at]!.score) + 1, score: ranked[at]!.score });
  };

  /** The closed days' tops, each from its frozen standings. */
  const closedTops = async () =>
    Promise.all(
      closedDays.map(
        async (k) =>
          (
            await t.gql<{ top: { size: number; entries: { player: { id: string } }[] } }>(
              `query($b: ID!, $k: String) { top(board: $b, period: DAILY, bucket: $k, limit: 1000) { size entries { rank score player { id } } } }`,
              { b: race.id, k },
            )
          ).data!.top,
      ),
    );

  let frozenBefore: Awaited<ReturnType<typeof closedTops>> = [];
  let otherKeysBefore: Awaited<ReturnType<typeof keysNamingVictim>> = [];
  let victimBefore: Awaited<ReturnType<typeof boardScoresOf>>;

  beforeAll(async () => {
    // Back to NOW (the block before moved the clock on): the days 1 to 3 before it still take results.
    clock.advance(NOW.getTime() - clock.now().getTime());
    if (cluster) {
      const fixture = await redisCluster.started();
      redisTarget = { cluster: fixture.nodes };
      t = await startTestApp({ now: clock.now, redisCluster: fixture });
      await makePlayers(t);
    } else t = nodeApp;
    for (const board of [race, marathon, wide, other]) {
      const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
        input: {
          ...board,
          title: board.id,
          ...(board === race && { periods: [...board.periods, 'SEASON'] }),
          maxScore: MAX,
          shards,
          // Results from the past week count in their days: a grace longer than that (docs/closing.md).
          closeGraceSeconds: board === race ? GRACE_S : 30 * 86_400,
          ...(board === marathon && { rankStyle: 'DENSE' }),
          // Score and column leave too few bits for the time: the member carries it (a `#members` hash).
          ...(board === wide && { tieBreaks: [{ name: 'moves', max: 1_000_000_000, order: 'LOW_FIRST' }] }),
        },
      });
      expect(created.errors, board.id).toBeUndefined();
    }
    const started = await t.admin<{ startSeason: { id: string; startsAt: string } }>(
      `mutation($b: ID!) { startSeason(board: $b, name: "One") { id startsAt } }`,
      {
        b: race.id,
      },
    );
    expect(started.errors).toBeUndefined();
    season = started.data!.startSeason.id;
    seasonStart = new Date(started.data!.startSeason.startsAt);
    for (const result of inSeason) result.achievedAt = seasonStart;
    await submitAll(
      t,
      all.filter((r) => r.board !== wide.id),
    );
    const onWide = await t.server(`mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`, {
      inputs: all.filter((r) => r.board === wide.id).map((r) => ({ ...submitInput(r), tieBreakValues: [7] })),
    });
    expect(onWide.errors).toBeUndefined();
    // Past the day's close (its end plus the grace): closed as the bucket closer closes it (unless it did first).
    clock.advance(7 * 3_600_000);
    await closeBuckets(t, race.id, 'DAILY', closedDays);
    // Frozen (every list of each day: the board's and EU's) before they are read as such.
    const frozenLists = async () =>
      (
        await t.database.sql<{ n: number }[]>`
        select count(*)::int as n from frozen_buckets where board_id = ${race.id} and period = 'DAILY' and bucket = any(${closedDays}::text[])`
      )[0]!.n;
    await until(async () => (await frozenLists()) === 2 * closedDays.length, 10_000, 'the closed days frozen', 50);
    frozenBefore = await closedTops();
    victimBefore = await boardScoresOf(t, VICTIM);
  }, 60_000);
  afterAll(async () => {
    if (cluster) await t?.close();
  });

  it('reads every bucket with the victim before (the oracle and the app agree)', async () => {
    expect(frozenBefore[0]!.entries.some((e) => e.player.id === VICTIM)).toBe(true);
    // The whole board where the victim holds the most (each read of every bucket follows the removal).
    await expectBuckets(
      t,
      bucketsOf(race, all).filter((b) => b.period === 'ALL_TIME' || b.period === 'SEASON'),
    );
    await expectDense(all);
    // The index keys naming the victim, read on every master: one per open bucket of the model that
    // holds them (its name is the key's hash tag up to the shard), on the wide board with the set's
    // member hash beside it; the race board's spread over every master.
    const bucketNames = (keys: { key: string }[]) => keys.map(({ key }) => /^lb:\{([^#}]*)/.exec(key)![1]!).sort();
    const holding = (board: ModelBoard, times: number) =>
      bucketsOf(board, all)
        .filter((b) => b.ranked.some((e) => e.playerId === VICTIM))
        .flatMap((b) => Array<string>(times).fill(`${board.id}:${b.period}:${b.label}${b.region === null ? '' : `:${b.region}`}`))
        .sort();
    const raceKeys = await keysNamingVictim(redisTarget, t.keyPrefix, race.id);
    expect(bucketNames(raceKeys)).toEqual(holding(race, 1));
    expect(new Set(raceKeys.map((k) => k.master)).size).toBe(cluster ? 3 : 1);
    expect(bucketNames(await keysNamingVictim(redisTarget, t.keyPrefix, wide.id))).toEqual(holding(wide, 2));
    otherKeysBefore = await keysNamingVictim(redisTarget, t.keyPrefix, other.id);
    expect(bucketNames(otherKeysBefore)).toEqual(holding(other, 1));
  });

  it('refuses other callers, bad input and an unknown board, changing nothing', async () => {
    const vars = { b: race.id, p: VICTIM, r: 'cheat' };
    expect(codeOf(await t.gql(REMOVE, vars))).toBe('UNAUTHENTICATED');
    expect(codeOf(await t.server(REMOVE, vars))).toBe('FORBIDDEN');
    expect(codeOf(await t.admin(REMOVE, { ...vars, r: '' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(REMOVE, { ...vars, p: 'tab\there' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(REMOVE, { ...vars, b: `no-such-board-${shards}` }))).toBe('NOT_FOUND');
    expect(codeOf(await t.server(REMOVALS, {}))).toBe('FORBIDDEN');
    expect(codeOf(await t.admin(REMOVALS, { n: 201 }))).toBe('BAD_USER_INPUT');
    expect((await boardScoresOf(t, VICTIM)).boardScores).toEqual(victimBefore.boardScores);
    expect((await t.admin<{ entryRemovals: unknown[] }>(REMOVALS, { b: race.id })).data!.entryRemovals).toEqual([]);
  });

  it('removes the entry from every open bucket of each board, and nothing else', async () => {
    // A live top the victim leads: its watchers get the top without them.
    const client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    type View = { data: { topChanged: { entries: { rank: number; score: number; player: { id: string } }[] } } };
    const views = client.iterate({
      query: `subscription($b: ID!) { topChanged(board: $b, limit: 10) { entries { rank score player { id } } } }`,
      variables: { b: race.id },
    });
    const first = (await views.next()).value as View;
    expect(first.data.topChanged.entries[0]!.player.id).toBe(VICTIM);
    for (const board of [race, marathon, wide]) {
      const removed = await t.admin<{ removeEntry: boolean }>(REMOVE, { b: board.id, p: VICTIM, r: `cheating on ${board.id}` });
      expect(removed.errors, board.id).toBeUndefined();
      expect(removed.data!.removeEntry, board.id).toBe(true);
    }
    const kept = [race, marathon, wide].reduce((left, board) => without(left, board.id), all);
    const [allTime] = bucketsOf(race, kept).filter((b) => b.period === 'ALL_TIME' && b.region === null);
    const next = await Promise.race([views.next(), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no topChanged view')), 5_000))]);
    expect((next.value as View).data.topChanged.entries).toEqual(
      allTime!.ranked.slice(0, 10).map((entry, i) => ({ rank: i + 1, score: entry.score, player: { id: entry.playerId } })),
    );
    await views.return?.();
    await client.dispose();
    await expectBuckets(t, [...bucketsOf(race, kept), ...bucketsOf(wide, kept)]);
    await expectDense(kept);
    // The other board, untouched, still holds the victim.
    await expectBuckets(t, bucketsOf(other, all));
    // The closed days read their frozen standings as they were, the victim's rows included.
    expect(await closedTops()).toEqual(frozenBefore);
    // The distribution spans the scores left: the victim's best (the board's highest) is gone.
    const bins = (
      await t.gql<{ scoreDistribution: { from: number; to: number; players: number }[] }>(
        `query($b: ID!) { scoreDistribution(board: $b, bins: 5) { from to players } }`,
        { b: race.id },
      )
    ).data!.scoreDistribution;
    const scores = allTime!.ranked.map((e) => e.score);
    expect(bins[0]!.from).toBe(Math.min(...scores));
    expect(bins.at(-1)!.to).toBe(Math.max(...scores));
    expect(bins.reduce((sum, bin) => sum + bin.players, 0)).toBe(scores.length);
    // The profile and the other board's scores are kept; none of the three boards' are left.
    const after = await boardScoresOf(t, VICTIM);
    expect(after.profile).toEqual({ id: VICTIM, displayName: `name of ${VICTIM}` });
    const ofThisBlock = (s: { board: { id: string } }) => [race, marathon, wide, other].some((board) => board.id === s.board.id);
    expect(after.boardScores.filter(ofThisBlock)).toEqual(victimBefore.boardScores.filter((s) => s.board.id === other.id));
    const [rows] = await t.database.sql<{ results: number; scores: number }[]>`
      select (select count(*) from results where player_id = ${VICTIM} and board_id = any(${[race.id, marathon.id, wide.id]}::text[]))::int as results,
             (select count(*) from board_scores where player_id = ${VICTIM} and board_id = any(${[race.id, marathon.id, wide.id]}::text[]))::int as scores`;
    expect(rows).toEqual({ results: 0, scores: 0 });
  });

  it('leaves no index key of the three boards naming the victim on any master, and the other board as it was', async () => {
    for (const board of [race, marathon, wide]) expect(await keysNamingVictim(redisTarget, t.keyPrefix, board.id), board.id).toEqual([]);
    expect(await keysNamingVictim(redisTarget, t.keyPrefix, other.id)).toEqual(otherKeysBefore);
  });

  it('records each removal: who, when, why and how many results', async () => {
    const response = await t.admin<{ entryRemovals: { board: string }[] }>(REMOVALS, { p: VICTIM });
    expect(response.errors).toBeUndefined();
    // Newest first; the other describe block's boards (the other shard count) left out.
    const mine = new Set([race.id, marathon.id, wide.id]);
    expect(response.data!.entryRemovals.filter((r) => mine.has(r.board))).toEqual(
      [wide, marathon, race].map((board) => ({
        __typename: 'EntryRemoval',
        board: board.id,
        playerId: VICTIM,
        reason: `cheating on ${board.id}`,
        removedBy: ADMIN_ID,
        removedAt: expect.any(String) as string,
        results: all.filter((r) => r.board === board.id && r.playerId === VICTIM).length,
      })),
    );
    // Stamped by the app's clock, which runs from NOW.
    for (const { removedAt } of response.data!.entryRemovals as unknown as { removedAt: string }[]) {
      expect(new Date(removedAt).getTime()).toBeGreaterThanOrEqual(NOW.getTime());
      expect(new Date(removedAt).getTime()).toBeLessThanOrEqual(clock.now().getTime());
    }
    const one = await t.admin<{ entryRemovals: { board: string }[] }>(REMOVALS, { b: marathon.id, p: VICTIM, n: 1 });
    expect(one.data!.entryRemovals.map((r) => r.board)).toEqual([marathon.id]);
  });

  it('answers false when there is nothing left to remove, recording nothing', async () => {
    const again = await t.admin<{ removeEntry: boolean }>(REMOVE, { b: race.id, p: VICTIM, r: 'again' });
    expect(again.data!.removeEntry).toBe(false);
    const never = await t.admin<{ removeEntry: boolean }>(REMOVE, { b: race.id, p: 'never-played', r: 'nobody' });
    expect(never.data!.removeEntry).toBe(false);
    const listed = await t.admin<{ entryRemovals: unknown[] }>(REMOVALS, { b: race.id });
    expect(listed.data!.entryRemovals).toHaveLength(1);
  });

  it('counts the victim again from their next result; a replay of a removed one stays out', async () => {
    const later: ModelResult = { board: race.id, playerId: VICTIM, matchId: 'later', score: 5, region: 'EU', achievedAt: clock.now() };
    const replay = results.find((r) => r.board === race.id && r.playerId === VICTIM)!;
    const answers = await submitAll(t, [later, replay]);
    expect(answers.map((a) => a.duplicate)).toEqual([false, true]);
    const kept = [...[race, marathon, wide].reduce((left, board) => without(left, board.id), all), later];
    await expectBuckets(
      t,
      bucketsOf(race, kept).filter((b) => b.period !== 'DAILY' || b.label === dayAgo(0, NOW).label),
    );
  });
});

describe('removeEntry racing results of the same player', () => {
  const board = 'race-racing';
  const pages = async () => (await pagesOf(nodeApp, { board, period: 'ALL_TIME', label: 'all', region: null })).rows;

  beforeAll(async () => {
    const created = await nodeApp.admin(
      `mutation { createBoard(input: { id: "${board}", title: "Racing", maxScore: 1000000, aggregate: SUM, shards: 8 }) { id } }`,
    );
    expect(created.errors).toBeUndefined();
  });

  it('waits for an index write still pending before it removes anything', async () => {
    await submitAll(nodeApp, [{ board, playerId: VICTIM, matchId: 'w0', score: 10, region: null, achievedAt: NOW }]);
    // A committed group whose index write has not been confirmed yet, as the write path leaves it
    // for the fraction of a second between its commit and its index write (dated ahead, so the
    // catch-up job leaves it alone).
    const [row] = await nodeApp.database.sql<{ id: number }[]>`
      insert into index_backlog (board_ids, player_ids, enqueued_at) values (array[${board}], array[${VICTIM}], now() + interval '1 hour') returning id`;
    let answered = false;
    const removal = nodeApp.admin<{ removeEntry: boolean }>(REMOVE, { b: board, p: VICTIM, r: 'racing' }).finally(() => (answered = true));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(answered).toBe(false);
    const [held] = await nodeApp.database.sql<{ n: number }[]>`select count(*)::int as n from board_scores where board_id = ${board} and player_id = ${VICTIM}`;
    expect(held!.n).toBe(1);
    await nodeApp.database.sql`delete from index_backlog where id = ${row!.id}`;
    expect((await removal).data!.removeEntry).toBe(true);
    expect(await pages()).toEqual([]);
  });

  it('removes a result committed just before it whose index write lands after it started', async () => {
    // The group's index write held back, once it committed: the removal starts meanwhile.
    const index = nodeApp.app.parts.masterIndex;
    const write = index.writeBoardScores.bind(index);
    let committed!: () => void;
    const held = new Promise<void>((resolve) => (committed = resolve));
    index.writeBoardScores = async (writes) => {
      if (writes.some((w) => w.score.playerId === VICTIM && w.at.board.id === board)) {
        committed();
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
      return write(writes);
    };
    try {
      const submitting = nodeApp.server(`mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }`, {
        input: { board, playerId: VICTIM, matchId: 'held', score: 77, achievedAt: NOW.toISOString() },
      });
      await held;
      const removed = await nodeApp.admin<{ removeEntry: boolean }>(REMOVE, { b: board, p: VICTIM, r: 'held back' });
      expect(removed.data!.removeEntry).toBe(true);
      expect((await submitting).errors).toBeUndefined();
    } finally {
      index.writeBoardScores = write;
    }
    // PostgreSQL holds nothing of the victim on the board: nor does the index, now or later.
    const [left] = await nodeApp.database.sql<{ n: number }[]>`select count(*)::int as n from board_scores where board_id = ${board} and player_id = ${VICTIM}`;
    expect(left!.n).toBe(0);
    expect(await pages()).toEqual([]);
  });

  it('leaves the index and PostgreSQL agreeing, and loses no result accepted after it', async () => {
    for (let round = 0; round < 2; round++) {
      // The victim plays on while the removal runs: each result is either removed or counted.
      const submitting = (async () => {
        for (let i = 0; i < 12; i++) {
          const answer = await nodeApp.server(`mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }`, {
            input: { board, playerId: VICTIM, matchId: `r${round}-${i}`, score: 1 + i, achievedAt: NOW.toISOString() },
          });
          expect(answer.errors).toBeUndefined();
        }
      })();
      await new Promise((resolve) => setTimeout(resolve, 10 * round));
      const removed = await nodeApp.admin<{ removeEntry: boolean }>(REMOVE, { b: board, p: VICTIM, r: `round ${round}` });
      expect(removed.errors).toBeUndefined();
      await submitting;
      // The oracle: what the score log still holds of the victim, summed here.
      const logged = await nodeApp.database.sql<
        { score: number }[]
      >`select score::float8 as score from results where board_id = ${board} and player_id = ${VICTIM}`;
      const total = logged.reduce((sum, r) => sum + r.score, 0);
      const expected = logged.length === 0 ? [] : [{ rank: 1, score: total, player: VICTIM }];
      await until(
        async () => JSON.stringify(await pages()) === JSON.stringify(expected),
        5_000,
        () => `round ${round}: index agrees with the log (${total})`,
        50,
      );
    }
  });
});
