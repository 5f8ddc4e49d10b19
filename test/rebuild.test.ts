import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamBoardScores } from '../src/db/board-scores.js';
import { rebuildBucket } from '../src/writes/rebuild-bucket.js';
import type { BoardScoreRow } from '../src/model/board.js';
import { bucketAt } from '../src/model/buckets.js';
import type { BoardBucket } from '../src/ranking/index.js';
import { type OracleBoard, type OracleEntry, type OracleResult, bucketId, foldResults, labelsAt, rankEntries } from './helpers/oracle.js';
import { runCli } from './helpers/cli.js';
import { type TestApp, codeOf, startTestApp } from './helpers/test-app.js';
import { seeded } from './helpers/random.js';

/**
 * rebuildBoard and `npm run cli -- rebuild`: a corrupted index is rebuilt from PostgreSQL and must
 * then equal a plain sort of every result submitted (flagged players left out), swapped in so that
 * no reader ever sees a part of it, and without losing results committed while it runs.
 */

const SUBMIT = `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`;
const REBUILD = `mutation($board: ID!, $period: Period! = ALL_TIME, $bucket: String, $region: String) {
  rebuildBoard(board: $board, period: $period, bucket: $bucket, region: $region) }`;
const READ = `query($board: ID!, $period: Period!, $bucket: String, $region: String, $probe: ID!, $middle: ID!) {
  top(board: $board, period: $period, bucket: $bucket, region: $region, limit: 1000) {
    size entries { rank score achievedAt player { id } }
  }
  board(id: $board) { size(period: $period, bucket: $bucket, region: $region) }
  standing(board: $board, playerId: $probe, period: $period, bucket: $bucket, region: $region) { rank score player { id } }
  around(board: $board, playerId: $middle, period: $period, bucket: $bucket, region: $region, radius: 3) { rank score player { id } }
}`;

type Row = { rank: number; score: number; player: { id: string } };
interface ReadResult {
  top: { size: number; entries: (Row & { achievedAt: string })[] };
  board: { size: number };
  standing: Row | null;
  around: Row[];
}

interface Submission extends OracleResult {
  board: string;
  matchId: string;
}

const RACE: OracleBoard = { id: 'race', order: 'LOW_FIRST', aggregate: 'BEST', periods: ['ALL_TIME', 'WEEKLY'] };
const POINTS: OracleBoard = { id: 'points', order: 'HIGH_FIRST', aggregate: 'SUM', periods: ['ALL_TIME'] };

/**
 * `count` results over `players` players, each at its own second before `base` (distinct tie-break
 * units, so equal scores are decided by time alone), with repeated scores so that ties happen.
 */
function generate(board: string, seed: number, count: number, players: number, base: number, regions: (string | null)[] = [null]): Submission[] {
  const next = seeded(seed);
  return Array.from({ length: count }, (_, i) => ({
    board,
    matchId: `${board}-m${i}`,
    playerId: `p${String(Math.floor(next() * players)).padStart(4, '0')}`,
    score: 1 + Math.floor(next() * 50) * 7,
    region: regions[Math.floor(next() * regions.length)] ?? null,
    achievedAt: new Date(base - i * 1_000 - Math.floor(next() * 500)),
  }));
}

async function submit(t: TestApp, submissions: Submission[]): Promise<void> {
  for (let i = 0; i < submissions.length; i += 1_000) {
    const inputs = submissions.slice(i, i + 1_000).map((s) => ({ ...s, achievedAt: s.achievedAt.toISOString() }));
    const response = await t.server(SUBMIT, { inputs });
    expect(response.errors).toBeUndefined();
  }
}

/** The oracle's ranking of one bucket, without the given players. */
function expected(board: OracleBoard, submissions: Submission[], period: string, label: string, region: string | null, without: string[] = []): OracleEntry[] {
  const bucket = foldResults(board, submissions).get(bucketId(period, label, region)) ?? new Map<string, OracleEntry>();
  return rankEntries(
    board,
    [...bucket.values()].filter((entry) => !without.includes(entry.playerId)),
  );
}

