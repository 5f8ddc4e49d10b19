import { createClient } from 'graphql-ws';
import { beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { CalendarPeriod } from '../src/model/board.js';
import { parseBucketLabel } from '../src/model/buckets.js';
import type { BoardBucket } from '../src/ranking/index.js';
import { closeCalendarLists } from '../src/writes/close-buckets.js';
import { movableClock } from './helpers/clock.js';
import { type OracleEntry, type OracleResult, bucketId, foldResults, rankEntries } from './helpers/oracle.js';
import { seeded } from './helpers/random.js';
import { type RedisClusterFixture, startRedisCluster } from './helpers/redis-cluster.js';
import { type TestApp, codeOf, startTestApp } from './helpers/test-app.js';

/**
 * Reads of closed buckets (issue 21): once a day, a week or a month has closed (its end plus the
 * board's grace) and been frozen, every read of it (top, standing, around, friends, pages, size,
 * each rank style, topChanged's first view) is served from its frozen standings, and answers what
 * the live bucket answered at its end; both equal an independent model of the results
 * (helpers/oracle.ts). The closes are the closer's own (writes/close-buckets.ts closeCalendarLists:
 * frozen, then the Redis keys dropped), so an answer after the close can only come from PostgreSQL.
 */

// A date to come (2037 has 2026's calendar): the app sets Redis expiries from its clock. Sunday 31
// May 2037 is the last day of ISO week 2037-W22 and of May, so its day, week and month close
// together; in Asia/Tokyo (UTC+9, no daylight-saving time) they end nine hours earlier.
const START = new Date('2037-05-31T13:00:00.000Z');
const GRACE_MS = 300_000;
const HOUR_MS = 3_600_000;
const JP_OFFSET_MS = 9 * HOUR_MS;
const JP_END = Date.parse('2037-05-31T15:00:00.000Z');
const UTC_END = Date.parse('2037-06-01T00:00:00.000Z');
const LABELS: Record<CalendarPeriod, string> = { DAILY: '2037-05-31', WEEKLY: '2037-W22', MONTHLY: '2037-05' };
const PERIODS: CalendarPeriod[] = ['DAILY', 'WEEKLY', 'MONTHLY'];

type Style = 'ORDINAL' | 'COMPETITION' | 'DENSE';

interface Spec {
  id: string;
  order: 'HIGH_FIRST' | 'LOW_FIRST';
  aggregate: 'BEST' | 'SUM';
  rankStyle: 'ORDINAL' | 'DENSE';
  shards: number;
}

const SPECS: Spec[] = [
  { id: 'best-1', order: 'HIGH_FIRST', aggregate: 'BEST', rankStyle: 'ORDINAL', shards: 1 },
  { id: 'best-8', order: 'HIGH_FIRST', aggregate: 'BEST', rankStyle: 'ORDINAL', shards: 8 },
  { id: 'dense-1', order: 'LOW_FIRST', aggregate: 'SUM', rankStyle: 'DENSE', shards: 1 },
  { id: 'dense-8', order: 'LOW_FIRST', aggregate: 'SUM', rankStyle: 'DENSE', shards: 8 },
];

const stylesOf = (spec: Pick<Spec, 'rankStyle'>): Style[] => (spec.rankStyle === 'DENSE' ? ['ORDINAL', 'COMPETITION', 'DENSE'] : ['ORDINAL', 'COMPETITION']);

/** The players: plain ids, and a few that sort differently in UTF-8 than in JavaScript. */
const PLAYERS = [...Array.from({ length: 30 }, (_, i) => `p${String(i).padStart(2, '0')}`), 'Zoë', '選手', '🎲dice'];
const FRIENDS: Record<string, string[]> = { p01: ['p02', 'p03', 'Zoë', '選手', 'nobody'] };
const PROBED = ['p01', 'p07', '選手', 'nobody'];

interface Result extends OracleResult {
  board: string;
  matchId: string;
}

/** Results of one board: many on the last day (the global one and Tokyo's), the rest over May; scores tie often. */
function resultsOf(spec: Spec, seed: number, count: number): Result[] {
  const next = seeded(seed);
  return Array.from({ length: count }, (_, i) => ({
    board: spec.id,
    playerId: next.pick(PLAYERS),
    matchId: `m${i}`,
    score: spec.aggregate === 'SUM' ? next.int(0, 4) : 10 * next.int(0, 7),
    region: next.chance(0.5) ? 'jp' : null,
    achievedAt: new Date(START.getTime() - (next.chance(0.6) ? next.int(0, 20 * HOUR_MS) : next.int(20 * HOUR_MS, 25 * 24 * HOUR_MS))),
    metadata: next.chance(0.5) ? { lap: i, car: next.pick(['R8', 'Zoë', '選手']) } : undefined,
  }));
}

/** A list of a board: a period's bucket on the last day, globally or Tokyo's. */
interface List {
  spec: Spec;
  period: CalendarPeriod;
  region: 'jp' | null;
}

const listsOf = (specs: Spec[], region: 'jp' | null): List[] => specs.flatMap((spec) => PERIODS.map((period) => ({ spec, period, region })));
const nameOf = (list: List) => `${list.spec.id} ${list.period} ${LABELS[list.period]} ${list.region ?? 'global'}`;

/**
 * The oracle's ranked entries of a list. Tokyo's calendar, worked out here by shifting each result
 * by the zone's fixed offset and labelling it as UTC (the oracle's own labels), then shifting back.
 */
function modelOf(list: List, results: readonly Result[]): OracleEntry[] {
  const board = { id: list.spec.id, order: list.spec.order, aggregate: list.spec.aggregate, periods: [list.period] };
  const mine = results.filter((r) => r.board === list.spec.id && (list.region === null || r.region === list.region));
  const shift = list.region === 'jp' ? JP_OFFSET_MS : 0;
  const folded = foldResults(
    board,
    mine.map((r) => ({ ...r, region: null, achievedAt: new Date(r.achievedAt.getTime() + shift) })),
  );
  const entries = [...(folded.get(bucketId(list.period, LABELS[list.period], null))?.values() ?? [])].map((e) => ({ ...e, reachedAt: e.reachedAt - shift }));
  return rankEntries(board, entries);
}

/** Each entry's rank in `style`, from the ranked entries alone. */
function ranksOf(ranked: readonly { score: number }[], style: Style): number[] {
  let distinct = 0;
  return ranked.map((entry, i) => {
    const first = ranked.findIndex((other) => other.score === entry.score);
    if (first === i) distinct++;
    return style === 'ORDINAL' ? i + 1 : style === 'COMPETITION' ? first + 1 : distinct;
  });
}

interface Row {
  rank: number;
  score: number;
  percentile: number;
  achievedAt: string;
  metadata: unknown;
  player: { id: string };
}
const ROW = 'rank score percentile achievedAt metadata player { id }';

/** What the model says every read of a list answers in `style`. */
function expectedViews(ranked: OracleEntry[], style: Style) {
  const ranks = ranksOf(ranked, style);
  const size = ranked.length;
  const rows: Row[] = ranked.map((entry, i) => ({
    rank: ranks[i]!,
    score: entry.score,
    percentile: (100 * (size - ranks[i]!)) / size,
    achievedAt: new Date(entry.reachedAt).toISOString(),
    metadata: entry.metadata ?? null,
    player: { id: entry.playerId },
  }));
  const at = (id: string) => ranked.findIndex((entry) => entry.playerId === id);
  const views: Record<string, unknown> = { top: { size, entries: rows.slice(0, 100) }, board: { size } };
  PROBED.forEach((id, i) => {
    views[`s${i}`] = at(id) < 0 ? null : rows[at(id)];
    views[`a${i}`] = at(id) < 0 ? [] : rows.slice(Math.max(0, at(id) - 2), at(id) + 3);
  });
  const circle = new Set(['p01', ...FRIENDS.p01!]);
  views.friends = rows.filter((row) => circle.has(row.player.id));
  return { views, pages: rows, watched: rows.slice(0, 50) };
}

const WHERE = 'board: $b, period: $p, bucket: $k, region: $r, rankStyle: $s';

/** Every read of a list in one style, through the API: one document for the single reads, then every page, then topChanged's first view. */
async function readViews(t: TestApp, list: List, style: Style) {
  const variables = { b: list.spec.id, p: list.period, k: LABELS[list.period], r: list.region, s: style };
  const probes = PROBED.map(
    (id, i) => `
      s${i}: standing(${WHERE}, playerId: ${JSON.stringify(id)}) { ${ROW} }
      a${i}: around(${WHERE}, playerId: ${JSON.stringify(id)}, radius: 2) { ${ROW} }`,
  );
  const answer = await t.gql<Record<string, unknown>>(
    `query($b: ID!, $p: Period!, $k: String, $r: String, $s: RankStyle) {
      top(${WHERE}, limit: 100) { size entries { ${ROW} } }
      board(id: $b) { size(period: $p, bucket: $k, region: $r) }
      friends(${WHERE}, playerId: "p01") { ${ROW} }
      ${probes.join('\n')}
    }`,
    variables,
  );
  expect(answer.errors, `${nameOf(list)} ${style}`).toBeUndefined();
  return { views: answer.data!, pages: await readPages(t, list, style, 7), watched: await firstView(t, list, style) };
}

/** Every page of a list, `first` a page, walked by cursor. */
async function readPages(t: TestApp, list: List, style: Style, first: number, after: string | null = null): Promise<Row[]> {
  type Page = { standings: { edges: { node: Row }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } };
  const rows: Row[] = [];
  for (let page = 0; page < 200; page++) {
    const answer = await t.gql<Page>(
      `query($b: ID!, $p: Period!, $k: String, $r: String, $s: RankStyle, $first: Int!, $after: String) {
        standings(${WHERE}, first: $first, after: $after) { edges { node { ${ROW} } } pageInfo { hasNextPage endCursor } }
      }`,
      { b: list.spec.id, p: list.period, k: LABELS[list.period], r: list.region, s: style, first, after },
    );
    expect(answer.errors, `${nameOf(list)} ${style} page ${page}`).toBeUndefined();
    const { edges, pageInfo } = answer.data!.standings;
    rows.push(...edges.map((edge) => edge.node));
    if (!pageInfo.hasNextPage) return rows;
    after = pageInfo.endCursor;
  }
  throw new Error('too many pages');
}

/** topChanged's first view of a list over graphql-ws, and whether the subscription then completed of itself (a closed bucket's does). */
async function firstView(t: TestApp, list: List, style: Style): Promise<Row[]> {
  const client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  try {
    const views = client.iterate<{ topChanged: { entries: Row[] } }>({
      query: `subscription($b: ID!, $p: Period!, $k: String, $r: String, $s: RankStyle) { topChanged(${WHERE}, limit: 50) { entries { ${ROW} } } }`,
      variables: { b: list.spec.id, p: list.period, k: LABELS[list.period], r: list.region, s: style },
    });
    const view = await views.next();
    await views.return?.();
    const value = view.value as { data?: { topChanged: { entries: Row[] } }; errors?: unknown };
    expect(value.errors, `${nameOf(list)} ${style} topChanged`).toBeUndefined();
    return value.data!.topChanged.entries;
  } finally {
    await client.dispose();
  }
}

/** The lists as the closer names them. */
async function bucketsOf(t: TestApp, lists: List[]): Promise<BoardBucket[]> {
  return Promise.all(
    lists.map(async (list) => {
      const board = (await t.app.parts.boards.find(list.spec.id))!;
      return { board, bucket: parseBucketLabel(board, list.period, LABELS[list.period], list.region)!, region: list.region };
    }),
  );
}

/** Closes lists as the bucket closer does: frozen in one freeze, then their keys dropped and their tops announced. */
async function close(t: TestApp, lists: List[]): Promise<void> {
  const { storage, index, seasons, log } = t.app.parts;
  await closeCalendarLists({ storage, index, seasons, now: () => t.app.parts.now(), log }, await bucketsOf(t, lists));
  for (const list of lists) {
    const [marker] = await t.database.sql<{ size: number }[]>`
      select size from frozen_buckets where board_id = ${list.spec.id} and period = ${list.period} and bucket = ${LABELS[list.period]} and region = ${list.region ?? ''}`;
    expect(marker, `${nameOf(list)} frozen`).toBeDefined();
  }
}

/** Creates the boards (Tokyo's region on its own calendar), the friends, and submits the results. */
async function seed(t: TestApp, specs: Spec[], results: readonly Result[]): Promise<void> {
  for (const spec of specs) {
    const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
      input: {
        id: spec.id,
        title: spec.id,
        order: spec.order,
        aggregate: spec.aggregate,
        rankStyle: spec.rankStyle,
        shards: spec.shards,
        maxScore: 1_000,
        topSize: 50,
        periods: ['ALL_TIME', 'MONTHLY', 'WEEKLY', 'DAILY'],
        regions: ['jp'],
        regionTimeZones: [{ region: 'jp', timeZone: 'Asia/Tokyo' }],
      },
    });
    expect(created.errors, spec.id).toBeUndefined();
  }
  expect((await t.server(`mutation($id: ID!, $f: [ID!]!) { setFriends(playerId: $id, friendIds: $f) }`, { id: 'p01', f: FRIENDS.p01 })).errors).toBeUndefined();
  for (let i = 0; i < results.length; i += 100) {
    const inputs = results.slice(i, i + 100).map((r) => ({ ...r, achievedAt: r.achievedAt.toISOString() }));
    const submitted = await t.server(`mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`, { inputs });
    expect(submitted.errors).toBeUndefined();
  }
}

