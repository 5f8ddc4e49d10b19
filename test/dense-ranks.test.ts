import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type ModelBoard, type ModelResult, modelBuckets, submitAll } from './helpers/board-views.js';
import { type RedisClusterFixture, startRedisCluster } from './helpers/redis-cluster.js';
import { TEST_REDIS_URL, loseKeysUnder } from './helpers/redis-keys.js';
import { type TestApp, codeOf, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';
import { STYLED_ROW as ROW, type StyledRow as Row, createRaceBoard, edgesOfRuns, firstTopChangedView, raceOfTies, readAllPages } from './helpers/rank-views.js';

/**
 * DENSE ranks against a plain oracle: 1 + the number of distinct scores strictly better, counted
 * over a plain sort of the same results. Scores are drawn from a handful of values (runs of about
 * twenty ties) plus a few held by one player each, so a flag, an unflag or an erasure of such a
 * player adds or takes away a distinct score and moves every rank behind it. Every read that serves
 * ranks is checked at both edges of each run and across pages; then after a flag and an unflag, an
 * erasure, a rebuild of a corrupted count and an emptied Redis; on 1 and 8 shards on one node, and
 * 8 shards on a Redis Cluster. Then what is refused: DENSE asked of a board that is not DENSE, and
 * updateBoard to or from DENSE.
 */

type Style = 'ORDINAL' | 'COMPETITION' | 'DENSE';
const MAX_SCORE = 1_000;

describe.each([
  { shards: 1, cluster: false },
  { shards: 8, cluster: false },
  { shards: 8, cluster: true },
])('DENSE ranks ($shards shard(s), on a Redis Cluster: $cluster)', ({ shards, cluster }) => {
  const BOARD: ModelBoard = { id: `Dense-${shards}${cluster ? '-c' : ''}`, order: 'LOW_FIRST', aggregate: 'BEST', periods: ['ALL_TIME'], regions: [] };
  let t: TestApp;
  let redisCluster: RedisClusterFixture | undefined;
  const results: ModelResult[] = [];
  const hidden = new Set<string>();
  let ordinal: { playerId: string; score: number }[] = [];
  /** The players holding a score nobody else holds: what a flag or an erasure of them changes. */
  const loners = ['solo-α', 'solo-β', 'solo-γ'];

  const remodel = () => {
    const [allTime] = modelBuckets([BOARD], results, hidden).filter((bucket) => bucket.period === 'ALL_TIME');
    ordinal = allTime!.ranked.map((entry) => ({ playerId: entry.playerId, score: entry.score }));
  };
  /** The oracle: each style's rank of an entry of the plain sort (LOW_FIRST: a lower score is better). */
  const rankOf = (style: Style, i: number, entries = ordinal) => {
    const score = entries[i]!.score;
    if (style === 'ORDINAL') return i + 1;
    const better = entries.filter((entry) => entry.score < score);
    return 1 + (style === 'COMPETITION' ? better.length : new Set(better.map((entry) => entry.score)).size);
  };
  const expected = (style: Style, from = 0, to = ordinal.length, entries = ordinal) =>
    entries.slice(from, to).map((entry, k) => {
      const rank = rankOf(style, from + k, entries);
      return { rank, score: entry.score, percentile: (100 * (entries.length - rank)) / entries.length, player: { id: entry.playerId } };
    });

  const read = async <T>(query: string, variables: Record<string, unknown> = {}) => {
    const answer = await t.gql<T>(query, { b: BOARD.id, ...variables });
    expect(answer.errors).toBeUndefined();
    return answer.data!;
  };
  const top = async (style: Style | null = null) =>
    (
      await read<{ top: { entries: Row[] } }>(`query($b: ID!, $s: RankStyle) { top(board: $b, limit: 1000, rankStyle: $s) { entries { ${ROW} } } }`, {
        s: style,
      })
    ).top.entries;
  const pages = (first: number, style: Style | null = null) =>
    readAllPages(
      t,
      'standings',
      `query($b: ID!, $f: Int!, $a: String, $s: RankStyle) { standings(board: $b, first: $f, after: $a, rankStyle: $s) { edges { node { ${ROW} } } pageInfo { hasNextPage endCursor } } }`,
      { b: BOARD.id, f: first, s: style },
    );
  /** The bucket's distinct-score counts as Redis holds them, against the oracle's (order value: maxScore - score on LOW_FIRST). */
  const expectCountsMatch = async () => {
    const counts = await t.redis.hgetall(`lb:{${BOARD.id}:ALL_TIME:all}#dense:counts`);
    const want: Record<string, string> = {};
    for (const entry of ordinal) want[String(MAX_SCORE - entry.score)] = String(Number(want[String(MAX_SCORE - entry.score)] ?? 0) + 1);
    expect(counts).toEqual(want);
    const listed = await t.redis.zrange(`lb:{${BOARD.id}:ALL_TIME:all}#dense`, 0, -1);
    expect(listed.sort()).toEqual(Object.keys(want).sort());
  };
  /** Every read in rank order, DENSE, against the oracle (the top through its cache, at most about a second old). */
  const expectDenseEverywhere = async () => {
    await until(async () => JSON.stringify(await top()) === JSON.stringify(expected('DENSE')), 3_000, 'the DENSE top').catch(() => undefined);
    expect(await top()).toEqual(expected('DENSE'));
    expect(await pages(13)).toEqual(expected('DENSE'));
    await expectCountsMatch();
  };

  beforeAll(async () => {
    if (cluster) redisCluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
    t = await startTestApp(redisCluster ? { redisCluster } : {});
    await createRaceBoard(t, BOARD.id, shards, 'DENSE');
    // The race's runs of about 20 ties, and three loners between the runs.
    results.push(...raceOfTies(BOARD.id, shards * 11 + (cluster ? 1 : 0)));
    loners.forEach((playerId, i) => results.push({ board: BOARD.id, playerId, matchId: `solo${i}`, score: 95 + 10 * i, region: null, achievedAt: new Date() }));
    await submitAll(t, results, 40);
    remodel();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await redisCluster?.stop();
  });

  it('top: the board says DENSE; ORDINAL and COMPETITION when asked', async () => {
    for (const [style, arg] of [
      ['DENSE', null],
      ['DENSE', 'DENSE'],
      ['ORDINAL', 'ORDINAL'],
      ['COMPETITION', 'COMPETITION'],
    ] as const) {
      expect(await top(arg), `${style} (${arg})`).toEqual(expected(style));
    }
    await expectCountsMatch();
  });

  it('standing and friends: every player, each with its style', async () => {
    for (const style of ['DENSE', 'COMPETITION'] as const) {
      for (const [i, entry] of ordinal.entries()) {
        if (i % 5 !== 0) continue;
        const data = await read<{ standing: Row }>(`query($b: ID!, $p: ID!, $s: RankStyle) { standing(board: $b, playerId: $p, rankStyle: $s) { ${ROW} } }`, {
          p: entry.playerId,
          s: style,
        });
        expect(data.standing, `${style} ${entry.playerId}`).toEqual(expected(style, i, i + 1)[0]);
      }
    }
    const me = ordinal[50]!.playerId;
    const friends = [ordinal[0]!, ordinal[19]!, ordinal[20]!, ordinal[21]!, ordinal.at(-1)!].map((entry) => entry.playerId);
    expect((await t.server(`mutation($p: ID!, $f: [ID!]!) { setFriends(playerId: $p, friendIds: $f) }`, { p: me, f: friends })).errors).toBeUndefined();
    const data = await read<{ friends: Row[] }>(`query($b: ID!, $p: ID!) { friends(board: $b, playerId: $p) { ${ROW} } }`, { p: me });
    expect(data.friends).toEqual(expected('DENSE').filter((row) => [me, ...friends].includes(row.player.id)));
  });

  it('around, at both edges of every run of ties and inside it', async () => {
    for (const i of edgesOfRuns(ordinal, [60, ordinal.length - 1])) {
      for (const radius of [0, 2]) {
        const data = await read<{ around: Row[] }>(`query($b: ID!, $p: ID!, $r: Int!) { around(board: $b, playerId: $p, radius: $r) { ${ROW} } }`, {
          p: ordinal[i]!.playerId,
          r: radius,
        });
        expect(data.around, `around ${i} radius ${radius}`).toEqual(expected('DENSE', Math.max(0, i - radius), i + radius + 1));
      }
    }
  });

  it("pages that split runs of ties: nothing skipped or repeated, every rank the oracle's", async () => {
    for (const first of [7, 20]) expect(await pages(first), `pages of ${first}`).toEqual(expected('DENSE'));
    expect(await pages(9, 'COMPETITION')).toEqual(expected('COMPETITION'));
  });

  it("submit payloads: each result's DENSE standing as of its write, a new distinct score moving those behind it", async () => {
    // A new best of its own (a distinct score ahead of everyone), then one tying the worst run.
    const worst = ordinal.at(-1)!.score;
    for (const [playerId, score] of [
      ['neu-1', 50],
      ['neu-2', worst],
    ] as const) {
      const result: ModelResult = { board: BOARD.id, playerId, matchId: `x-${playerId}`, score, region: null, achievedAt: new Date() };
      const answer = await t.server<{ submitScore: { standings: { period: string; standing: Row }[] } }>(
        `mutation($i: SubmitScoreInput!) { submitScore(input: $i) { standings { period standing { ${ROW} } } } }`,
        { i: { board: BOARD.id, playerId, matchId: result.matchId, score } },
      );
      expect(answer.errors).toBeUndefined();
      results.push(result);
      remodel();
      const i = ordinal.findIndex((entry) => entry.playerId === playerId);
      const allTime = answer.data!.submitScore.standings.find((standing) => standing.period === 'ALL_TIME');
      expect(allTime?.standing, playerId).toEqual(expected('DENSE', i, i + 1)[0]);
    }
    await expectDenseEverywhere();
  });

  it('a flag and an unflag of the one holder of a score: every rank behind it moves, and back', async () => {
    const loner = loners[1]!;
    expect((await t.admin(`mutation($p: ID!) { flagPlayer(playerId: $p, reason: "test") { id } }`, { p: loner })).errors).toBeUndefined();
    hidden.add(loner);
    remodel();
    await expectDenseEverywhere();
    expect((await t.admin(`mutation($p: ID!) { unflagPlayer(playerId: $p) { id } }`, { p: loner })).errors).toBeUndefined();
    hidden.delete(loner);
    remodel();
    await expectDenseEverywhere();
  });

  it('topChanged serves DENSE by default, the other styles when asked', async () => {
    const first = (style: string | null) => firstTopChangedView(t, BOARD.id, 30, style);
    // The top cache may still hold the view from before the unflag for a moment.
    await until(async () => JSON.stringify(await first(null)) === JSON.stringify(expected('DENSE', 0, 30)), 3_000, 'the DENSE top after the unflag');
    expect(await first('COMPETITION')).toEqual(expected('COMPETITION', 0, 30));
  });

  it("a closed season's frozen results: DENSE counts an erased player's score still", async () => {
    // The season holds what ALL_TIME held when it closed (the same results).
    const frozen = [...ordinal];
    expect((await t.admin(`mutation($b: ID!) { closeSeason(board: $b) { id } }`, { b: BOARD.id })).errors).toBeUndefined();
    const erased = loners[0]!;
    expect((await t.admin(`mutation($p: ID!) { deletePlayer(playerId: $p) }`, { p: erased })).errors).toBeUndefined();
    for (const [style, arg] of [
      ['DENSE', null],
      ['COMPETITION', 'COMPETITION'],
      ['ORDINAL', 'ORDINAL'],
    ] as const) {
      const rows = await readAllPages(
        t,
        'seasonResults',
        `query($b: ID!, $a: String, $s: RankStyle) { seasonResults(board: $b, season: "s1", first: 11, after: $a, rankStyle: $s) { edges { node { ${ROW} } } pageInfo { hasNextPage endCursor } } }`,
        { b: BOARD.id, s: arg },
      );
      expect(rows, style).toEqual(expected(style, 0, frozen.length, frozen).filter((row) => row.player.id !== erased));
    }
  });

  it('an erasure of the one holder of a score takes it out of the live count', async () => {
    // Erased in the test before: gone from the live bucket, its distinct score with it.
    results.splice(0, results.length, ...results.filter((result) => result.playerId !== loners[0]));
    remodel();
    await expectDenseEverywhere();
  });

  it('a rebuild recounts a corrupted count; an emptied Redis is recovered with its counts', { timeout: 60_000 }, async () => {
    const key = `lb:{${BOARD.id}:ALL_TIME:all}#dense`;
    // A count gone wrong: a score nobody holds listed, and a held one forgotten.
    await t.redis.hset(`${key}:counts`, '1', '3');
    await t.redis.zadd(key, 1, '1');
    await t.redis.hdel(`${key}:counts`, String(MAX_SCORE - ordinal[0]!.score));
    await t.redis.zrem(key, String(MAX_SCORE - ordinal[0]!.score));
    expect(await pages(13)).not.toEqual(expected('DENSE'));
    const rebuilt = await t.admin<{ rebuildBoard: number }>(`mutation($b: ID!) { rebuildBoard(board: $b, period: ALL_TIME) }`, { b: BOARD.id });
    expect(rebuilt.errors).toBeUndefined();
    expect(rebuilt.data?.rebuildBoard).toBe(ordinal.length);
    await expectDenseEverywhere();

    // Every key of the app gone at once (its generation markers too), as a flush does: noticed, and every bucket rebuilt.
    await loseKeysUnder(redisCluster ? { cluster: redisCluster.nodes } : TEST_REDIS_URL, t.keyPrefix);
    // Results keep coming while the loss is noticed and the bucket rebuilt and recounted: new
    // players and better times, some of them scores nobody held before.
    const meanwhile: ModelResult[] = ordinal.slice(0, 40).map((entry, i) => ({
      board: BOARD.id,
      playerId: i % 2 === 0 ? entry.playerId : `spät-${i}`,
      matchId: `late-${i}`,
      score: entry.score - 1 - (i % 7),
      region: null,
      achievedAt: new Date(),
    }));
    await submitAll(t, meanwhile, 5);
    results.push(...meanwhile);
    remodel();
    // Polled with expect, so that a bucket that never recovers whole fails with the rows it lacks.
    await expect
      .poll(
        async () => {
          const answer = await t.gql<{ standings: { edges: { node: Row }[] } }>(
            `query($b: ID!) { standings(board: $b, first: 1000) { edges { node { ${ROW} } } } }`,
            { b: BOARD.id },
          );
          return answer.data?.standings.edges.map((edge) => edge.node);
        },
        { timeout: 20_000, interval: 100 },
      )
      .toEqual(expected('DENSE'));
    await expectDenseEverywhere();
  });
});

describe('DENSE refused where it cannot be served; other boards keep their keys', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
    for (const [id, rankStyle] of [
      ['Plain', 'COMPETITION'],
      ['Dense', 'DENSE'],
    ] as const) {
      const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
        input: { id, title: id, order: 'HIGH_FIRST', maxScore: 1_000, periods: ['ALL_TIME', 'SEASON'], topSize: 10, rankStyle },
      });
      expect(created.errors).toBeUndefined();
      expect((await t.admin(`mutation($b: ID!) { startSeason(board: $b, name: "S") { id } }`, { b: id })).errors).toBeUndefined();
    }
    const results = ['Plain', 'Dense'].flatMap((board) =>
      ['p1', 'p2', 'p3'].map((playerId, i) => ({ board, playerId, matchId: `m${i}`, score: 10 * i, region: null, achievedAt: new Date() })),
    );
    await submitAll(t, results);
    expect((await t.admin(`mutation { closeSeason(board: "Plain") { id } }`)).errors).toBeUndefined();
  }, 30_000);
  afterAll(async () => {
    await t?.close();
  });

  it('every read asking DENSE of a board that is not DENSE: BAD_USER_INPUT saying so', async () => {
    for (const query of [
      `{ top(board: "Plain", rankStyle: DENSE) { size } }`,
      `{ standing(board: "Plain", playerId: "p1", rankStyle: DENSE) { rank } }`,
      `{ around(board: "Plain", playerId: "p1", rankStyle: DENSE) { rank } }`,
      `{ friends(board: "Plain", playerId: "p1", rankStyle: DENSE) { rank } }`,
      `{ standings(board: "Plain", rankStyle: DENSE) { edges { cursor } } }`,
      `{ seasonResults(board: "Plain", season: "s1", rankStyle: DENSE) { edges { cursor } } }`,
    ]) {
      const answer = await t.gql(query);
      expect(codeOf(answer), query).toBe('BAD_USER_INPUT');
      expect(answer.errors?.[0]?.message, query).toMatch(/rankStyle DENSE: board "Plain" was not created with rankStyle DENSE/);
    }
    const client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    try {
      const views = client.iterate({ query: `subscription { topChanged(board: "Plain", rankStyle: DENSE) { size } }` });
      const refused = await views.next().then(
        (view) => view.value as { errors?: { extensions?: { code?: string } }[] },
        (error: unknown) => ({ errors: error as { extensions?: { code?: string } }[] }),
      );
      expect(codeOf(refused)).toBe('BAD_USER_INPUT');
    } finally {
      await client.dispose();
    }
  });

  it('updateBoard to or from DENSE: refused, saying so, nothing changed; ORDINAL and COMPETITION still swap', async () => {
    for (const [id, to] of [
      ['Plain', 'DENSE'],
      ['Dense', 'COMPETITION'],
      ['Dense', 'ORDINAL'],
    ] as const) {
      const answer = await t.admin(`mutation($b: ID!, $s: RankStyle!) { updateBoard(input: { id: $b, rankStyle: $s, title: "changed" }) { rankStyle } }`, {
        b: id,
        s: to,
      });
      expect(codeOf(answer), `${id} to ${to}`).toBe('BAD_USER_INPUT');
      expect(answer.errors?.[0]?.message).toMatch(/to or from DENSE is refused/);
    }
    const boards = await t.gql<{ plain: { rankStyle: string; title: string }; dense: { rankStyle: string; title: string } }>(
      `{ plain: board(id: "Plain") { rankStyle title } dense: board(id: "Dense") { rankStyle title } }`,
    );
    expect(boards.data).toEqual({ plain: { rankStyle: 'COMPETITION', title: 'Plain' }, dense: { rankStyle: 'DENSE', title: 'Dense' } });
    // DENSE to DENSE changes nothing, so it is no change of style.
    expect((await t.admin(`mutation { updateBoard(input: { id: "Dense", rankStyle: DENSE }) { rankStyle } }`)).data).toEqual({
      updateBoard: { rankStyle: 'DENSE' },
    });
    expect((await t.admin(`mutation { updateBoard(input: { id: "Plain", rankStyle: ORDINAL }) { rankStyle } }`)).data).toEqual({
      updateBoard: { rankStyle: 'ORDINAL' },
    });
  });

  it('a board that is not DENSE keeps no distinct-score keys; a DENSE one does', async () => {
    expect(await t.redis.exists('lb:{Plain:ALL_TIME:all}#dense', 'lb:{Plain:ALL_TIME:all}#dense:counts')).toBe(0);
    expect(await t.redis.exists('lb:{Dense:ALL_TIME:all}#dense', 'lb:{Dense:ALL_TIME:all}#dense:counts')).toBe(2);
    expect(await t.redis.hgetall('lb:{Dense:ALL_TIME:all}#dense:counts')).toEqual({ '0': '1', '10': '1', '20': '1' });
  });

  it("closing a DENSE board's season drops its distinct-score keys with its sorted set", async () => {
    const season = `lb:{Dense:SEASON:s1}`;
    expect(await t.redis.exists(season, `${season}#dense`, `${season}#dense:counts`)).toBe(3);
    expect((await t.admin(`mutation { closeSeason(board: "Dense") { id } }`)).errors).toBeUndefined();
    expect(await t.redis.exists(season, `${season}#dense`, `${season}#dense:counts`)).toBe(0);
  });
});
