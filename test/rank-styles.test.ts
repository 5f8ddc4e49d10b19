import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ModelBoard, type ModelResult, modelBuckets, submitAll } from './helpers/board-views.js';
import { type RedisClusterFixture, startRedisCluster } from './helpers/redis-cluster.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';
import { STYLED_ROW as ROW, type StyledRow as Row, createRaceBoard, edgesOfRuns, firstTopChangedView, raceOfTies, readAllPages } from './helpers/rank-views.js';

/**
 * Rank styles against a plain oracle: ORDINAL is the place in the sorted list; COMPETITION is 1 +
 * the number of players with a strictly better score. Scores are drawn from a handful of values,
 * so runs of ties are long and every read crosses them: top, standing, around at both edges of a
 * run, pages that split a run, friends, topChanged and a closed season's frozen results; on 1 and 8
 * shards on one node, and 8 shards on a Redis Cluster.
 */

describe.each([
  { shards: 1, cluster: false },
  { shards: 8, cluster: false },
  { shards: 8, cluster: true },
])('rank styles ($shards shard(s), on a Redis Cluster: $cluster)', ({ shards, cluster }) => {
  // The model ranks ALL_TIME; the board keeps a season too, whose frozen results rank the same results.
  const BOARD: ModelBoard = { id: `Ties-${shards}${cluster ? '-c' : ''}`, order: 'LOW_FIRST', aggregate: 'BEST', periods: ['ALL_TIME'], regions: [] };
  let t: TestApp;
  let redisCluster: RedisClusterFixture | undefined;
  const results: ModelResult[] = [];
  let ordinal: { playerId: string; score: number }[] = [];
  /** The oracle: a plain sort of the model's ALL_TIME bucket, and each score's COMPETITION rank. */
  const competition = (score: number) => 1 + ordinal.filter((entry) => entry.score < score).length;
  const expected = (style: 'ORDINAL' | 'COMPETITION', from = 0, to = ordinal.length) =>
    ordinal.slice(from, to).map((entry, i) => {
      const rank = style === 'ORDINAL' ? from + i + 1 : competition(entry.score);
      return { rank, score: entry.score, percentile: (100 * (ordinal.length - rank)) / ordinal.length, player: { id: entry.playerId } };
    });

  beforeAll(async () => {
    if (cluster) redisCluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
    t = await startTestApp(redisCluster ? { redisCluster } : {});
    await createRaceBoard(t, BOARD.id, shards, 'COMPETITION');
    results.push(...raceOfTies(BOARD.id, shards * 7 + (cluster ? 1 : 0)));
    await submitAll(t, results, 40);
    const [allTime] = modelBuckets([BOARD], results).filter((bucket) => bucket.period === 'ALL_TIME');
    ordinal = allTime!.ranked.map((entry) => ({ playerId: entry.playerId, score: entry.score }));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await redisCluster?.stop();
  });

  const read = async <T>(query: string, variables: Record<string, unknown>) => {
    const answer = await t.gql<T>(query, { b: BOARD.id, ...variables });
    expect(answer.errors).toBeUndefined();
    return answer.data!;
  };

  it('top: the board says COMPETITION; ORDINAL when asked', async () => {
    for (const [style, arg] of [
      ['COMPETITION', null],
      ['ORDINAL', 'ORDINAL'],
      ['COMPETITION', 'COMPETITION'],
    ] as const) {
      const data = await read<{ top: { entries: Row[] } }>(
        `query($b: ID!, $s: RankStyle) { top(board: $b, limit: 1000, rankStyle: $s) { entries { ${ROW} } } }`,
        { s: arg },
      );
      expect(data.top.entries, `${style} (${arg})`).toEqual(expected(style));
    }
  });

  it('standing and friends: every player, each with its style', async () => {
    for (const style of ['ORDINAL', 'COMPETITION'] as const) {
      for (const [i, entry] of ordinal.entries()) {
        if (i % 7 !== 0) continue;
        const data = await read<{ standing: Row }>(`query($b: ID!, $p: ID!, $s: RankStyle) { standing(board: $b, playerId: $p, rankStyle: $s) { ${ROW} } }`, {
          p: entry.playerId,
          s: style,
        });
        expect(data.standing, `${style} ${entry.playerId}`).toEqual(expected(style, i, i + 1)[0]);
      }
    }
    const me = ordinal[50]!.playerId;
    const friends = [ordinal[0]!, ordinal[19]!, ordinal[20]!, ordinal[21]!, ordinal[119]!].map((entry) => entry.playerId);
    expect((await t.server(`mutation($p: ID!, $f: [ID!]!) { setFriends(playerId: $p, friendIds: $f) }`, { p: me, f: friends })).errors).toBeUndefined();
    const data = await read<{ friends: Row[] }>(`query($b: ID!, $p: ID!) { friends(board: $b, playerId: $p) { ${ROW} } }`, { p: me });
    const want = expected('COMPETITION').filter((row) => [me, ...friends].includes(row.player.id));
    expect(data.friends).toEqual(want);
  });

  it('around, at both edges of every run of ties and inside it', async () => {
    for (const i of edgesOfRuns(ordinal, [60, 119])) {
      for (const radius of [0, 2]) {
        const data = await read<{ around: Row[] }>(`query($b: ID!, $p: ID!, $r: Int!) { around(board: $b, playerId: $p, radius: $r) { ${ROW} } }`, {
          p: ordinal[i]!.playerId,
          r: radius,
        });
        expect(data.around, `around ${i} radius ${radius}`).toEqual(expected('COMPETITION', Math.max(0, i - radius), i + radius + 1));
      }
    }
  });

  it("pages that split runs of ties: nothing skipped or repeated, every rank the oracle's", async () => {
    for (const first of [7, 20]) {
      const rows = await readAllPages(
        t,
        'standings',
        `query($b: ID!, $f: Int!, $a: String) { standings(board: $b, first: $f, after: $a) { edges { cursor node { ${ROW} } } pageInfo { hasNextPage endCursor } } }`,
        { b: BOARD.id, f: first },
      );
      expect(rows, `pages of ${first}`).toEqual(expected('COMPETITION'));
    }
  });

  it('updateBoard swaps ORDINAL and COMPETITION, served at once', async () => {
    expect((await t.admin(`mutation($b: ID!) { updateBoard(input: { id: $b, rankStyle: ORDINAL }) { rankStyle } }`, { b: BOARD.id })).data).toEqual({
      updateBoard: { rankStyle: 'ORDINAL' },
    });
    expect((await read<{ top: { entries: Row[] } }>(`query($b: ID!) { top(board: $b, limit: 1000) { entries { ${ROW} } } }`, {})).top.entries).toEqual(
      expected('ORDINAL'),
    );
    expect(
      (await t.admin(`mutation($b: ID!) { updateBoard(input: { id: $b, rankStyle: COMPETITION }) { rankStyle } }`, { b: BOARD.id })).errors,
    ).toBeUndefined();
  });

  it("a closed season's frozen results, with an erased player's place still counted", async () => {
    expect((await t.admin(`mutation($b: ID!) { closeSeason(board: $b) { id } }`, { b: BOARD.id })).errors).toBeUndefined();
    // The first of the second run leaves; the rest of that run keep the rank it started at.
    const secondRun = ordinal.findIndex((entry) => entry.score !== ordinal[0]!.score);
    const erased = ordinal[secondRun]!.playerId;
    expect((await t.admin(`mutation($p: ID!) { deletePlayer(playerId: $p) }`, { p: erased })).errors).toBeUndefined();
    for (const [style, arg] of [
      ['COMPETITION', null],
      ['ORDINAL', 'ORDINAL'],
    ] as const) {
      const rows = await readAllPages(
        t,
        'seasonResults',
        `query($b: ID!, $a: String, $s: RankStyle) { seasonResults(board: $b, season: "s1", first: 13, after: $a, rankStyle: $s) { edges { node { ${ROW} } } pageInfo { hasNextPage endCursor } } }`,
        { b: BOARD.id, s: arg },
      );
      expect(rows, style).toEqual(expected(style).filter((row) => row.player.id !== erased));
    }
    ordinal = ordinal.filter((entry) => entry.playerId !== erased);
  });

  it('topChanged serves each viewer its style', async () => {
    const first = (style: string | null) => firstTopChangedView(t, BOARD.id, 30, style);
    await until(
      async () =>
        (await read<{ top: { entries: Row[] } }>(`query($b: ID!) { top(board: $b, limit: 1) { entries { ${ROW} } } }`, {})).top.entries[0]?.player.id ===
        ordinal[0]!.playerId,
      3_000,
      'the top without the erased player',
    );
    expect(await first(null)).toEqual(expected('COMPETITION', 0, 30));
    expect(await first('ORDINAL')).toEqual(expected('ORDINAL', 0, 30));
  });
});