/**
 * The scenario on one deployment: Tokyo's lists, then the global ones, each read every way at
 * their end (still live, within the grace) against the model, closed, and read again: every read
 * equal to what the live list answered, from the frozen standings.
 */
function closesAndReads(setup: () => Promise<{ t: TestApp; clock: ReturnType<typeof movableClock> }>, specs: Spec[]) {
  let t: TestApp;
  let clock: ReturnType<typeof movableClock>;
  const results = specs.flatMap((spec, i) => resultsOf(spec, 21 + i, 160));

  beforeAll(async () => {
    ({ t, clock } = await setup());
    await seed(t, specs, results);
  }, 120_000);

  const stage = async (region: 'jp' | null, end: number) => {
    const lists = listsOf(specs, region);
    clock.advance(end + GRACE_MS - 1_000 - clock.now().getTime());
    const live = new Map<string, Awaited<ReturnType<typeof readViews>>>();
    for (const list of lists) {
      const ranked = modelOf(list, results);
      expect(ranked.length, `${nameOf(list)} has standings`).toBeGreaterThan(5);
      for (const style of stylesOf(list.spec)) {
        const read = await readViews(t, list, style);
        expect(read, `${nameOf(list)} ${style}, live at its end`).toEqual(expectedViews(ranked, style));
        live.set(`${nameOf(list)} ${style}`, read);
      }
    }
    clock.advance(2_000);
    await close(t, lists);
    for (const list of lists) {
      for (const style of stylesOf(list.spec)) {
        expect(await readViews(t, list, style), `${nameOf(list)} ${style}, closed`).toEqual(live.get(`${nameOf(list)} ${style}`));
      }
    }
  };

  it("Tokyo's day, week and month: read live at their end, closed, and read from their frozen standings, equal", async () => {
    await stage('jp', JP_END);
  }, 240_000);

  it('the global day, week and month likewise, Tokyo’s still read frozen', async () => {
    await stage(null, UTC_END);
    // Tokyo's lists, closed nine hours before, still answer from their frozen standings.
    for (const list of listsOf(specs.slice(0, 1), 'jp'))
      expect((await readViews(t, list, 'COMPETITION')).views).toEqual(expectedViews(modelOf(list, results), 'COMPETITION').views);
  }, 240_000);
}