/** Every read of one bucket (top, size, standing, around) against the oracle's ranking. */
async function expectBucket(
  t: TestApp,
  args: { board: string; period: string; bucket: string; region: string | null },
  ranking: OracleEntry[],
  absent: string[] = [],
) {
  expect(ranking.length).toBeGreaterThan(3);
  const rows = ranking.map((entry, i) => ({ rank: i + 1, score: entry.score, player: { id: entry.playerId } }));
  const middle = ranking[Math.floor(ranking.length / 2)]!.playerId;
  const probe = ranking[ranking.length - 1]!.playerId;
  const { data, errors } = await t.gql<ReadResult>(READ, { ...args, probe, middle });
  expect(errors).toBeUndefined();
  expect(data!.top.size).toBe(ranking.length);
  expect(data!.board.size).toBe(ranking.length);
  expect(data!.top.entries.map(({ rank, score, player }) => ({ rank, score, player }))).toEqual(rows.slice(0, 1_000));
  expect(data!.standing).toEqual(rows[rows.length - 1]);
  const m = Math.floor(ranking.length / 2);
  expect(data!.around).toEqual(rows.slice(Math.max(0, m - 3), m + 4));
  for (const playerId of absent) {
    const gone = await t.gql<{ standing: Row | null }>(READ, { ...args, probe: playerId, middle });
    expect(gone.data!.standing).toBeNull();
  }
}

