import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSeason as closeSeasonJob } from '../src/writes/close-buckets.js';
import { rankEntries } from './helpers/oracle.js';
import { seeded } from './helpers/random.js';
import { type TestApp, codeOf, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';

/**
 * Seasons: startSeason / closeSeason, the SEASON period in writes and reads, the freeze into
 * seasonResults, and the closer that ends a season at its endsAt once, however many processes run.
 * Every list is checked against a plain sort of the submitted data, never the service's own output.
 */

const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`;
const START = `mutation($board: ID!, $name: String!, $endsAt: DateTime) {
  startSeason(board: $board, name: $name, endsAt: $endsAt) { id name startsAt endsAt closedAt } }`;
const CLOSE = `mutation($board: ID!) { closeSeason(board: $board) { id closedAt } }`;
const SEASONS = `query($id: ID!) { board(id: $id) { currentSeason { id closedAt } seasons { id name closedAt } } }`;
const SUBMIT = `mutation($inputs: [SubmitScoreInput!]!) {
  submitScores(inputs: $inputs) { duplicate standings { period bucket region standing { rank score } } } }`;
const PAGE = `query($board: ID!, $bucket: String, $region: String, $after: String) {
  standings(board: $board, period: SEASON, bucket: $bucket, region: $region, first: 100, after: $after) {
    edges { node { rank score achievedAt player { id } } } pageInfo { hasNextPage endCursor } } }`;
const RESULTS = `query($board: ID!, $season: ID!, $first: Int!, $after: String) {
  seasonResults(board: $board, season: $season, first: $first, after: $after) {
    edges { cursor node { rank score percentile achievedAt player { id } } } pageInfo { hasNextPage endCursor } } }`;

type Order = 'HIGH_FIRST' | 'LOW_FIRST';

interface Result {
  playerId: string;
  matchId: string;
  score: number;
  region: string | null;
  achievedAt: number;
}

interface Row {
  playerId: string;
  score: number;
  reachedAt: number;
}

interface Season {
  id: string;
  name: string;
  startsAt: string;
  endsAt: string | null;
  closedAt: string | null;
}

interface Page {
  edges: { cursor: string; node: { rank: number; score: number; percentile: number; achievedAt: string; player: { id: string } } }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** Ids whose UTF-8 byte order differs from locale order: Redis, and so the freeze, orders by bytes. */
const ODD_IDS = ['Zoë', 'zoë', 'zoe', 'Émile', 'émile', 'e', 'E', 'Ａ', '😀', '日本', 'p10', 'p9', 'p1'];

/**
 * The oracle: each player's best result in [from, to) in the given region (null: all of them),
 * reached at the earliest time they got it; ranked by score, then time, then player id in UTF-8
 * byte order, descending. `unitMs` is the tie-break unit: times in one unit tie.
 */
function oracle(order: Order, results: Result[], from: number, to: number, region: string | null = null, hidden = new Set<string>(), unitMs = 1): Row[] {
  const best = new Map<string, Row>();
  for (const r of results) {
    if (r.achievedAt < from || r.achievedAt >= to || hidden.has(r.playerId) || (region !== null && r.region !== region)) continue;
    const old = best.get(r.playerId);
    const better = !old || (order === 'HIGH_FIRST' ? r.score > old.score : r.score < old.score) || (r.score === old.score && r.achievedAt < old.reachedAt);
    if (better) best.set(r.playerId, { playerId: r.playerId, score: r.score, reachedAt: r.achievedAt });
  }
  const unit = (row: Row) => Math.floor((row.reachedAt - from) / unitMs);
  // Ranked as the oracle ranks, by the unit a time falls in; each row keeps its exact time.
  return rankEntries(
    { order },
    [...best.values()].map((row) => ({ ...row, reachedAt: unit(row), row })),
  ).map((entry) => entry.row);
}

/** Results on few scores and few times, so many players tie and are ordered by time, then by id. */
function seedResults(seed: number, startsAt: number, count: number, prefix = 'm'): Result[] {
  const next = seeded(seed);
  const ids = [...ODD_IDS, ...Array.from({ length: 60 }, (_, i) => `p${(i * 7919).toString(36)}`)];
  return Array.from({ length: count }, (_, i) => ({
    playerId: ids[Math.floor(next() * ids.length)]!,
    matchId: `${prefix}${i}`,
    score: Math.floor(next() * 8) * 100,
    region: next() < 0.4 ? 'eu' : null,
    // Some a little before the season starts (they must stay out), most in its first minute.
    achievedAt: startsAt - 500 + Math.floor(next() * 12) * 5_000 + (next() < 0.3 ? 0 : Math.floor(next() * 3)),
  }));
}

async function submit(t: TestApp, board: string, results: Result[]) {
  const inputs = results.map((r) => ({
    board,
    playerId: r.playerId,
    matchId: r.matchId,
    score: r.score,
    region: r.region,
    achievedAt: new Date(r.achievedAt).toISOString(),
  }));
  const response = await t.server<{ submitScores: { duplicate: boolean; standings: { period: string; bucket: string; region: string | null }[] }[] }>(SUBMIT, {
    inputs,
  });
  expect(response.errors).toBeUndefined();
  return response.data!.submitScores;
}

/** The whole SEASON list as the index shows it, page by page. */
async function seasonIndex(t: TestApp, board: string, bucket?: string, region?: string): Promise<Row[]> {
  const rows: Row[] = [];
  let after: string | null = null;
  for (;;) {
    const response: { data?: { standings: Page } | null; errors?: unknown } = await t.gql<{ standings: Page }>(PAGE, { board, bucket, region, after });
    expect(response.errors).toBeUndefined();
    const page = response.data!.standings;
    rows.push(...page.edges.map(({ node }) => ({ playerId: node.player.id, score: node.score, reachedAt: Date.parse(node.achievedAt) })));
    if (!page.pageInfo.hasNextPage) return rows;
    after = page.pageInfo.endCursor;
  }
}

/** Every frozen standing of a season, `first` at a time, following the cursors. */
async function frozen(t: TestApp, board: string, season: string, first: number): Promise<Page['edges'][number]['node'][]> {
  const out: Page['edges'][number]['node'][] = [];
  let after: string | null = null;
  for (;;) {
    const response: { data?: { seasonResults: Page } | null; errors?: unknown } = await t.gql<{ seasonResults: Page }>(RESULTS, {
      board,
      season,
      first,
      after,
    });
    expect(response.errors).toBeUndefined();
    const page = response.data!.seasonResults;
    expect(page.edges.length).toBeLessThanOrEqual(first);
    out.push(...page.edges.map((edge) => edge.node));
    if (!page.pageInfo.hasNextPage) return out;
    expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)!.cursor);
    after = page.pageInfo.endCursor;
  }
}

const asFrozen = (rows: Row[]) =>
  rows.map((row, i) => ({ rank: i + 1, playerId: row.playerId, score: row.score, achievedAt: new Date(row.reachedAt).toISOString() }));
const fromNodes = (nodes: Page['edges'][number]['node'][]) =>
  nodes.map((node) => ({ rank: node.rank, playerId: node.player.id, score: node.score, achievedAt: node.achievedAt }));

async function createBoard(t: TestApp, id: string, extra: Record<string, unknown> = {}) {
  const response = await t.admin(CREATE, { input: { id, title: id, maxScore: 1_000, periods: ['ALL_TIME', 'SEASON'], regions: ['eu'], ...extra } });
  expect(response.errors).toBeUndefined();
}

async function startSeason(t: TestApp, board: string, endsAt?: Date): Promise<Season> {
  const response = await t.admin<{ startSeason: Season }>(START, { board, name: `Season of ${board}`, endsAt: endsAt?.toISOString() });
  expect(response.errors).toBeUndefined();
  return response.data!.startSeason;
}

async function keyCount(t: TestApp, board: string, season: string): Promise<number> {
  return t.redis.exists(`lb:{${board}:SEASON:${season}}`, `lb:{${board}:SEASON:${season}:eu}`);
}

describe('seasons', () => {
  let t: TestApp;
  // Whole seconds, so that every time this file submits is exact in the index too.
  let clock = new Date(Math.floor(Date.now() / 1000) * 1000 - 3_600_000);
  beforeAll(async () => {
    // The closer is tested below with two apps; here closes happen only when a test asks.
    t = await startTestApp({ now: () => clock, seasonCloseIntervalMs: 3_600_000 });
  });
  afterAll(() => t.close());

  it('startSeason: admin only, one open season per board, NOT_FOUND for an unknown board', async () => {
    await createBoard(t, 'lifecycle');
    await t.admin(CREATE, { input: { id: 'no-seasons', title: 'x', maxScore: 10 } });
    expect(codeOf(await t.admin(START, { board: 'nope', name: 'x' }))).toBe('NOT_FOUND');
    expect(codeOf(await t.admin(CLOSE, { board: 'nope' }))).toBe('NOT_FOUND');
    expect(codeOf(await t.admin(START, { board: 'no-seasons', name: 'x' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.server(START, { board: 'lifecycle', name: 'x' }))).toBe('FORBIDDEN');
    expect(codeOf(await t.admin(START, { board: 'lifecycle', name: '  ' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(START, { board: 'lifecycle', name: 'x', endsAt: clock.toISOString() }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(CLOSE, { board: 'lifecycle' }))).toBe('NOT_FOUND');
    expect((await t.gql(SEASONS, { id: 'lifecycle' })).data).toEqual({ board: { currentSeason: null, seasons: [] } });

    const endsAt = new Date(clock.getTime() + 86_400_000);
    const s1 = await startSeason(t, 'lifecycle', endsAt);
    expect(s1).toEqual({ id: 's1', name: 'Season of lifecycle', startsAt: s1.startsAt, endsAt: endsAt.toISOString(), closedAt: null });
    // It starts when it answers: every process knows of it from then on (test/season-start.test.ts).
    expect(s1.startsAt).toBe(clock.toISOString());

    const again = await t.admin(START, { board: 'lifecycle', name: 'another' });
    expect(codeOf(again)).toBe('BAD_USER_INPUT');
    expect((await t.gql(SEASONS, { id: 'lifecycle' })).data).toEqual({
      board: { currentSeason: { id: 's1', closedAt: null }, seasons: [{ id: 's1', name: 'Season of lifecycle', closedAt: null }] },
    });
  });

  it('SEASON reads: the open season by default or by id; NOT_FOUND for an unknown id, whatever its form (ids are opaque)', async () => {
    await createBoard(t, 'reads');
    expect(codeOf(await t.gql(PAGE, { board: 'reads' }))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(PAGE, { board: 'no-seasons' }))).toBe('NOT_FOUND');
    await startSeason(t, 'reads');
    expect(await seasonIndex(t, 'reads')).toEqual([]);
    expect(await seasonIndex(t, 'reads', 's1')).toEqual([]);
    expect(codeOf(await t.gql(PAGE, { board: 'reads', bucket: 's2' }))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(PAGE, { board: 'reads', bucket: 'all' }))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(PAGE, { board: 'reads', bucket: 's1', region: 'us' }))).toBe('BAD_USER_INPUT');
  });

  describe('a season from start to frozen results', () => {
    const board = 'season-oracle';
    let season: Season;
    let results: Result[];
    let startsAt: number;
    let endsAt: number;
    let flagged: string;

    beforeAll(async () => {
      await createBoard(t, board);
      season = await startSeason(t, board, new Date(clock.getTime() + 10 * 60_000));
      startsAt = Date.parse(season.startsAt);
      endsAt = Date.parse(season.endsAt!);
    });

    it('writes each result achieved in [startsAt, endsAt) into the season, globally and regionally, as the oracle ranks it', async () => {
      results = seedResults(1, startsAt, 400);
      const payloads = [];
      for (let i = 0; i < results.length; i += 100) payloads.push(...(await submit(t, board, results.slice(i, i + 100))));
      payloads.forEach((payload, i) => {
        const inSeason = results[i]!.achievedAt >= startsAt;
        const seasonal = payload.standings.filter((s) => s.period === 'SEASON');
        if (payload.duplicate) return;
        expect(seasonal.map((s) => [s.bucket, s.region])).toEqual(inSeason ? [['s1', null], ...(results[i]!.region ? [['s1', 'eu']] : [])] : []);
      });
      const expected = oracle('HIGH_FIRST', results, startsAt, endsAt);
      expect(expected.length).toBeGreaterThan(40);
      expect(await seasonIndex(t, board)).toEqual(expected);
      expect(await seasonIndex(t, board, 's1')).toEqual(expected);
      expect(await seasonIndex(t, board, 's1', 'eu')).toEqual(oracle('HIGH_FIRST', results, startsAt, endsAt, 'eu'));
      expect(await t.redis.ttl(`lb:{${board}:SEASON:s1}`)).toBe(-1);
    });

    it('keeps out a result achieved after endsAt, and takes a late one achieved before it', async () => {
      clock = new Date(endsAt + 60_000);
      const late: Result[] = [
        { playerId: 'after-the-end', matchId: 'late-1', score: 999, region: 'eu', achievedAt: endsAt },
        { playerId: 'just-in-time', matchId: 'late-2', score: 998, region: null, achievedAt: endsAt - 1 },
      ];
      const [after, inTime] = await submit(t, board, late);
      expect(after!.standings.filter((s) => s.period === 'SEASON')).toEqual([]);
      expect(inTime!.standings.filter((s) => s.period === 'SEASON').map((s) => s.bucket)).toEqual(['s1']);
      results.push(...late);
      const expected = oracle('HIGH_FIRST', results, startsAt, endsAt);
      expect(expected[0]!.playerId).toBe('just-in-time');
      expect(expected.some((row) => row.playerId === 'after-the-end')).toBe(false);
      expect(await seasonIndex(t, board)).toEqual(expected);
    });

    it('closeSeason freezes the exact oracle order, flagged players left out, paged by signed cursors', async () => {
      // A flag set straight in the database: the freeze must leave the player out on its own.
      flagged = oracle('HIGH_FIRST', results, startsAt, endsAt)[3]!.playerId;
      await t.database.sql`insert into players (id, flagged_at) values (${flagged}, now())
        on conflict (id) do update set flagged_at = now()`;

      const closed = await t.admin<{ closeSeason: { id: string; closedAt: string } }>(CLOSE, { board });
      expect(closed.errors).toBeUndefined();
      expect(closed.data!.closeSeason).toEqual({ id: 's1', closedAt: clock.toISOString() });

      const expected = asFrozen(oracle('HIGH_FIRST', results, startsAt, endsAt, null, new Set([flagged])));
      for (const first of [100, 7, 3]) expect(fromNodes(await frozen(t, board, 's1', first))).toEqual(expected);
      const top = (await t.gql<{ seasonResults: Page }>(RESULTS, { board, season: 's1', first: 2 })).data!.seasonResults;
      expect(top.edges.map((edge) => edge.node.percentile)).toEqual([1, 2].map((rank) => (100 * (expected.length - rank)) / expected.length));
    });

    it('refuses a forged or foreign cursor, and a season that is unknown or still open', async () => {
      const page = (await t.gql<{ seasonResults: Page }>(RESULTS, { board, season: 's1', first: 3 })).data!.seasonResults;
      const cursor = page.pageInfo.endCursor!;
      const [payload, mac] = cursor.split('.') as [string, string];
      const forged = `${Buffer.from(JSON.stringify([`season:${board}:s1`, 1, 'x'])).toString('base64url')}.${mac}`;
      const edited = `${payload}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
      for (const after of [forged, edited, 'nonsense', '']) {
        expect(codeOf(await t.gql(RESULTS, { board, season: 's1', first: 3, after }))).toBe('BAD_USER_INPUT');
      }
      expect(codeOf(await t.gql(RESULTS, { board: 'lifecycle', season: 's1', first: 3, after: cursor }))).toBe('BAD_USER_INPUT');
      expect(codeOf(await t.gql(RESULTS, { board, season: 's1', first: 0 }))).toBe('BAD_USER_INPUT');
      expect(codeOf(await t.gql(RESULTS, { board, season: 's1', first: 1001 }))).toBe('BAD_USER_INPUT');
      expect(codeOf(await t.gql(RESULTS, { board, season: 's9', first: 3 }))).toBe('NOT_FOUND');
      expect(codeOf(await t.gql(RESULTS, { board: 'nope', season: 's1', first: 3 }))).toBe('NOT_FOUND');
      expect(codeOf(await t.gql(RESULTS, { board: 'lifecycle', season: 's1', first: 3 }))).toBe('NOT_FOUND');
    });

    it('drops the season keys; the current-season read answers NOT_FOUND and s1 its frozen standings; a new season starts and takes the new results', async () => {
      expect(await keyCount(t, board, 's1')).toBe(0);
      expect(codeOf(await t.gql(PAGE, { board }))).toBe('NOT_FOUND');
      // A closed season's reads serve its frozen standings (docs/closing.md).
      expect(await seasonIndex(t, board, 's1')).toEqual(oracle('HIGH_FIRST', results, startsAt, endsAt, null, new Set([flagged])));
      expect(codeOf(await t.admin(CLOSE, { board }))).toBe('NOT_FOUND');

      const s2 = await startSeason(t, board);
      expect(s2.id).toBe('s2');
      expect((await t.gql(SEASONS, { id: board })).data).toEqual({
        board: {
          currentSeason: { id: 's2', closedAt: null },
          seasons: [
            { id: 's1', name: `Season of ${board}`, closedAt: clock.toISOString() },
            { id: 's2', name: `Season of ${board}`, closedAt: null },
          ],
        },
      });
      const next = seedResults(2, Date.parse(s2.startsAt), 100, 'n');
      await submit(t, board, next);
      // The player flagged above is still flagged: the write path keeps them out of the index.
      expect(await seasonIndex(t, board)).toEqual(oracle('HIGH_FIRST', next, Date.parse(s2.startsAt), Infinity, null, new Set([flagged])));
      // The frozen list of s1 did not move.
      expect((await frozen(t, board, 's1', 100))[0]!.player.id).toBe('just-in-time');
    });
  });

  it('a LOW_FIRST board with a coarse tie-break unit freezes the order its index showed', async () => {
    // maxScore 10^9 takes 30 bits, which leaves 23 for time: 2^40 ms / 2^23 = 131,072 ms units.
    const unitMs = 131_072;
    const board = 'coarse';
    await createBoard(t, board, { order: 'LOW_FIRST', maxScore: 1_000_000_000 });
    const season = await startSeason(t, board);
    const startsAt = Date.parse(season.startsAt);
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    // Same score, a few seconds apart inside one unit (ordered by id), and across a unit boundary.
    const results: Result[] = ids.map((playerId, i) => ({
      playerId,
      matchId: `c${i}`,
      score: i < 4 ? 5_000 : 4_000,
      region: null,
      achievedAt: startsAt + (i === 3 ? unitMs + 10 : i * 1_000),
    }));
    await submit(t, board, results);
    const expected = oracle('LOW_FIRST', results, startsAt, Infinity, null, new Set(), unitMs);
    expect(expected.map((row) => row.playerId)).toEqual(['f', 'e', 'c', 'b', 'a', 'd']);
    const shown = (await seasonIndex(t, board)).map((row) => row.playerId);
    expect(shown).toEqual(expected.map((row) => row.playerId));

    expect(codeOf(await t.admin(CLOSE, { board }))).toBeUndefined();
    const nodes = await frozen(t, board, 's1', 2);
    expect(nodes.map((node) => node.player.id)).toEqual(shown);
    // Frozen results keep the exact time each score was reached, not its unit's start.
    expect(nodes.map((node) => Date.parse(node.achievedAt))).toEqual(expected.map((row) => row.reachedAt));
  });
});