describe('frozen day, week and month, with a region on its own calendar, on one Redis node (1 and 8 shards)', { timeout: 240_000 }, () => {
  closesAndReads(async () => {
    const clock = movableClock({ startsAt: START, runs: false });
    return { t: await startTestApp({ now: clock.now }), clock };
  }, SPECS);
});

describe('frozen day, week and month on a Redis Cluster', { timeout: 240_000 }, () => {
  let cluster: RedisClusterFixture;
  closesAndReads(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
    const clock = movableClock({ startsAt: START, runs: false });
    return { t: await startTestApp({ now: clock.now, redisCluster: cluster }), clock };
  }, [SPECS[1]!, SPECS[2]!]);
});

/** One board, one day: the closed day's reads after a flag and an erasure, its cursors across the close, its costs, its retention. */
describe('a frozen day: flags, erasure, cursors across the close, costs and retention', { timeout: 120_000 }, () => {
  const spec: Spec = { id: 'race', order: 'HIGH_FIRST', aggregate: 'BEST', rankStyle: 'ORDINAL', shards: 1 };
  const day: List = { spec, period: 'DAILY', region: null };
  const VICTIM = 'victim';
  // Everybody on the last day, the victim first of a run of ties (earliest), so its rank decides the others' COMPETITION ranks.
  const results: Result[] = [
    ...Array.from({ length: 24 }, (_, i) => ({
      board: spec.id,
      playerId: PLAYERS[i]!,
      matchId: `d${i}`,
      score: 10 * (i % 5),
      region: null,
      achievedAt: new Date(START.getTime() - HOUR_MS + i * 1_000),
      metadata: { i },
    })),
    {
      board: spec.id,
      playerId: VICTIM,
      matchId: 'v',
      score: 30,
      region: null,
      achievedAt: new Date(START.getTime() - 2 * HOUR_MS),
      metadata: { secret: true },
    },
  ];
  const statements: string[] = [];
  let t: TestApp;
  let clock: ReturnType<typeof movableClock>;
  let live: Awaited<ReturnType<typeof readViews>>;
  /** Cursors the live day issued: after its 5th standing, and after the victim's. */
  const cursors: { fifth?: string; victim?: string } = {};

  beforeAll(async () => {
    clock = movableClock({ startsAt: START, runs: false });
    t = await startTestApp({ now: clock.now, onQuery: (statement) => statements.push(statement) });
    await seed(t, [spec], results);
    clock.advance(UTC_END + GRACE_MS - 1_000 - clock.now().getTime());
    live = await readViews(t, day, 'COMPETITION');
    expect(live).toEqual(expectedViews(modelOf(day, results), 'COMPETITION'));
    type Page = { standings: { edges: { cursor: string; node: { player: { id: string } } }[] } };
    const page = await t.gql<Page>(
      `query { standings(board: "race", period: DAILY, bucket: "2037-05-31", first: 25) { edges { cursor node { player { id } } } } }`,
    );
    const edges = page.data!.standings.edges;
    cursors.fifth = edges[4]!.cursor;
    cursors.victim = edges.find((edge) => edge.node.player.id === VICTIM)!.cursor;
    clock.advance(2_000);
    await close(t, [day]);
  }, 120_000);

  it('a page cursor the live day issued goes on after its player’s frozen rank', async () => {
    const rest = await readPages(t, day, 'ORDINAL', 4, cursors.fifth);
    expect(rest).toEqual(expectedViews(modelOf(day, results), 'ORDINAL').pages.slice(5));
    // Frozen cursors go on as well, and are refused for another list.
    const first = await t.gql<{ standings: { pageInfo: { endCursor: string } } }>(
      `query { standings(board: "race", period: DAILY, bucket: "2037-05-31", first: 3) { pageInfo { endCursor } } }`,
    );
    const foreign = await t.gql(
      `query($a: String) { standings(board: "race", period: WEEKLY, bucket: "2037-W22", first: 3, after: $a) { edges { cursor } } }`,
      {
        a: first.data!.standings.pageInfo.endCursor,
      },
    );
    expect(codeOf(foreign)).toBe('BAD_USER_INPUT');
  });

  it("a player's board scores (admin) show their standing in the closed day, the frozen one", async () => {
    type Scores = { player: { boardScores: { period: string; bucket: string; standing: { rank: number; score: number } | null }[] } };
    expect((await t.server(`mutation { upsertPlayer(input: { id: "p07", displayName: "Seven" }) { id } }`)).errors).toBeUndefined();
    const scores = await t.admin<Scores>(`query { player(id: "p07") { boardScores { period bucket standing { rank score } } } }`);
    expect(scores.errors).toBeUndefined();
    const ranked = modelOf(day, results);
    const at = ranked.findIndex((entry) => entry.playerId === 'p07');
    expect(scores.data!.player.boardScores.find((row) => row.period === 'DAILY' && row.bucket === '2037-05-31')?.standing).toEqual({
      rank: at + 1,
      score: ranked[at]!.score,
    });
  });

  it('a flag set after the close leaves the frozen day as it was', async () => {
    expect((await t.admin(`mutation { flagPlayer(playerId: "p03", reason: "late report") { id } }`)).errors).toBeUndefined();
    expect(await readViews(t, day, 'COMPETITION')).toEqual(live);
  });

  it('an erasure takes the player out of every list; the others keep their ranks, the size and the COMPETITION ranks count them still', async () => {
    expect((await t.admin(`mutation { deletePlayer(playerId: "${VICTIM}") }`)).errors).toBeUndefined();
    const ranked = modelOf(day, results);
    const expected = expectedViews(ranked, 'COMPETITION');
    const without = (rows: Row[]) => rows.filter((row) => row.player.id !== VICTIM);
    const after = await readViews(t, day, 'COMPETITION');
    expect(after.pages).toEqual(without(expected.pages));
    expect(after.watched).toEqual(without(expected.watched));
    expect(after.views.top).toEqual({ size: ranked.length, entries: without(expected.pages) });
    expect(after.views.board).toEqual({ size: ranked.length });
    // A tie of the victim's score still ranks from the victim's rank, which nobody holds now.
    const victimRank = ranked.findIndex((entry) => entry.playerId === VICTIM) + 1;
    expect(after.pages.filter((row) => row.score === 30).map((row) => row.rank)).toEqual(
      ranked
        .filter((e) => e.score === 30)
        .slice(1)
        .map(() => victimRank),
    );
    const own = await t.gql<Record<string, unknown>>(
      `query { s: standing(board: "race", period: DAILY, bucket: "2037-05-31", playerId: "${VICTIM}") { rank } a: around(board: "race", period: DAILY, bucket: "2037-05-31", playerId: "${VICTIM}") { rank } }`,
    );
    expect(own.data).toEqual({ s: null, a: [] });
    // A cursor the live day issued after the erased player names no place any more.
    const refused = await t.gql(
      `query($a: String) { standings(board: "race", period: DAILY, bucket: "2037-05-31", first: 3, after: $a) { edges { cursor } } }`,
      {
        a: cursors.victim,
      },
    );
    expect(codeOf(refused)).toBe('BAD_USER_INPUT');
    expect(refused.errors?.[0]?.message).toMatch(/closed/);
  });

  it('a read of the open day asks nothing of the closed buckets; a standing of the closed day is one statement, its marker remembered', async () => {
    // The statements a read of a closed bucket sends (the app's own jobs send others meanwhile).
    const frozenReads = () => statements.filter((statement) => /frozen_(buckets|standings)/.test(statement) && !/insert into|delete from/.test(statement));
    statements.length = 0;
    const reads = `query($k: String) {
      top(board: "race", period: DAILY, bucket: $k, limit: 5) { entries { rank score } }
      standing(board: "race", period: DAILY, bucket: $k, playerId: "p01") { rank score }
      around(board: "race", period: DAILY, bucket: $k, playerId: "p01", radius: 1) { rank score }
      standings(board: "race", period: DAILY, bucket: $k, first: 3) { edges { cursor node { rank } } }
      board(id: "race") { size(period: DAILY, bucket: $k) }
    }`;
    // The open day (the clock's): before its close time nothing asks whether it closed.
    const current = await t.gql(reads, { k: null });
    expect(current.errors).toBeUndefined();
    expect(frozenReads()).toEqual([]);
    // The closed day's marker is looked up once, then remembered: a standing is then one statement, on frozen_standings.
    expect((await t.gql(reads, { k: '2037-05-31' })).errors).toBeUndefined();
    statements.length = 0;
    const standing = await t.gql(`query { standing(board: "race", period: DAILY, bucket: "2037-05-31", playerId: "p01") { rank score } }`);
    expect(standing.errors).toBeUndefined();
    expect(frozenReads()).toHaveLength(1);
    expect(frozenReads()[0]).toMatch(/from frozen_standings/);
  });

  it('past its retention a frozen day answers NOT_FOUND', async () => {
    const board = await t.gql<{ board: { retention: { daily: number } } }>(`query { board(id: "race") { retention { daily } } }`);
    clock.advance(UTC_END + (board.data!.board.retention.daily + 1) * 24 * HOUR_MS - clock.now().getTime());
    expect(codeOf(await t.gql(`query { top(board: "race", period: DAILY, bucket: "2037-05-31") { size } }`))).toBe('NOT_FOUND');
  });
});

