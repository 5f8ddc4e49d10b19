import { afterAll, describe, expect, it } from 'vitest';
import type { Board } from '../src/model/board.js';
import { parseBucketLabel } from '../src/model/buckets.js';
import { type GraphQLResponse, type TestApp, codeOf, startTestApp } from './helpers/test-app.js';
import { labelsAt } from './helpers/oracle.js';
import { type Result, freeze, insertBoard, noonDaysAgo, submit } from './helpers/bucket-history.js';
import { type RedisClusterFixture, startRedisCluster } from './helpers/redis-cluster.js';
import { movableClock } from './helpers/clock.js';

/** Long enough for yesterday's results to count when sent today; then the clock moves past it to close yesterday. */
const GRACE_S = 2 * 86_400;

/**
 * Query.scoreDistribution (issue 21, item 3) against an oracle that bins each player's best score
 * itself (comparing scores with the bins' edges): open buckets counted in the index (ZCOUNT per
 * edge, summed over shards) on 1 and 8 shards and on a Redis Cluster, closed ones from their frozen
 * standings (their index keys dropped, so nothing else could answer), erased players still counted
 * there; one score, no score; bad input.
 */

const DISTRIBUTION = `query($board: ID!, $period: Period!, $bucket: String, $region: String, $bins: Int!) {
  scoreDistribution(board: $board, period: $period, bucket: $bucket, region: $region, bins: $bins) { from to players } }`;

interface Bin {
  from: number;
  to: number;
  players: number;
}

async function distribution(
  t: TestApp,
  variables: { board: string; period: string; bucket?: string | null; region?: string | null; bins: number },
): Promise<Bin[]> {
  const answer: GraphQLResponse<{ scoreDistribution: Bin[] }> = await t.gql(DISTRIBUTION, { bucket: null, region: null, ...variables });
  expect(answer.errors).toBeUndefined();
  return answer.data!.scoreDistribution;
}

/** The oracle: each player's best score in `results`, binned by comparing it with edges lowest + (highest - lowest) * i / bins. */
function oracleBins(order: Board['order'], results: readonly Result[], bins: number): Bin[] {
  const best = new Map<string, number>();
  for (const r of results) {
    const old = best.get(r.playerId);
    if (old === undefined || (order === 'HIGH_FIRST' ? r.score > old : r.score < old)) best.set(r.playerId, r.score);
  }
  const scores = [...best.values()];
  if (scores.length === 0) return [];
  const lowest = Math.min(...scores);
  const highest = Math.max(...scores);
  if (lowest === highest) return [{ from: lowest, to: highest, players: scores.length }];
  const edge = (i: number) => lowest + ((highest - lowest) * i) / bins;
  return Array.from({ length: bins }, (_, i) => ({
    from: edge(i),
    to: edge(i + 1),
    players: scores.filter((s) => s >= edge(i) && (i === bins - 1 ? s <= highest : s < edge(i + 1))).length,
  }));
}

const BINS = [1, 3, 7, 20, 100];

/** Results on two boards (HIGH_FIRST and LOW_FIRST), today and yesterday, some in region eu; scores narrow on one board, so that bins are narrower than one score. */
function resultsOf(ids: { high: string; low: string }, now: Date): Result[] {
  const results: Result[] = [];
  for (const [board, spread] of [
    [ids.high, 997],
    [ids.low, 37],
  ] as const) {
    for (let i = 0; i < 150; i++) {
      results.push({
        board,
        playerId: `p${(i * 11) % 61}`,
        score: 3 + ((i * 7919) % spread),
        achievedAt: new Date((i % 2 === 0 ? now.getTime() - 1_000 - i * 1_000 : noonDaysAgo(now, 1).getTime()) - (i % 7) * 60_000),
        region: i % 3 === 0 ? 'eu' : null,
      });
    }
  }
  return results;
}

