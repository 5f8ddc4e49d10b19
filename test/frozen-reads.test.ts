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
import { type TestApp, startTestApp } from './helpers/test-app.js';

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
