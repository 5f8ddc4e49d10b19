import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BoardScoreRow, boardScoreRow } from '../src/model/board.js';
import { bucketAt } from '../src/model/buckets.js';
import { pendingKey } from '../src/ranking/generation.js';
import {
  type ModelBoard,
  type ModelResult,
  allMatch,
  createModelBoards,
  expectBucketMatches,
  expectedRows,
  modelBuckets,
  pagesOf,
  submitAll,
} from './helpers/board-views.js';
import { seeded } from './helpers/random.js';
import { type LostIndexFixture, startLostIndexFixture } from './helpers/lost-index.js';
import { type TcpProxy, startTcpProxy } from './helpers/tcp-proxy.js';
import { type TestApp, startTestApp, codeOf } from './helpers/test-app.js';
import { until } from './helpers/wait.js';

/**
 * Surviving failures, with the stores really cut: a TCP proxy between the app and PostgreSQL or
 * Redis (test/helpers/tcp-proxy.ts), or a redis-server of the test's own that is killed and
 * started again empty. Every view is checked against a plain model of the results
 * (helpers/board-views.ts), never against the service's own output.
 */

/** `count` results over `players` players, each at its own millisecond in the last hour, some with a region. */
function results(board: ModelBoard, seed: number, count: number, players: number, prefix: string): ModelResult[] {
  const next = seeded(seed);
  // A SUM total stays below the boards' maxScore of 5,000.
  const score = () => (board.aggregate === 'SUM' ? 1 + Math.floor(next() * 40) : 1 + Math.floor(next() * 400) * 5);
  const now = Date.now();
  return Array.from({ length: count }, (_, i) => ({
    board: board.id,
    playerId: `${prefix}${String(Math.floor(next() * players)).padStart(3, '0')}`,
    matchId: `${prefix}-m${i}`,
    score: score(),
    region: board.regions.length && next() < 0.5 ? board.regions[0]! : null,
    // Within this UTC day, so that the DAILY bucket is today's.
    achievedAt: new Date(
      Math.max(now - Math.floor(next() * 3_600_000), Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate())) + i,
    ),
  }));
}

/** Creates `board` with maxScore 5,000 (every tie broken to the millisecond, as the oracle breaks it), `extra` overriding its fields. */
async function createBoard(t: TestApp, board: ModelBoard, extra: { periods?: string[] } = {}) {
  await createModelBoards(t, [{ ...board, maxScore: 5_000, ...extra }]);
}

const PROBE = { players: [], friendsOf: {} };