async function expectOracle(t: TestApp, boards: { id: string; order: Board['order'] }[], results: readonly Result[], now: Date): Promise<void> {
  const today = labelsAt(now).DAILY!;
  const yesterday = labelsAt(noonDaysAgo(now, 1)).DAILY!;
  for (const { id, order } of boards) {
    for (const region of [null, 'eu']) {
      const ofList = results.filter((r) => r.board === id && (region === null || r.region === region));
      for (const bins of BINS) {
        expect(await distribution(t, { board: id, period: 'ALL_TIME', region, bins }), `${id} ALL_TIME ${region} ${bins}`).toEqual(
          oracleBins(order, ofList, bins),
        );
        for (const label of [today, yesterday]) {
          const inDay = ofList.filter((r) => labelsAt(r.achievedAt).DAILY === label);
          const got = await distribution(t, { board: id, period: 'DAILY', bucket: label, region, bins });
          expect(got, `${id} ${label} ${region} ${bins}`).toEqual(oracleBins(order, inDay, bins));
          expect(got.reduce((sum, bin) => sum + bin.players, 0)).toBe(new Set(inDay.map((r) => r.playerId)).size);
        }
      }
    }
  }
}

describe.each([1, 8])('scoreDistribution on %i shard(s)', (shards) => {
  it('open and frozen buckets, HIGH_FIRST and LOW_FIRST, are the oracle bins; erased players stay counted in a frozen one', async () => {
    const clock = movableClock();
    const t = await startTestApp({ now: clock.now });
    const now = clock.now();
    const boards = [
      { id: `d-${shards}-high`, order: 'HIGH_FIRST' as const },
      { id: `d-${shards}-low`, order: 'LOW_FIRST' as const },
    ];
    for (const board of boards) {
      await insertBoard(t, { ...board, shards, periods: ['ALL_TIME', 'DAILY'], regions: ['eu'], closeGraceSeconds: GRACE_S });
    }
    const results = resultsOf({ high: boards[0]!.id, low: boards[1]!.id }, now);
    await submit(t, results);
    await expectOracle(t, boards, results, now);

    // Yesterday closed (the clock past its end and grace) and frozen, and its index keys dropped: only the frozen standings can answer for it now.
    const yesterday = labelsAt(noonDaysAgo(now, 1)).DAILY!;
    for (const board of boards) {
      await freeze(t, board.id, 'DAILY', [yesterday], [null, 'eu']);
      const found = (await t.app.parts.boards.find(board.id))!;
      await t.app.parts.index.drop([null, 'eu'].map((region) => ({ board: found, bucket: parseBucketLabel(found, 'DAILY', yesterday, region)!, region })));
    }
    clock.advance(GRACE_S * 1000);
    await expectOracle(t, boards, results, now);

    // An erased player keeps their frozen rank, so a frozen bucket still counts them; the open ones lose them.
    const erased = results.find((r) => r.board === boards[0]!.id && labelsAt(r.achievedAt).DAILY === yesterday)!.playerId;
    expect((await t.admin(`mutation($id: ID!) { deletePlayer(playerId: $id) }`, { id: erased })).errors).toBeUndefined();
    const kept = results.filter((r) => r.playerId !== erased || labelsAt(r.achievedAt).DAILY === yesterday);
    const [high] = boards;
    const frozenDay = results.filter((r) => r.board === high!.id && labelsAt(r.achievedAt).DAILY === yesterday);
    expect(await distribution(t, { board: high!.id, period: 'DAILY', bucket: yesterday, bins: 20 })).toEqual(oracleBins('HIGH_FIRST', frozenDay, 20));
    const allTime = kept.filter((r) => r.board === high!.id && r.playerId !== erased);
    expect(await distribution(t, { board: high!.id, period: 'ALL_TIME', bins: 20 })).toEqual(oracleBins('HIGH_FIRST', allTime, 20));
  });
});