describe('a standing in a frozen bucket of 100,000 players is an index probe', { timeout: 120_000 }, () => {
  it('EXPLAIN: frozen_standings_player_idx, no sequential scan, whatever the bucket', async () => {
    const t = await startTestApp();
    const { sql } = t.database;
    // Ten buckets of 10,000 players each, as the closer writes them.
    await sql`
      insert into frozen_standings (board_id, period, bucket, region, rank, player_id, score, reached_at)
      select 'big', 'DAILY', '2037-05-' || lpad((b + 1)::text, 2, '0'), '', r, 'player-' || r, 100000 - r, now()
      from generate_series(0, 9) b, generate_series(1, 10000) r`;
    await sql`analyze frozen_standings`;
    const plan = await sql<{ 'QUERY PLAN': string }[]>`
      explain select rank, player_id, score from frozen_standings
      where player_id = any(${['player-5000']}::text[]) and board_id = 'big' and period = 'DAILY' and region = '' and bucket = '2037-05-04'`;
    const text = plan.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).toMatch(/frozen_standings_player_idx/);
    expect(text).not.toMatch(/Seq Scan/);
  });
});

describe('no kept answer of a live bucket outlives its close; a watched bucket that closes sends no more views', { timeout: 120_000 }, () => {
  const spec: Spec = { id: 'cached', order: 'HIGH_FIRST', aggregate: 'BEST', rankStyle: 'ORDINAL', shards: 1 };
  const day: List = { spec, period: 'DAILY', region: null };
  const results = resultsOf(spec, 5, 60);
  let t: TestApp;
  let clock: ReturnType<typeof movableClock>;

  beforeAll(async () => {
    clock = movableClock({ startsAt: START, runs: false });
    t = await startTestApp({ now: clock.now });
    await seed(t, [spec], results);
  });

  it('a top kept by the response cache (POST: cached bodies; GET: the plugin) is read again once its bucket has closed', async () => {
    const query = `query { top(board: "cached", period: DAILY, bucket: "2037-05-31", limit: 5) { asOf entries { rank score player { id } } } }`;
    const get = async () => (await (await fetch(`${t.url}/graphql?query=${encodeURIComponent(query)}`)).json()) as { data: { top: { asOf: string } } };
    const post = async () => (await t.gql<{ top: { asOf: string } }>(query)).data!;
    // Just before the close: the answer is kept and handed out again, the very view it was built from.
    clock.advance(UTC_END + GRACE_MS - 300 - clock.now().getTime());
    const kept = await post();
    expect((await get()).data).toEqual(kept);
    expect(await post()).toEqual(kept);
    // Past the close, still within the top cache's second: the live answer would be current but for the close.
    clock.advance(600);
    await close(t, [day]);
    const closed = await post();
    expect(closed.top.asOf).toBe(clock.now().toISOString());
    expect({ ...closed.top, asOf: null }).toEqual({ ...kept.top, asOf: null });
    expect((await get()).data.top.asOf).toBe(clock.now().toISOString());
  });

  it('topChanged of a closed bucket: its final view, then the subscription completes; a watch of a bucket that closes ends after its last view', async () => {
    const client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    const watch = (bucket: string) =>
      client.iterate<{ topChanged: { entries: { rank: number }[] } }>({
        query: `subscription($k: String) { topChanged(board: "cached", period: WEEKLY, bucket: $k, limit: 5) { entries { rank } } }`,
        variables: { k: bucket },
      });
    try {
      // The week is still open (its end is the day's, its lists are not closed): a live watch.
      const week = watch('2037-W22');
      expect((await week.next()).done).toBe(false);
      await close(t, [{ spec, period: 'WEEKLY', region: null }]);
      expect(await week.next()).toEqual({ done: true, value: undefined });
      // Watched once closed: the frozen view at once, then the end.
      const closed = watch('2037-W22');
      const first = await closed.next();
      expect(first.done).toBe(false);
      expect((first.value as { data: { topChanged: { entries: unknown[] } } }).data.topChanged.entries).toHaveLength(5);
      expect(await closed.next()).toEqual({ done: true, value: undefined });
    } finally {
      await client.dispose();
    }
  });

  it('raising the grace afterwards reopens nothing: the closed day is still read frozen', async () => {
    const top = `query { top(board: "cached", period: DAILY, bucket: "2037-05-31", limit: 5) { size entries { rank score player { id } } } }`;
    const before = await t.gql<{ top: { size: number; entries: unknown[] } }>(top);
    expect(before.data?.top.size).toBe(modelOf(day, results).length);
    expect(before.data?.top.entries).toHaveLength(5);
    // The day's end plus three days lies ahead: by the clock alone it would be open again, and its keys are gone.
    expect((await t.admin(`mutation { updateBoard(input: { id: "cached", closeGraceSeconds: 259200 }) { closeGraceSeconds } }`)).errors).toBeUndefined();
    // Past the top cache's second, so the top is read again (by the clock: the live keys are gone).
    clock.advance(2_000);
    expect(await t.gql(top)).toEqual(before);
  });
});