describe('Redis cut off: results are recorded and answered, and the index catches up by itself', () => {
  const BOARD: ModelBoard = { id: 'cut', order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME', 'DAILY'], regions: ['eu'] };
  let proxy: TcpProxy;
  let t: TestApp;
  let direct: postgres.Sql;

  beforeAll(async () => {
    proxy = await startTcpProxy({ port: 6379 });
    t = await startTestApp({ redisUrl: `redis://${proxy.host}:${proxy.port}` });
    direct = postgres(t.databaseUrl, { max: 2, onnotice: () => {} });
    await createBoard(t, BOARD);
  });
  afterAll(async () => {
    await proxy.restore();
    await t?.close();
    await direct?.end();
    await proxy?.close();
  });

  it('re-applies every result committed while Redis was away, within seconds, with no operator', { timeout: 60_000 }, async () => {
    const before = results(BOARD, 1, 60, 25, 'c');
    await submitAll(t, before, 20);
    const during = results(BOARD, 2, 90, 40, 'c').map((r) => ({ ...r, matchId: `${r.matchId}-during` }));

    proxy.cut();
    const payloads = await submitAll(t, during, 15);
    // Recorded and answered; the standings are left out, the index being behind.
    expect(payloads.every((p) => !p.duplicate && p.standings.length === 0)).toBe(true);
    const [logged] = await direct<{ n: number }[]>`select count(*)::int as n from results where board_id = 'cut'`;
    expect(logged!.n).toBe(150);
    const [backlog] = await direct<{ n: number }[]>`select count(*)::int as n from index_backlog`;
    expect(backlog!.n).toBeGreaterThan(0);
    // Reads of the index are refused meanwhile, never answered from a stale guess.
    expect(codeOf(await t.gql(`{ standing(board: "cut", playerId: "c001") { rank } }`))).toBe('UNAVAILABLE');

    await proxy.restore();
    const buckets = modelBuckets([BOARD], [...before, ...during]);
    expect(buckets.length).toBe(4);
    const ms = await until(() => allMatch(t, buckets), 15_000, 'the index caught up');
    expect(ms).toBeLessThan(10_000);
    for (const bucket of buckets) await expectBucketMatches(t, bucket, { players: ['c001', 'c010'], friendsOf: {} });
    await until(async () => (await direct<{ n: number }[]>`select count(*)::int as n from index_backlog`)[0]!.n === 0, 5_000, 'the backlog emptied');
  });

  it('a process that died between its commit and its index write leaves backlog rows, which are applied', async () => {
    // What a crash right after the commit leaves: the result, the board score, the backlog row.
    const at = new Date();
    await direct.begin(async (tx) => {
      await tx`insert into results (board_id, match_id, player_id, score, achieved_at) values ('cut', 'crash-1', 'crashed', 4999, ${at.toISOString()}::timestamptz)`;
      await tx`insert into board_scores (board_id, period, bucket, region, player_id, score, reached_at)
               values ('cut', 'ALL_TIME', 'all', '', 'crashed', 4999, ${at.toISOString()}::timestamptz)`;
      await tx`insert into index_backlog (board_id, player_id) values ('cut', 'crashed')`;
    });
    await until(
      async () =>
        ((await t.gql<{ standing: { rank: number } | null }>(`{ standing(board: "cut", playerId: "crashed") { rank score } }`)).data?.standing ?? null) !==
        null,
      10_000,
      'the crashed batch reached the index',
    );
    expect((await t.gql(`{ standing(board: "cut", playerId: "crashed") { rank score } }`)).data).toEqual({ standing: { rank: 1, score: 4999 } });
  });

  it("a group's backlog row names every pair it touched, and all of them are applied", async () => {
    // What a crash right after a group's commit leaves: its results, board scores, and one backlog row.
    const at = new Date();
    await direct.begin(async (tx) => {
      for (const [player, score] of [
        ['crashed-a', 5999],
        ['crashed-b', 5998],
      ] as const) {
        await tx`insert into results (board_id, match_id, player_id, score, achieved_at) values ('cut', 'crash-2', ${player}, ${score}, ${at.toISOString()}::timestamptz)`;
        await tx`insert into board_scores (board_id, period, bucket, region, player_id, score, reached_at)
                 values ('cut', 'ALL_TIME', 'all', '', ${player}, ${score}, ${at.toISOString()}::timestamptz)`;
      }
      await tx`insert into index_backlog (board_ids, player_ids) values (array['cut', 'cut'], array['crashed-a', 'crashed-b'])`;
    });
    const standing = async (player: string) =>
      (await t.gql<{ standing: { rank: number; score: number } | null }>(`{ standing(board: "cut", playerId: "${player}") { rank score } }`)).data?.standing ??
      null;
    await until(
      async () => (await standing('crashed-a')) !== null && (await standing('crashed-b')) !== null,
      10_000,
      "the crashed group's pairs reached the index",
    );
    expect(await standing('crashed-a')).toEqual({ rank: 1, score: 5999 });
    expect(await standing('crashed-b')).toEqual({ rank: 2, score: 5998 });
    await until(async () => (await direct<{ n: number }[]>`select count(*)::int as n from index_backlog`)[0]!.n === 0, 5_000, 'the row applied is deleted');
  });

  it('a healthy write confirms its own backlog rows: nothing is left for the catch-up', async () => {
    await submitAll(t, results(BOARD, 3, 10, 10, 'h'), 5);
    await until(async () => (await direct<{ n: number }[]>`select count(*)::int as n from index_backlog`)[0]!.n === 0, 1_500, 'confirmed');
  });
});

describe('Redis comes back empty: noticed, every live bucket rebuilt, reads refused until then', () => {
  const BOARD: ModelBoard = { id: 'lost', order: 'LOW_FIRST', aggregate: 'BEST', periods: ['ALL_TIME', 'DAILY'], regions: ['eu'] };
  const SUMS: ModelBoard = { id: 'sums', order: 'HIGH_FIRST', aggregate: 'SUM', periods: ['ALL_TIME'], regions: [] };
  let lost: LostIndexFixture;
  let t: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    lost = await startLostIndexFixture();
    ({ t, second } = lost);
    await createBoard(t, BOARD);
    await createBoard(t, SUMS);
  });
  afterAll(async () => {
    await lost?.close();
  });

  it('rebuilds from PostgreSQL; reads answer UNAVAILABLE (top: the last view, with its asOf) until their bucket is back', { timeout: 60_000 }, async () => {
    const first = [...results(BOARD, 4, 300, 120, 'l'), ...results(SUMS, 5, 200, 50, 's')];
    await submitAll(t, first);
    const buckets = () => modelBuckets([BOARD, SUMS], all);
    let all = first;
    for (const bucket of buckets()) await expectBucketMatches(t, bucket, PROBE);
    const lastTop = await t.gql<{ top: { asOf: string; entries: { player: { id: string } }[] } }>(
      `{ top(board: "lost", limit: 5) { asOf entries { player { id } } } }`,
    );
    // One node: one marker, holding every slot.
    const nodes = t.app.parts.indexGeneration.nodes();
    expect(nodes.map((node) => node.slots)).toEqual([[[0, 16383]]]);
    const marker = nodes[0]!.marker;
    const generation = await t.redis.hget(marker, 'generation');
    expect(generation).toMatch(/^[0-9a-f-]{36}$/);

    // The recovery is held until the test lets it go, so the index stays lost.
    const lostAt = await lost.loseIndex();
    const next = await t.redis.hget(marker, 'generation');
    expect(next).not.toBe(generation);
    expect(await t.redis.smembers(pendingKey(marker, next!))).toEqual(['*']);

    // Nothing is answered from the empty Redis: refused, or for top the last view read before.
    for (const app of [t, second]) {
      expect(codeOf(await app.gql(`{ standing(board: "lost", playerId: "l001") { rank } }`))).toBe('UNAVAILABLE');
      expect(codeOf(await app.gql(`{ around(board: "sums", playerId: "s001") { rank } }`))).toBe('UNAVAILABLE');
      expect(codeOf(await app.gql(`{ board(id: "lost") { size(period: DAILY, region: "eu") } }`))).toBe('UNAVAILABLE');
      expect((await pagesOf(app, { board: 'lost', period: 'ALL_TIME', label: 'all', region: null })).code).toBe('UNAVAILABLE');
    }
    const stale = await t.gql<{ top: { asOf: string; entries: { player: { id: string } }[] } }>(
      `{ top(board: "lost", limit: 5) { asOf entries { player { id } } } }`,
    );
    expect(stale.errors).toBeUndefined();
    expect(stale.data!.top.entries).toEqual(lastTop.data!.top.entries);
    expect(new Date(stale.data!.top.asOf).getTime()).toBeLessThan(lostAt);
    expect(codeOf(await second.gql(`{ top(board: "lost", limit: 5) { asOf } }`))).toBe('UNAVAILABLE');

    // Results keep being recorded meanwhile; the rebuild carries them.
    const meanwhile = [...results(BOARD, 6, 60, 150, 'l'), ...results(SUMS, 7, 40, 60, 's')].map((r) => ({ ...r, matchId: `${r.matchId}-meanwhile` }));
    const payloads = await submitAll(t, meanwhile, 25);
    expect(payloads.every((p) => !p.duplicate && p.standings.length === 0)).toBe(true);
    all = [...first, ...meanwhile];

    // Let the recovery run; every answer from now on is refused or right, never wrong.
    await lost.releaseRecovery();
    const model = buckets();
    const watched = model.find((b) => b.board.id === 'lost' && b.period === 'DAILY' && b.region === 'eu')!;
    let wrong = 0;
    await until(
      async () => {
        const read = await pagesOf(second, { board: 'lost', period: 'DAILY', label: watched.label, region: 'eu' });
        if (read.rows && JSON.stringify(read.rows) !== JSON.stringify(expectedRows(watched))) wrong++;
        return read.rows !== null && (await allMatch(t, model)) && (await allMatch(second, model));
      },
      20_000,
      'every bucket rebuilt',
    );
    expect(wrong).toBe(0);
    for (const bucket of model) await expectBucketMatches(second, bucket, PROBE);
    expect(await t.redis.exists(pendingKey(marker, next!))).toBe(0);
    await until(() => t.app.parts.indexGeneration.state() === 'ready' && second.app.parts.indexGeneration.state() === 'ready', 3_000, 'ready again');
  });
});