describe('scoreDistribution on a Redis Cluster', () => {
  let cluster: RedisClusterFixture | undefined;
  afterAll(async () => {
    await cluster?.stop();
  });

  it('open buckets of a board of 4 shards over 3 masters are the oracle bins', async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
    const t = await startTestApp({ redisCluster: cluster });
    const now = t.app.parts.now();
    const boards = [
      { id: 'dc-high', order: 'HIGH_FIRST' as const },
      { id: 'dc-low', order: 'LOW_FIRST' as const },
    ];
    for (const board of boards) {
      await insertBoard(t, { ...board, shards: 4, periods: ['ALL_TIME', 'DAILY'], regions: ['eu'], closeGraceSeconds: GRACE_S });
    }
    const results = resultsOf({ high: 'dc-high', low: 'dc-low' }, now);
    await submit(t, results);
    await expectOracle(t, boards, results, now);
    await t.close();
  });
});

describe('scoreDistribution edge cases and bad input', () => {
  it('one score is one bin; an empty bucket none; bad bins, periods, labels and regions answer their codes', async () => {
    const clock = movableClock();
    const t = await startTestApp({ now: clock.now });
    const now = clock.now();
    await insertBoard(t, { id: 'flat', periods: ['ALL_TIME', 'DAILY'], regions: ['eu', 'us'], closeGraceSeconds: GRACE_S });
    await submit(
      t,
      ['a', 'b', 'c'].map((playerId) => ({ board: 'flat', playerId, score: 42, achievedAt: now, region: 'eu' })),
    );
    expect(await distribution(t, { board: 'flat', period: 'ALL_TIME', bins: 20 })).toEqual([{ from: 42, to: 42, players: 3 }]);
    expect(await distribution(t, { board: 'flat', period: 'ALL_TIME', region: 'us', bins: 20 })).toEqual([]);
    const yesterday = labelsAt(noonDaysAgo(now, 1)).DAILY!;
    await freeze(t, 'flat', 'DAILY', [yesterday]);
    clock.advance(GRACE_S * 1000);
    expect(await distribution(t, { board: 'flat', period: 'DAILY', bucket: yesterday, bins: 5 })).toEqual([]);

    const code = async (variables: Record<string, unknown>) =>
      codeOf(await t.gql(DISTRIBUTION, { board: 'flat', period: 'ALL_TIME', bucket: null, region: null, bins: 20, ...variables }));
    expect(await code({ bins: 0 })).toBe('BAD_USER_INPUT');
    expect(await code({ bins: 101 })).toBe('BAD_USER_INPUT');
    expect(await code({ bins: 100 })).toBeUndefined();
    expect(await code({ board: 'no-such-board' })).toBe('NOT_FOUND');
    // As every read names a bucket: a period the board does not keep is NOT_FOUND, a malformed label or an unknown region BAD_USER_INPUT.
    expect(await code({ period: 'WEEKLY' })).toBe('NOT_FOUND');
    expect(await code({ period: 'DAILY', bucket: '2026-02-30' })).toBe('BAD_USER_INPUT');
    expect(await code({ region: 'zz' })).toBe('BAD_USER_INPUT');
    // A closed season is counted from its frozen standings (its index is gone).
    await insertBoard(t, { id: 'seasonal', periods: ['ALL_TIME', 'SEASON'] });
    expect((await t.admin(`mutation { startSeason(board: "seasonal", name: "one") { id } }`)).errors).toBeUndefined();
    const season: Result[] = [5, 9, 9, 14, 30].map((score, i) => ({ board: 'seasonal', playerId: `s${i}`, score, achievedAt: clock.now() }));
    await submit(t, season);
    expect(await distribution(t, { board: 'seasonal', period: 'SEASON', bins: 4 })).toEqual(oracleBins('HIGH_FIRST', season, 4));
    expect((await t.admin(`mutation { closeSeason(board: "seasonal") { id } }`)).errors).toBeUndefined();
    expect(await distribution(t, { board: 'seasonal', period: 'SEASON', bucket: 's1', bins: 4 })).toEqual(oracleBins('HIGH_FIRST', season, 4));
    // Nothing was changed by them.
    expect(await distribution(t, { board: 'flat', period: 'ALL_TIME', bins: 20 })).toEqual([{ from: 42, to: 42, players: 3 }]);
  });
});