describe('a closed season read with period SEASON', { timeout: 120_000 }, () => {
  let t: TestApp;
  const SEASON_ROW = 'rank score achievedAt metadata player { id }';
  const page = (board: string, region: string | null) =>
    t.gql<{ standings: { edges: { node: Row }[] } }>(
      `query($b: ID!, $r: String) { standings(board: $b, period: SEASON, bucket: "s1", region: $r, first: 100, rankStyle: COMPETITION) { edges { node { ${SEASON_ROW} } } } }`,
      { b: board, r: region },
    );

  beforeAll(async () => {
    t = await startTestApp();
    for (const id of ['league', 'old-league']) {
      const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
        input: { id, title: id, maxScore: 1_000, periods: ['ALL_TIME', 'SEASON'], regions: ['eu'] },
      });
      expect(created.errors).toBeUndefined();
      expect((await t.admin(`mutation($b: ID!) { startSeason(board: $b, name: "One") { id } }`, { b: id })).errors).toBeUndefined();
      const inputs = Array.from({ length: 12 }, (_, i) => ({
        board: id,
        playerId: `q${i}`,
        matchId: `m${i}`,
        score: 5 * (i % 4),
        region: i % 2 ? 'eu' : null,
        metadata: { i },
      }));
      expect((await t.server(`mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`, { inputs })).errors).toBeUndefined();
    }
  });

  it('answers the final standings, as the open season answered them; seasonResults answers the same rows', async () => {
    const global = await page('league', null);
    const eu = await page('league', 'eu');
    expect(global.errors).toBeUndefined();
    expect(eu.data!.standings.edges.length).toBe(6);
    expect((await t.admin(`mutation { closeSeason(board: "league") { id } }`)).errors).toBeUndefined();
    expect(await page('league', null)).toEqual(global);
    expect(await page('league', 'eu')).toEqual(eu);
    const results = await t.gql<{ seasonResults: { edges: { node: Row }[] } }>(
      `query { seasonResults(board: "league", season: "s1", first: 100, rankStyle: COMPETITION) { edges { node { ${SEASON_ROW} } } } }`,
    );
    expect(results.data!.seasonResults.edges).toEqual(global.data!.standings.edges);
  });

  it('a season closed before regional lists were frozen has none for its region: NOT_FOUND, saying so', async () => {
    expect((await t.admin(`mutation { closeSeason(board: "old-league") { id } }`)).errors).toBeUndefined();
    // As a season closed by an earlier version left it: its global list alone.
    await t.database.sql`delete from frozen_standings where board_id = 'old-league' and region = 'eu'`;
    await t.database.sql`delete from frozen_buckets where board_id = 'old-league' and region = 'eu'`;
    const refused = await page('old-league', 'eu');
    expect(codeOf(refused)).toBe('NOT_FOUND');
    expect(refused.errors?.[0]?.message).toMatch(/before regional standings were frozen/);
    expect((await page('old-league', null)).data!.standings.edges).toHaveLength(12);
  });
});
