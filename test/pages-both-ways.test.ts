import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisClusterFixture, startRedisCluster } from './helpers/redis-cluster.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { watchCommands } from './helpers/monitor.js';
import { seeded } from './helpers/random.js';
import { until } from './helpers/wait.js';

/**
 * Issue 60: standings and seasonResults page backwards (`last`, `before`) and from any rank
 * (`fromRank`), with exact PageInfo at both ends. Every page is checked against an oracle that
 * sorts the submitted results itself (score, then each tie-break column in its own direction, then
 * the earlier time, then the player id's bytes descending), never against the service's output:
 * on a bucket of one sorted set, of 8 shards, of 8 shards on a Redis Cluster of three masters, on a
 * board whose time is in the member (tie-break columns too wide for the double), on a closed
 * bucket (frozen standings with erased rows among them) and on a closed season's results. A walk
 * backwards is a walk forwards reversed, with the same cursors, and stays so while other rows move.
 */

// A date to come: the app sets Redis expiries from this clock, so a past date would expire the keys at once.
const NOW = new Date('2037-11-29T12:00:00.000Z');
const MINUTE = 60_000;

/** Ids whose byte order differs from naive or locale order (case, accents, U+FF21, an astral emoji), and ids that prefix one another. */
const ODD_IDS = ['Zoë', 'zoë', 'zoe', 'Émile', 'émile', 'e', 'E', 'Ａ', '😀', '日本', 'p1', 'p10', 'p100', 'a b'];

/** Two columns: with a 31-bit score, 52 bits, which leaves no room for the time in the double (ranking/members.ts). */
const WIDE_COLUMNS = [
  { name: 'laps', order: 'HIGH_FIRST', max: 2 ** 12 - 1 },
  { name: 'ms', order: 'LOW_FIRST', max: 2 ** 9 - 1 },
] as const;

interface Row {
  playerId: string;
  score: number;
  values: number[];
  at: number;
}

interface Kind {
  shards: number;
  wide: boolean;
}

// ---- the oracle: no code of the service ----

const better = (order: string, x: number, y: number) => (x === y ? 0 : (order === 'HIGH_FIRST') === x > y ? -1 : 1);

/** Negative when `a` has the better result (the score, then each column): what COMPETITION ranks share. */
function compareResults(a: Row, b: Row): number {
  const byScore = better('HIGH_FIRST', a.score, b.score);
  if (byScore !== 0) return byScore;
  for (let i = 0; i < a.values.length; i++) {
    const byColumn = better(WIDE_COLUMNS[i]!.order, a.values[i]!, b.values[i]!);
    if (byColumn !== 0) return byColumn;
  }
  return 0;
}

/** Rank order: the better result, then the earlier time, then the larger player id in UTF-8 bytes. */
const ranked = (rows: Iterable<Row>): Row[] =>
  [...rows].sort((a, b) => compareResults(a, b) || a.at - b.at || Buffer.compare(Buffer.from(b.playerId), Buffer.from(a.playerId)));

/** A standing as a page shows it: its player and rank. */
interface Shown {
  id: string;
  rank: number;
}

// ---- the service ----

interface Edge {
  cursor: string;
  node: { rank: number; score: number; player: { id: string } };
}
interface Connection {
  edges: Edge[];
  pageInfo: { hasPreviousPage: boolean; startCursor: string | null; hasNextPage: boolean; endCursor: string | null };
}
interface PageAsk {
  first?: number;
  after?: string | null;
  last?: number;
  before?: string | null;
  fromRank?: number;
  style?: string;
}