describe('rebuildBoard', () => {
  let t: TestApp;
  let race: Submission[];
  let points: Submission[];
  let week: string;

  beforeAll(async () => {
    t = await startTestApp();
    const now = Date.now();
    for (const input of [
      { id: 'race', title: 'Race', order: 'LOW_FIRST', aggregate: 'BEST', maxScore: 1_000_000, periods: ['WEEKLY'], regions: ['eu', 'us'] },
      { id: 'points', title: 'Points', order: 'HIGH_FIRST', aggregate: 'SUM', maxScore: 1_000_000 },
    ]) {
      expect((await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, { input })).errors).toBeUndefined();
    }
    // No result in region us: its bucket is empty in PostgreSQL.
    race = generate('race', 1, 900, 400, now - 60_000, [null, 'eu']);
    points = generate('points', 2, 600, 150, now - 60_000);
    await submit(t, [...race, ...points]);
    week = labelsAt(race[0]!.achievedAt).WEEKLY!;
  });
  afterAll(() => t?.close());

  it('repairs a corrupted bucket: every read equals a plain sort of the results', async () => {
    const key = 'lb:{race:ALL_TIME:all}';
    const ranking = expected(RACE, race, 'ALL_TIME', 'all', null);
    // Corrupt it three ways: members missing, a member who never played, a wrong score on top.
    await t.redis.zrem(key, ...ranking.slice(10, 40).map((entry) => entry.playerId));
    await t.redis.zadd(key, 1, 'ghost', 9e15, ranking[100]!.playerId);
    expect(await t.redis.zcard(key)).not.toBe(ranking.length);

    const response = await t.admin<{ rebuildBoard: number }>(REBUILD, { board: 'race', period: 'ALL_TIME' });
    expect(response.errors).toBeUndefined();
    expect(response.data!.rebuildBoard).toBe(ranking.length);
    await expectBucket(t, { board: 'race', period: 'ALL_TIME', bucket: 'all', region: null }, ranking, ['ghost']);
    expect(await t.redis.ttl(key)).toBe(-1);
  });

  it('rebuilds a regional calendar bucket, with its expiry', async () => {
    const key = `lb:{race:WEEKLY:${week}:eu}`;
    const ranking = expected(RACE, race, 'WEEKLY', week, 'eu');
    const ttlBefore = await t.redis.ttl(key);
    expect(ttlBefore).toBeGreaterThan(0);
    await t.redis.del(key);

    const response = await t.admin<{ rebuildBoard: number }>(REBUILD, { board: 'race', period: 'WEEKLY', bucket: week, region: 'eu' });
    expect(response.data?.rebuildBoard).toBe(ranking.length);
    await expectBucket(t, { board: 'race', period: 'WEEKLY', bucket: week, region: 'eu' }, ranking);
    // The bucket's own expiry (its end plus retention), as the write path set it.
    expect(Math.abs((await t.redis.ttl(key)) - ttlBefore)).toBeLessThanOrEqual(5);
  });

  it('rebuilds a SUM board', async () => {
    const ranking = expected(POINTS, points, 'ALL_TIME', 'all', null);
    await t.redis.zadd('lb:{points:ALL_TIME:all}', 0, ranking[0]!.playerId);
    const response = await t.admin<{ rebuildBoard: number }>(REBUILD, { board: 'points' });
    expect(response.data?.rebuildBoard).toBe(ranking.length);
    await expectBucket(t, { board: 'points', period: 'ALL_TIME', bucket: 'all', region: null }, ranking);
  });

  it('leaves flagged players out', async () => {
    const byScore = expected(RACE, race, 'ALL_TIME', 'all', null);
    const flagged = [byScore[0]!.playerId, byScore[50]!.playerId];
    const kept = byScore[1]!.playerId;
    await t.database.sql`insert into players (id, display_name, flagged_at, flag_reason)
      values (${flagged[0]!}, 'cheat', now(), 'test'), (${flagged[1]!}, null, now(), 'test'), (${kept}, 'fair', null, null)`;
    try {
      const ranking = expected(RACE, race, 'ALL_TIME', 'all', null, flagged);
      const response = await t.admin<{ rebuildBoard: number }>(REBUILD, { board: 'race' });
      expect(response.data?.rebuildBoard).toBe(ranking.length);
      await expectBucket(t, { board: 'race', period: 'ALL_TIME', bucket: 'all', region: null }, ranking, flagged);
    } finally {
      await t.database.sql`update players set flagged_at = null where id = any(${flagged})`;
      await t.admin(REBUILD, { board: 'race' });
    }
  });

  it('empties a bucket PostgreSQL holds nothing for', async () => {
    const key = `lb:{race:WEEKLY:${week}:us}`;
    await t.redis.zadd(key, 5, 'stale');
    const response = await t.admin<{ rebuildBoard: number }>(REBUILD, { board: 'race', period: 'WEEKLY', bucket: week, region: 'us' });
    expect(response.data?.rebuildBoard).toBe(0);
    expect(await t.redis.exists(key)).toBe(0);
  });

  it('refuses non-admins, unknown boards and malformed buckets, and changes nothing', async () => {
    const key = 'lb:{race:ALL_TIME:all}';
    await t.redis.zadd(key, 1, 'ghost');
    const before = await t.redis.zrange(key, 0, -1, 'WITHSCORES');

    expect(codeOf(await t.server(REBUILD, { board: 'race', period: 'ALL_TIME' }))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(REBUILD, { board: 'race', period: 'ALL_TIME' }))).toBe('UNAUTHENTICATED');
    expect(codeOf(await t.admin(REBUILD, { board: 'nope', period: 'ALL_TIME' }))).toBe('NOT_FOUND');
    expect(codeOf(await t.admin(REBUILD, { board: 'race', period: 'WEEKLY', bucket: '2026-W99' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(REBUILD, { board: 'race', period: 'WEEKLY', bucket: 'last week' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(REBUILD, { board: 'race', period: 'ALL_TIME', region: 'mars' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(REBUILD, { board: 'race', period: 'DAILY' }))).toBe('NOT_FOUND');

    expect(await t.redis.zrange(key, 0, -1, 'WITHSCORES')).toEqual(before);
    await t.admin(REBUILD, { board: 'race' });
  });

  it('the CLI rebuilds a bucket too, run as its own process', async () => {
    const key = `lb:{race:WEEKLY:${week}}`;
    const ranking = expected(RACE, race, 'WEEKLY', week, null);
    await t.redis.zremrangebyrank(key, 0, 20);
    await t.redis.zadd(key, 7, 'ghost');

    const run = (args: string[]) => runCli(t, args);
    const { stdout } = await run(['rebuild', '--board', 'race', '--period', 'WEEKLY', '--bucket', week]);
    expect(stdout).toMatch(new RegExp(`: ${ranking.length} players ranked in \\d+\\.\\d\\d s\\n$`));
    await expectBucket(t, { board: 'race', period: 'WEEKLY', bucket: week, region: null }, ranking, ['ghost']);

    const refused = await run(['rebuild', '--board', 'nope']).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused?.code).toBe(1);
    expect(refused?.stderr).toContain('No board "nope"');
  }, 60_000);
});

describe('rebuild while the board is in use', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.close());

  async function createBoard(board: OracleBoard) {
    // maxScore 10^6 leaves ALL_TIME ties to 128 ms units; the results below are seconds apart.
    const input = { id: board.id, title: board.id, order: board.order, aggregate: board.aggregate, maxScore: 1_000_000 };
    expect((await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, { input })).errors).toBeUndefined();
  }

  async function allTime(id: string): Promise<BoardBucket> {
    const board = (await t.app.parts.boards.find(id))!;
    return { board, bucket: bucketAt(board, 'ALL_TIME', new Date()), region: null };
  }

  /**
   * The bucket's rows from PostgreSQL, with `between(n)` run after chunk n has been handed over
   * (and so after the snapshot was taken), and `between(-1)` after the last one.
   */
  async function* interleaved(at: BoardBucket, chunkSize: number, between: (chunk: number) => Promise<void>): AsyncGenerator<BoardScoreRow[]> {
    let n = 0;
    for await (const chunk of streamBoardScores(
      t.database.sql,
      { boardId: at.board.id, period: 'ALL_TIME', bucket: 'all', region: '', derived: null },
      { chunkSize },
    )) {
      yield chunk;
      await between(n++);
    }
    await between(-1);
  }

  it('readers see the old board or the whole new one, never a part', async () => {
    const board: OracleBoard = { id: 'crowd', order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME'] };
    await createBoard(board);
    const results = generate('crowd', 3, 3_000, 3_000, Date.now() - 60_000);
    await submit(t, results);
    const size = expected(board, results, 'ALL_TIME', 'all', null).length;
    const key = 'lb:{crowd:ALL_TIME:all}';
    await t.redis.zremrangebyrank(key, 0, 199);
    const old = await t.redis.zcard(key);
    expect(old).toBe(size - 200);

    const reader = t.redis.duplicate();
    await reader.connect();
    try {
      let done = false;
      const seen = new Map<number, number>();
      const sampling = (async () => {
        while (!done) {
          const n = await reader.zcard(key);
          seen.set(n, (seen.get(n) ?? 0) + 1);
        }
      })();
      // Small chunks and ZADDs, so that a rebuild writing into the live key would show many sizes.
      const rebuilt = await rebuildBucket(t.app.parts, await allTime('crowd'), { chunkSize: 100, membersPerZadd: 50, chunksInFlight: 2 }).finally(() => {
        done = true;
      });
      await sampling;
      expect([...seen.keys()].filter((n) => n !== old && n !== size)).toEqual([]);
      expect([...seen.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(10);
      expect(rebuilt).toBe(size);

      // And through the API: the mutation with its default sizes, with GraphQL readers alongside.
      await t.redis.zremrangebyrank(key, 0, 99);
      const sizes: number[] = [];
      const mutation = t.admin<{ rebuildBoard: number }>(REBUILD, { board: 'crowd', period: 'ALL_TIME' });
      let finished = false;
      void mutation.then(() => (finished = true));
      while (!finished) sizes.push((await t.gql<{ board: { size: number } }>(`{ board(id: "crowd") { size } }`)).data!.board.size);
      expect((await mutation).data?.rebuildBoard).toBe(size);
      expect(sizes.filter((n) => n !== size - 100 && n !== size)).toEqual([]);
    } finally {
      await reader.quit();
    }
  });

  for (const board of [
    { id: 'live-best', order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME'] },
    { id: 'live-sum', order: 'LOW_FIRST', aggregate: 'SUM', periods: ['ALL_TIME'] },
  ] satisfies OracleBoard[]) {
    it(`keeps results committed while it runs (${board.order} ${board.aggregate})`, async () => {
      await createBoard(board);
      const base = Date.now() - 3_600_000;
      const seed = generate(board.id, 4, 1_500, 600, base);
      await submit(t, seed);
      // Later results: better scores or more to add for players already ranked, and new players.
      const later = generate(board.id, 5, 300, 800, base + 1_800_000).map((s, i) => ({ ...s, matchId: `${board.id}-late${i}` }));
      await t.redis.del(`lb:{${board.id}:ALL_TIME:all}`);

      // Every later result is committed after the rebuild's snapshot and before its swap: 50 after
      // each chunk read, the rest after the last one.
      let sent = 0;
      const during = async (chunk: number) => {
        const batch = chunk < 0 ? later.slice(sent) : later.slice(sent, sent + 50);
        sent += batch.length;
        if (batch.length > 0) await submit(t, batch);
      };
      const at = await allTime(board.id);
      const rebuilt = await t.app.parts.index.rebuild(at, interleaved(at, 100, during), { expiresAt: null, membersPerZadd: 40 });
      expect(sent).toBe(later.length);
      const ranking = expected(board, [...seed, ...later], 'ALL_TIME', 'all', null);
      expect(rebuilt).toBe(ranking.length);
      await expectBucket(t, { board: board.id, period: 'ALL_TIME', bucket: 'all', region: null }, ranking);
    });
  }

  it('one rebuild of a bucket at a time; a failed one changes nothing and leaves nothing behind', async () => {
    const board: OracleBoard = { id: 'solo', order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME'] };
    await createBoard(board);
    await submit(t, generate('solo', 6, 300, 100, Date.now() - 60_000));
    const key = 'lb:{solo:ALL_TIME:all}';
    await t.redis.zadd(key, 3, 'ghost');
    const before = await t.redis.zrange(key, 0, -1, 'WITHSCORES');
    const at = await allTime('solo');

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const heldAfterFirst = new Promise<void>((resolve) => (holding = resolve));
    const failing = t.app.parts.index.rebuild(
      at,
      interleaved(at, 20, async (chunk) => {
        if (chunk === 0) {
          holding();
          await held;
        }
        if (chunk === 1) throw new Error('the database went away');
      }),
      { expiresAt: null },
    );
    // Held after its first chunk: a second rebuild of the bucket is refused meanwhile.
    await heldAfterFirst;
    expect(codeOf(await t.admin(REBUILD, { board: 'solo' }))).toBe('RATE_LIMITED');
    expect(await t.redis.zrange(key, 0, -1, 'WITHSCORES')).toEqual(before);
    release();
    await expect(failing).rejects.toThrow('the database went away');

    expect(await t.redis.zrange(key, 0, -1, 'WITHSCORES')).toEqual(before);
    expect(await t.redis.keys(`${t.keyPrefix}lb:{solo:*`)).toEqual([`${t.keyPrefix}${key}`]);
    // And the bucket can be rebuilt again at once.
    expect((await t.admin<{ rebuildBoard: number }>(REBUILD, { board: 'solo' })).data?.rebuildBoard).toBe(before.length / 2 - 1);
  });
});