describe('the season closer, with two API processes on one database', () => {
  let a: TestApp;
  let b: TestApp;
  let clock = new Date(Math.floor(Date.now() / 1000) * 1000 - 3_600_000);
  /**
   * The transactions that froze a board's seasons: one id per frozen list and its standings (a list
   * frozen twice, or by two transactions, would show more). postgres.js's statement log shows a
   * statement once per parse and once per run, so it cannot count them.
   */
  const freezes = async (t: TestApp, board: string) =>
    (
      await t.database.sql<{ xmins: string[] }[]>`
        select array(select distinct xmin::text from frozen_buckets where board_id = ${board}
                     union select distinct xmin::text from frozen_standings where board_id = ${board}) as xmins`
    )[0]!.xmins;
  /** How many passes each process's closer has begun: each begins with its look for seasons due. */
  const passes = { a: 0, b: 0 };
  const counting = (app: keyof typeof passes) => (statement: string) => {
    if (/from "seasons" where \("seasons"\."closed_at" is null and "seasons"\."ends_at" is not null/.test(statement)) passes[app] += 1;
  };
  /** Waits until both closers have done `count` whole passes from now (a pass under way now is not one). */
  async function passesOfBoth(count: number): Promise<void> {
    const from = { ...passes };
    await until(() => passes.a > from.a + count && passes.b > from.b + count, 10_000, `${count} passes of both closers`, 20);
  }

  beforeAll(async () => {
    a = await startTestApp({ now: () => clock, seasonCloseIntervalMs: 50, onQuery: counting('a') });
    b = await startTestApp({ now: () => clock, seasonCloseIntervalMs: 50, onQuery: counting('b'), shareStoresOf: a });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('closes a season whose endsAt has passed once, and drops a key written after the close', async () => {
    const board = 'auto';
    await createBoard(a, board);
    const season = await startSeason(a, board, new Date(clock.getTime() + 60_000));
    const startsAt = Date.parse(season.startsAt);
    const results = seedResults(3, startsAt, 200);
    await submit(b, board, results.slice(0, 100));
    await submit(a, board, results.slice(100));
    // Not closed by passes that ran before the season's end, however many.
    await passesOfBoth(2);
    expect((await b.gql(SEASONS, { id: board })).data).toMatchObject({ board: { currentSeason: { id: 's1', closedAt: null } } });
    expect(await freezes(a, board)).toEqual([]);

    // Nor by passes after its end within the board's grace (300 s) and the settle margin (the
    // test apps': their request bound, 30 s, plus 5 s), however many.
    clock = new Date(Date.parse(season.endsAt!) + 300_000 + 35_000 - 1);
    await passesOfBoth(2);
    expect(await freezes(a, board)).toEqual([]);
    clock = new Date(Date.parse(season.endsAt!) + 300_000 + 35_000);
    await expect
      .poll(async () => (await a.gql<{ board: { seasons: Season[] } }>(SEASONS, { id: board })).data!.board.seasons[0]!.closedAt, { timeout: 10_000 })
      .toBe(clock.toISOString());
    // Several more passes of both closers.
    await passesOfBoth(3);
    // One transaction froze the season's two lists (global and eu).
    expect(await freezes(a, board)).toHaveLength(1);
    expect(fromNodes(await frozen(b, board, 's1', 100))).toEqual(asFrozen(oracle('HIGH_FIRST', results, startsAt, Date.parse(season.endsAt!))));
    expect(await keyCount(a, board, 's1')).toBe(0);

    // A process whose cache still showed the season open writes into its key after the close.
    await a.redis.zadd(`lb:{${board}:SEASON:s1}`, 1, 'straggler');
    await expect.poll(() => keyCount(a, board, 's1'), { timeout: 5_000 }).toBe(0);
  });

  it('two processes closing the same season at the same moment: one closes and freezes, the other finds it closed', async () => {
    const board = 'race';
    await createBoard(a, board);
    const season = await startSeason(a, board);
    const results = seedResults(4, Date.parse(season.startsAt), 100);
    await submit(a, board, results);
    const [boardA, boardB] = await Promise.all([a.app.parts.boards.find(board), b.app.parts.boards.find(board)]);
    const closed = await Promise.all([closeSeasonJob(a.app.parts, boardA!, 's1'), closeSeasonJob(b.app.parts, boardB!, 's1')]);
    expect(closed.filter((s) => s !== null).map((s) => s?.id)).toEqual(['s1']);
    expect(await freezes(a, board)).toHaveLength(1);
    expect(fromNodes(await frozen(a, board, 's1', 100))).toEqual(asFrozen(oracle('HIGH_FIRST', results, Date.parse(season.startsAt), Infinity)));
  });
});