const EDGES = 'edges { cursor node { rank score player { id } } } pageInfo { hasPreviousPage startCursor hasNextPage endCursor }';
const PAGE_VARS = '$first: Int, $after: String, $last: Int, $before: String, $fromRank: Int, $style: RankStyle';
const PAGE_ARGS = 'first: $first, after: $after, last: $last, before: $before, fromRank: $fromRank, rankStyle: $style';
const STANDINGS = `query($b: ID!, $p: Period! = ALL_TIME, $k: String, ${PAGE_VARS}) {
  standings(board: $b, period: $p, bucket: $k, ${PAGE_ARGS}) { ${EDGES} }
}`;
const SEASON_RESULTS = `query($b: ID!, $s: ID!, ${PAGE_VARS}) { seasonResults(board: $b, season: $s, ${PAGE_ARGS}) { ${EDGES} } }`;
const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`;
const SUBMIT = `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`;

type Fetch = (ask: PageAsk) => Promise<Connection>;

/** Only the arguments given: a variable left out takes the argument's default. */
const variablesOf = (ask: PageAsk) => Object.fromEntries(Object.entries(ask).filter(([, value]) => value !== undefined && value !== null));

function standingsOf(t: TestApp, board: string, bucket: { period: string; label: string } = { period: 'ALL_TIME', label: 'all' }): Fetch {
  return async (ask) => {
    const response = await t.gql<{ standings: Connection }>(STANDINGS, { b: board, p: bucket.period, k: bucket.label, ...variablesOf(ask) });
    expect(response.errors).toBeUndefined();
    return response.data!.standings;
  };
}

function seasonResultsOf(t: TestApp, board: string, season: string): Fetch {
  return async (ask) => {
    const response = await t.gql<{ seasonResults: Connection }>(SEASON_RESULTS, { b: board, s: season, ...variablesOf(ask) });
    expect(response.errors).toBeUndefined();
    return response.data!.seasonResults;
  };
}

const shownOf = (connection: Connection): Shown[] => connection.edges.map((edge) => ({ id: edge.node.player.id, rank: edge.node.rank }));

/** A page against the oracle's rows from index `from` (inclusive) to `to` (exclusive): its rows, and PageInfo at both ends. */
function expectWindow(connection: Connection, oracle: readonly Shown[], from: number, to: number): void {
  const [start, end] = [Math.max(0, from), Math.min(oracle.length, to)];
  expect(shownOf(connection)).toEqual(oracle.slice(start, end));
  expect(connection.pageInfo).toEqual({
    hasPreviousPage: start > 0,
    startCursor: connection.edges[0]?.cursor ?? null,
    hasNextPage: end < oracle.length,
    endCursor: connection.edges.at(-1)?.cursor ?? null,
  });
}

/**
 * Every way of paging a list against the oracle (its standings in order, each with the rank it is
 * served with; a frozen list's ranks may skip erased rows): walks both ways (each the other
 * reversed, with the same cursors), cursors of either direction used the other way, `last` alone,
 * and fromRank at 1, in the middle, at the last rank and past the end, with its cursors continued
 * both ways. fromRank is a position: the page starts at the first row ranked at or after it.
 */
async function expectPagesBothWays(fetch: Fetch, oracle: readonly Shown[], size: number, pageSize: number): Promise<void> {
  const n = oracle.length;
  // Forward, from the top.
  const forward: Edge[] = [];
  for (let after: string | null = null; ;) {
    const connection = await fetch({ first: pageSize, after });
    expectWindow(connection, oracle, forward.length, forward.length + pageSize);
    forward.push(...connection.edges);
    if (!connection.pageInfo.hasNextPage) break;
    after = connection.pageInfo.endCursor;
  }
  expect(forward).toHaveLength(n);
  // Backward, from the end: the same rows and cursors, reversed.
  const backward: Edge[] = [];
  for (let before: string | null = null; ;) {
    const connection = await fetch({ last: pageSize, before });
    expectWindow(connection, oracle, n - backward.length - pageSize, n - backward.length);
    backward.unshift(...connection.edges);
    if (!connection.pageInfo.hasPreviousPage) break;
    before = connection.pageInfo.startCursor;
  }
  expect(backward).toEqual(forward);
  // `last` alone, longer than the list: all of it.
  expectWindow(await fetch({ last: n + 5 }), oracle, 0, n);

  // Any row's cursor, from either walk, both ways.
  for (const i of [0, 1, Math.floor(n / 2), n - 1]) {
    expectWindow(await fetch({ last: 4, before: forward[i]!.cursor }), oracle, i - 4, i);
    expectWindow(await fetch({ first: 4, after: backward[i]!.cursor }), oracle, i + 1, i + 5);
  }

  // fromRank: at 1, at the second rank, in the middle, at the last rank, past the end.
  const lastRank = oracle.at(-1)!.rank;
  for (const rank of [1, 2, oracle[Math.floor(n / 2)]!.rank, lastRank]) {
    const from = oracle.findIndex((row) => row.rank >= rank);
    const page = await fetch({ first: 5, fromRank: rank });
    expectWindow(page, oracle, from, from + 5);
    // Its cursors continue the walk both ways.
    expectWindow(await fetch({ first: 5, after: page.pageInfo.endCursor }), oracle, from + 5, from + 10);
    if (page.pageInfo.startCursor) expectWindow(await fetch({ last: 5, before: page.pageInfo.startCursor }), oracle, from - 5, from);
  }
  for (const rank of [size + 1, size + 1_000]) {
    expect(await fetch({ first: 5, fromRank: rank })).toEqual({
      edges: [],
      pageInfo: { hasPreviousPage: n > 0, startCursor: null, hasNextPage: false, endCursor: null },
    });
  }
}

// ---- setup ----

let matches = 0;

async function createBoard(t: TestApp, id: string, kind: Pick<Kind, 'shards' | 'wide'>, extra: Record<string, unknown> = {}) {
  const input = {
    id,
    title: id,
    maxScore: kind.wide ? 2 ** 30 : 1_000_000,
    shards: kind.shards,
    ...(kind.wide ? { tieBreaks: WIDE_COLUMNS } : {}),
    ...extra,
  };
  expect((await t.admin(CREATE, { input })).errors).toBeUndefined();
}

async function submit(t: TestApp, board: string, rows: readonly Row[]) {
  const inputs = rows.map(({ playerId, score, values, at }) => ({
    board,
    playerId,
    score,
    matchId: `m${++matches}`,
    achievedAt: new Date(at).toISOString(),
    ...(values.length > 0 ? { tieBreakValues: values } : {}),
  }));
  // Up to 100 a call: one transaction each.
  for (let from = 0; from < inputs.length; from += 100) expect((await t.server(SUBMIT, { inputs: inputs.slice(from, from + 100) })).errors).toBeUndefined();
}

/**
 * A board's rows: the odd ids on one score at one time (their order decided by bytes alone), the
 * rest on few scores and three times, so that most tie on both; on a wide board, on few values of
 * the columns too.
 */
function seedRows(seed: number, players: number, wide: boolean, prefix = '', base = NOW.getTime() - 3 * MINUTE): Row[] {
  const next = seeded(seed);
  const ids = [...ODD_IDS, ...Array.from({ length: players - ODD_IDS.length }, (_, i) => `p${(i * 7919).toString(36)}`)].map((id) => prefix + id);
  const values = () => (wide ? [Math.floor(next() * 2), 7 * Math.floor(next() * 2)] : []);
  return ids.map((playerId, i) =>
    i < ODD_IDS.length
      ? { playerId, score: 500, values: wide ? [1, 7] : [], at: base + 20_000 }
      : { playerId, score: Math.floor(next() * 12) * 50, values: values(), at: base + Math.floor(next() * 3) * 20_000 },
  );
}

const openOracle = (rows: Iterable<Row>): Shown[] => ranked(rows).map((row, i) => ({ id: row.playerId, rank: i + 1 }));

/**
 * A walk over a board while other rows move between its pages: a player already paged past, one
 * not reached yet (by a little or by a lot, so it may land anywhere), and every third page the
 * player of the cursor the walk goes on from, each climbing to a better score. Answers the players
 * in the order the walk met them (top first), and who moved.
 */
async function walkWhileMoving(
  t: TestApp,
  board: string,
  rows: Map<string, Row>,
  direction: 'forward' | 'backward',
  seed: number,
): Promise<{ met: string[]; movers: Set<string> }> {
  const fetch = standingsOf(t, board);
  const next = seeded(seed);
  const movers = new Set<string>();
  const seen: string[] = [];
  const moved = { past: 0, ahead: 0, cursor: 0 };
  const climb = async (playerId: string, by: number) => {
    movers.add(playerId);
    const row = { ...rows.get(playerId)!, score: rows.get(playerId)!.score + by, at: NOW.getTime() - MINUTE / 2 };
    rows.set(playerId, row);
    await submit(t, board, [row]);
  };
  let cursor: string | null = null;
  for (let pageNo = 0; ; pageNo++) {
    const connection: Connection = await fetch(direction === 'forward' ? { first: 9, after: cursor } : { last: 9, before: cursor });
    const ranks = connection.edges.map((edge) => edge.node.rank);
    // One read at one moment: the ranks within a page follow one another.
    expect(ranks).toEqual(ranks.map((_, i) => ranks[0]! + i));
    const ids = connection.edges.map((edge) => edge.node.player.id);
    if (direction === 'forward') seen.push(...ids);
    else seen.unshift(...ids);
    const more = direction === 'forward' ? connection.pageInfo.hasNextPage : connection.pageInfo.hasPreviousPage;
    if (!more) break;
    cursor = direction === 'forward' ? connection.pageInfo.endCursor : connection.pageInfo.startCursor;
    const still = (id: string) => !movers.has(id);
    const seenSet = new Set(seen);
    const past = seen.filter(still);
    const ahead = [...rows.keys()].filter((id) => !seenSet.has(id) && still(id));
    if (past.length > 0) {
      await climb(past[Math.floor(next() * past.length)]!, 50 * (1 + Math.floor(next() * 3)));
      moved.past++;
    }
    if (ahead.length > 0) {
      await climb(ahead[Math.floor(next() * ahead.length)]!, next() < 0.5 ? 50 : 5_000);
      moved.ahead++;
    }
    const cursorId = (direction === 'forward' ? connection.edges.at(-1) : connection.edges[0])!.node.player.id;
    if (pageNo % 3 === 0 && still(cursorId)) {
      await climb(cursorId, 50);
      moved.cursor++;
    }
  }
  expect(moved.past).toBeGreaterThan(3);
  expect(moved.ahead).toBeGreaterThan(3);
  expect(moved.cursor).toBeGreaterThan(0);
  return { met: seen, movers };
}

/** The players the walk met who never moved: each exactly once, in the oracle's order of the rows that never moved. */
function expectSteady(walk: { met: string[]; movers: Set<string> }, rows: Map<string, Row>): string[] {
  const steady = walk.met.filter((id) => !walk.movers.has(id));
  expect(new Set(steady).size).toBe(steady.length);
  expect(steady).toEqual(ranked([...rows.values()].filter((row) => !walk.movers.has(row.playerId))).map((row) => row.playerId));
  return steady;
}

// ---- one node (1 and 8 shards, and a closed season) and a Redis Cluster (8 shards) ----

/** The boards of each target: every one paged still; those `moving` walked while rows move too. */
const TARGETS = [
  {
    name: 'one Redis node',
    cluster: false,
    kinds: [
      { shards: 1, wide: false, moving: true },
      { shards: 1, wide: true, moving: false },
      { shards: 8, wide: false, moving: false },
      { shards: 8, wide: true, moving: true },
    ],
  },
  {
    name: 'a Redis Cluster of three masters',
    cluster: true,
    kinds: [
      { shards: 8, wide: false, moving: true },
      { shards: 8, wide: true, moving: false },
    ],
  },
];

// The cluster starts while the one-node tests run: most of its start is waiting for the nodes to agree.
let clusterStarting: Promise<RedisClusterFixture> | undefined;
beforeAll(() => {
  clusterStarting = startRedisCluster({ masters: 3, replicasPerMaster: 0 });
  // Its failure is the cluster tests' to report (they await it), not an unhandled rejection meanwhile.
  clusterStarting.catch(() => undefined);
});
afterAll(async () => {
  await (await clusterStarting?.catch(() => undefined))?.stop();
});

describe.each(TARGETS)('on $name', ({ cluster, kinds }) => {
  let t: TestApp;
  beforeAll(async () => {
    const fixture = cluster ? await clusterStarting! : undefined;
    t = await startTestApp({ now: () => NOW, ...(fixture ? { redisCluster: fixture } : {}) });
  }, 60_000);
  afterAll(() => t?.close());

  const named = kinds.map((kind) => ({ ...kind, name: `${kind.shards} shard${kind.shards > 1 ? 's' : ''}${kind.wide ? ', time in the member' : ''}` }));

  it.each(named)('$name: pages both ways, cursors both ways, fromRank, PageInfo at both ends', async (kind) => {
    const board = `still-${kind.shards}-${kind.wide ? 'wide' : 'flat'}`;
    await createBoard(t, board, kind);
    // Ids of this board alone: its leader is erased at the end.
    const rows = seedRows(kind.shards + (kind.wide ? 100 : 0), 40, kind.wide, `${kind.shards}${kind.wide ? 'w' : 'f'}-`);
    await submit(t, board, rows);
    const oracle = openOracle(rows);
    await expectPagesBothWays(standingsOf(t, board), oracle, oracle.length, 7);

    // fromRank is a position: under COMPETITION the first row keeps its shared rank, above fromRank
    // when it ties with the row before (the odd ids' run holds such a position).
    const sorted = ranked(rows);
    const tied = sorted.findIndex((row, i) => i > 0 && compareResults(row, sorted[i - 1]!) === 0);
    expect(tied).toBeGreaterThan(0);
    const competition = (i: number) => sorted.findIndex((row) => compareResults(row, sorted[i]!) === 0) + 1;
    const page = await standingsOf(t, board)({ first: 3, fromRank: tied + 1, style: 'COMPETITION' });
    expect(shownOf(page)).toEqual([tied, tied + 1, tied + 2].map((i) => ({ id: sorted[i]!.playerId, rank: competition(i) })));
    expect(page.edges[0]!.node.rank).toBeLessThan(tied + 1);

    // The leader erased: the page after their cursor starts at the top, with no row before it.
    const leader = await standingsOf(t, board)({ first: 1 });
    expect((await t.admin(`mutation($p: ID!) { deletePlayer(playerId: $p) }`, { p: sorted[0]!.playerId })).errors).toBeUndefined();
    const rest = openOracle(sorted.slice(1));
    await expect.poll(async () => shownOf(await standingsOf(t, board)({ first: 3 })), { timeout: 5_000 }).toEqual(rest.slice(0, 3));
    expectWindow(await standingsOf(t, board)({ first: 3, after: leader.pageInfo.endCursor }), rest, 0, 3);
  });

  it.each(named.filter((kind) => kind.moving))('$name: a walk backwards is a walk forwards reversed, while other rows move', async (kind) => {
    const board = `moving-${kind.shards}-${kind.wide ? 'wide' : 'flat'}`;
    await createBoard(t, board, kind);
    const rows = new Map(seedRows(7 + kind.shards, 52, kind.wide, 'm-').map((row) => [row.playerId, row]));
    await submit(t, board, [...rows.values()]);
    const backward = await walkWhileMoving(t, board, rows, 'backward', 11);
    const stillBackward = expectSteady(backward, rows);
    const forward = await walkWhileMoving(t, board, rows, 'forward', 12);
    const stillForward = expectSteady(forward, rows);
    // The rows that moved in neither walk: met in the same order both ways.
    const both = (ids: string[]) => ids.filter((id) => !backward.movers.has(id) && !forward.movers.has(id));
    expect(both(stillBackward)).toEqual(both(stillForward));
    expect(both(stillBackward).length).toBeGreaterThan(15);
  });

  it.runIf(!cluster)('fromRank on 8 shards selects the position by counts: no read of a run of the rows above it', async () => {
    const board = 'deep-8';
    await createBoard(t, board, { shards: 8, wide: false });
    const rows = seedRows(5, 400, false, 'd-');
    await submit(t, board, rows);
    const oracle = openOracle(rows);
    // Every command Redis runs for this app, those its scripts run included: no range read longer than the page.
    const ranges: number[] = [];
    let marked = false;
    const monitor = await watchCommands(6379, (args) => {
      const [command = '', key = ''] = args;
      if (command.toUpperCase() === 'ZRANGE' && key.startsWith(t.keyPrefix)) ranges.push(Number(args[3]) - Number(args[2]) + 1);
      if (command.toUpperCase() === 'GET' && key === `${t.keyPrefix}pages-marker`) marked = true;
    });
    try {
      for (const rank of [300, 397]) expectWindow(await standingsOf(t, board)({ first: 5, fromRank: rank }), oracle, rank - 1, rank + 4);
      // MONITOR lists commands as they run: every read above is listed once a marker sent after them is.
      await t.redis.get('pages-marker');
      await until(() => marked, 5_000, 'the marker listed');
    } finally {
      monitor.close();
    }
    expect(ranges.length).toBeGreaterThan(0);
    expect(Math.max(...ranges)).toBeLessThanOrEqual(6);
  });

  // ---- closed buckets and season results: frozen standings in PostgreSQL (the same on any Redis) ----

  describe.runIf(!cluster)('a closed season: its SEASON bucket and its seasonResults', () => {
    const board = 'season-pages';
    // Reached after the season started (at NOW, the app's clock).
    const rows = seedRows(42, 40, false, 's-', NOW.getTime() + 10_000);
    // Three erased players in a row, and one more: their frozen rows keep their ranks but are never shown.
    const erasedAt = [10, 11, 12, 30];
    let oracle: Shown[];
    let liveCursor: string;

    beforeAll(async () => {
      await createBoard(t, board, { shards: 1, wide: false }, { periods: ['ALL_TIME', 'SEASON'] });
      expect((await t.admin(`mutation($b: ID!) { startSeason(board: $b, name: "One") { id } }`, { b: board })).errors).toBeUndefined();
      await submit(t, board, rows);
      // A cursor the open season issued (rank 20), to be used once it closed.
      liveCursor = (await standingsOf(t, board, { period: 'SEASON', label: 's1' })({ first: 1, fromRank: 20 })).pageInfo.endCursor!;
      expect((await t.admin(`mutation($b: ID!) { closeSeason(board: $b) { id } }`, { b: board })).errors).toBeUndefined();
      const frozen = openOracle(rows);
      for (const i of erasedAt) {
        const erased = await t.admin<{ deletePlayer: boolean }>(`mutation($p: ID!) { deletePlayer(playerId: $p) }`, { p: frozen[i]!.id });
        expect(erased.errors).toBeUndefined();
      }
      oracle = frozen.filter((_, i) => !erasedAt.includes(i));
    });

    it('the closed SEASON bucket pages both ways, from any rank, around its erased rows', async () => {
      const fetch = standingsOf(t, board, { period: 'SEASON', label: 's1' });
      await expectPagesBothWays(fetch, oracle, rows.length, 2);
      // A fromRank at an erased row's rank starts at the next shown one; a backward page over the three in a row reaches past them.
      expectWindow(await fetch({ first: 3, fromRank: 11 }), oracle, 10, 13);
      const after = (await fetch({ first: 3, fromRank: 14 })).pageInfo.startCursor;
      expectWindow(await fetch({ last: 2, before: after }), oracle, 8, 10);
      // The open season's cursor goes on from its player's frozen rank, either way.
      const own = oracle.findIndex((row) => row.rank === 20);
      expectWindow(await fetch({ last: 2, before: liveCursor }), oracle, own - 2, own);
      expectWindow(await fetch({ first: 2, after: liveCursor }), oracle, own + 1, own + 3);
    });

    it('seasonResults pages both ways, from any rank', async () => {
      await expectPagesBothWays(seasonResultsOf(t, board, 's1'), oracle, rows.length, 3);
      // A cursor of one list is refused by the other, backwards too, changing nothing.
      const closed = (await standingsOf(t, board, { period: 'SEASON', label: 's1' })({ first: 1 })).pageInfo.endCursor;
      const results = (await seasonResultsOf(t, board, 's1')({ first: 1 })).pageInfo.endCursor;
      for (const [query, variables] of [
        [SEASON_RESULTS, { b: board, s: 's1', last: 2, before: closed }],
        [STANDINGS, { b: board, p: 'SEASON', k: 's1', last: 2, before: results }],
        [STANDINGS, { b: board, p: 'SEASON', k: 's1', last: 2, before: 'garbage' }],
      ] as const) {
        const refused = await t.gql(query, variables);
        expect(refused.errors?.map((error) => error.extensions?.code)).toEqual(['BAD_USER_INPUT']);
      }
    });
  });
});