describe('PostgreSQL cut off: submissions UNAVAILABLE with nothing written, reads served from Redis', () => {
  const BOARD: ModelBoard = { id: 'pg', order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME'], regions: ['eu'] };
  let proxy: TcpProxy;
  let t: TestApp;
  let direct: postgres.Sql;
  let submitted: ModelResult[] = [];
  let seasonId = '';

  const counts = async () =>
    (
      await direct<{ results: number; scores: number; backlog: number }[]>`
        select (select count(*)::int from results) as results, (select count(*)::int from board_scores) as scores,
               (select count(*)::int from index_backlog) as backlog`
    )[0]!;

  beforeAll(async () => {
    proxy = await startTcpProxy({ port: 5432 });
    // The catch-up job commits a (mostly empty) transaction every second; here it runs once at start.
    t = await startTestApp({ databaseVia: proxy, indexCatchUp: { intervalMs: 3_600_000 } });
    direct = postgres(t.databaseUrl, { max: 2, onnotice: () => {} });
    await createBoard(t, BOARD, { periods: ['ALL_TIME', 'SEASON'] });
    const season = await t.admin<{ startSeason: { id: string } }>(`mutation { startSeason(board: "pg", name: "one") { id } }`);
    seasonId = season.data!.startSeason.id;
    for (const id of ['p000', 'p001', 'p002']) {
      expect(
        (await t.server(`mutation($id: ID!, $name: String) { upsertPlayer(input: { id: $id, displayName: $name }) { id } }`, { id, name: id })).errors,
      ).toBeUndefined();
    }
    submitted = results(BOARD, 8, 80, 30, 'p').map((r) => ({ ...r, achievedAt: new Date() }));
    await submitAll(t, submitted, 20);
  });
  afterAll(async () => {
    await proxy.restore();
    await t?.close();
    await direct?.end();
    await proxy?.close();
  });

  const READS = `{
    top(board: "pg", limit: 5) { entries { rank score player { id displayName } } }
    season: top(board: "pg", period: SEASON, limit: 5) { bucket entries { rank score player { id } } }
    standing(board: "pg", playerId: "p001") { rank score player { id displayName } }
    around(board: "pg", playerId: "p002", radius: 1) { rank player { id } }
    board(id: "pg") { size(period: SEASON) }
  }`;

  it('answers UNAVAILABLE, writes nothing, keeps serving reads, and works again once it is back', { timeout: 60_000 }, async () => {
    const before = await t.gql<Record<string, unknown>>(READS);
    expect(before.errors).toBeUndefined();
    // The index outbox rows of the seeding are confirmed in the background: counted once they are
    // gone, so that the counts after the outage can only differ by what the outage wrote.
    await until(async () => (await counts()).backlog === 0, 5_000, 'the seeding confirmed in the index');
    const counted = await counts();
    expect(counted.results).toBe(80);

    proxy.cut();
    const one = await t.server(`mutation { submitScore(input: { board: "pg", playerId: "p000", score: 4999, matchId: "retry-1" }) { duplicate } }`);
    expect(codeOf(one)).toBe('UNAVAILABLE');
    const batch = await t.server(`mutation { submitScores(inputs: [
      { board: "pg", playerId: "p003", score: 4998, matchId: "retry-2" },
      { board: "pg", playerId: "p004", score: 10, matchId: "retry-2" }]) { duplicate } }`);
    expect(codeOf(batch)).toBe('UNAVAILABLE');

    // Reads go on from Redis: the board and its open season are known to this process, and the
    // names the first read kept in Redis's shared profiles are there too.
    const during = await t.gql<{ top: { entries: { player: { displayName: string | null } }[] }; season: { bucket: string } }>(READS);
    expect(during.errors).toBeUndefined();
    expect(JSON.stringify(before.data)).toContain('"displayName":"p001"');
    expect(during.data!.season.bucket).toBe(seasonId);
    expect(during.data).toEqual(before.data);

    await proxy.restore();
    expect(await counts()).toEqual(counted);
    const back = await until(async () => !(await t.gql(`{ boards { id } }`)).errors, 5_000, 'PostgreSQL answers the app again');
    expect(back).toBeLessThan(2_000);
    // Back without a restart; the retried matchId is recorded exactly once.
    const retried = await t.server<{ submitScore: { duplicate: boolean; standings: unknown[] } }>(
      `mutation { submitScore(input: { board: "pg", playerId: "p000", score: 4999, matchId: "retry-1" }) { duplicate standings { period } } }`,
    );
    expect(retried.errors).toBeUndefined();
    expect(retried.data!.submitScore.duplicate).toBe(false);
    expect(retried.data!.submitScore.standings.length).toBe(2);
    const again = await t.server<{ submitScore: { duplicate: boolean } }>(
      `mutation { submitScore(input: { board: "pg", playerId: "p000", score: 4999, matchId: "retry-1" }) { duplicate } }`,
    );
    expect(again.data!.submitScore.duplicate).toBe(true);
    const [once] = await direct<{ n: number }[]>`select count(*)::int as n from results where match_id = 'retry-1'`;
    expect(once!.n).toBe(1);

    submitted.push({ board: 'pg', playerId: 'p000', matchId: 'retry-1', score: 4999, region: null, achievedAt: new Date() });
    const [allTime] = modelBuckets([BOARD], submitted).filter((b) => b.period === 'ALL_TIME' && b.region === null);
    await expectBucketMatches(t, allTime!, { players: ['p000', 'p001'], friendsOf: {} });
    expect((await t.gql<{ standing: { player: { displayName: string } } }>(READS)).data!.standing.player.displayName).toBe('p001');
  });

  it('a COMMIT whose answer is lost is asked about again: the result is answered as recorded, once', { timeout: 60_000 }, async () => {
    // Fresh connections, so that the next transaction sends COMMIT's text (postgres.js prepares statements per connection).
    proxy.cut();
    await proxy.restore();
    await until(async () => !(await t.gql(`{ boards { id } }`)).errors, 5_000, 'PostgreSQL answers the app again');
    const trapped = proxy.cutAfter((chunk) => chunk.includes('commit'));
    const answer = t.server<{ submitScore: { duplicate: boolean; standings: unknown[] } }>(
      `mutation { submitScore(input: { board: "pg", playerId: "doubt", score: 4321, matchId: "doubt-1" }) { duplicate standings { period } } }`,
    );
    await trapped;
    // PostgreSQL committed; the app lost the answer. Away for a moment longer, then back.
    await until(async () => (await direct<{ n: number }[]>`select count(*)::int as n from results where match_id = 'doubt-1'`)[0]!.n === 1, 2_000, 'committed');
    // Why a sleep: how long PostgreSQL stays away is the fault's duration, a part of the scenario.
    await new Promise((resolve) => setTimeout(resolve, 700));
    await proxy.restore();
    const response = await answer;
    expect(response.errors).toBeUndefined();
    expect(response.data!.submitScore.duplicate).toBe(false);
    const again = await t.server<{ submitScore: { duplicate: boolean } }>(
      `mutation { submitScore(input: { board: "pg", playerId: "doubt", score: 4321, matchId: "doubt-1" }) { duplicate } }`,
    );
    expect(again.data!.submitScore.duplicate).toBe(true);
  });
});

describe('a flag or an erasure while a bucket is rebuilt is not undone by the swap', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    await createBoard(t, { id: 'tomb', order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME'], regions: [] });
    await submitAll(
      t,
      ['cheat', 'erased', 'back', 'honest'].map((playerId, i) => ({
        board: 'tomb',
        playerId,
        matchId: `t${i}`,
        score: 100 + i,
        region: null,
        achievedAt: new Date(),
      })),
    );
  });
  afterAll(() => t?.close());

  it('a snapshot chunk written after the removal does not bring the player back; a later unflag does', async () => {
    const board = (await t.app.parts.boards.find('tomb'))!;
    const at = { board, bucket: bucketAt(board, 'ALL_TIME', new Date()), region: null };
    const now = new Date();
    let removed!: () => void;
    const removals = new Promise<void>((resolve) => (removed = resolve));
    let firstTaken!: () => void;
    const underWay = new Promise<void>((resolve) => (firstTaken = resolve));
    // A rebuild whose snapshot was read before the removals, and whose chunk lands after them.
    async function* snapshot(): AsyncGenerator<BoardScoreRow[]> {
      yield [];
      // Asked for a second chunk: the rebuild has claimed the bucket and written the first.
      firstTaken();
      await removals;
      yield ['cheat', 'erased', 'back', 'honest'].map((playerId, i) => boardScoreRow({ playerId, score: 100 + i, reachedAt: now }));
    }
    const rebuilt = t.app.parts.index.rebuild(at, snapshot(), { expiresAt: null });
    await underWay;
    expect((await t.admin(`mutation { flagPlayer(playerId: "cheat", reason: "aimbot") { id } }`)).errors).toBeUndefined();
    expect((await t.admin(`mutation { flagPlayer(playerId: "back", reason: "mistake") { id } }`)).errors).toBeUndefined();
    expect((await t.admin(`mutation { unflagPlayer(playerId: "back") { id } }`)).errors).toBeUndefined();
    expect((await t.admin(`mutation { deletePlayer(playerId: "erased") }`)).errors).toBeUndefined();
    removed();
    expect(await rebuilt).toBe(2);
    expect(await t.redis.zrange('lb:{tomb:ALL_TIME:all}', 0, -1, 'REV')).toEqual(['honest', 'back']);
    expect(await t.redis.exists('lb:{tomb:ALL_TIME:all}#rebuild:removed')).toBe(0);
  });
});
