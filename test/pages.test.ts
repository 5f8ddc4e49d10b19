import { beforeAll, describe, expect, it } from 'vitest';
import { rankEntries } from './helpers/oracle.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { seeded } from './helpers/random.js';

/**
 * Query.standings: the whole board page by page, by cursor. Every page is checked against a plain
 * sort of the submitted data (score, then time, then player id in byte order, descending), never
 * against the service's own output; and rows whose scores do not change must come exactly once
 * and in that order while other players climb between page fetches.
 */

const MAX_SCORE = 1_000_000;
// Whole multiples of 1,024 ms from a UTC midnight: every time the test submits is then the start
// of its tie-break unit on an ALL_TIME key (128 ms for this maxScore), so achievedAt reads back exactly.
const TIME_STEP = 1_024;
const BASE = Math.floor((Date.now() - 3_600_000) / TIME_STEP) * TIME_STEP;

/** Ids whose byte order differs from naive or locale order: case, accents, a fullwidth letter (U+FF21) and an astral emoji (UTF-16 and UTF-8 disagree on those two). */
const ODD_IDS = ['Zoë', 'zoë', 'zoe', 'Émile', 'émile', 'e', 'E', 'Ａ', '😀', '日本', 'p10', 'p9', 'p1'];

interface Row {
  playerId: string;
  score: number;
  achievedAt: number;
}

type Order = 'HIGH_FIRST' | 'LOW_FIRST';

/** The oracle's order: better score, then earlier time, then the larger player id in UTF-8 byte order. */
function rank(order: Order, rows: Iterable<Row>): Row[] {
  return rankEntries(
    { order },
    [...rows].map((row) => ({ ...row, reachedAt: row.achievedAt })),
  );
}

/** A few hundred players on few scores and few times, so most tie on both and are ordered by id. */
function seedRows(seed: number, players = 300): Row[] {
  const next = seeded(seed);
  const ids = [...ODD_IDS, ...Array.from({ length: players - ODD_IDS.length }, (_, i) => `p${(i * 7919).toString(36)}`)];
  return ids.map((playerId, i) =>
    i < ODD_IDS.length
      ? // The odd ids all share one score and one time: their order is decided by bytes alone.
        { playerId, score: 500, achievedAt: BASE }
      : { playerId, score: Math.floor(next() * 20) * 50, achievedAt: BASE + Math.floor(next() * 3) * TIME_STEP },
  );
}

const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`;
const SUBMIT = `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`;
const PAGE = `query($board: ID!, $period: Period! = ALL_TIME, $bucket: String, $region: String, $first: Int, $after: String) {
  standings(board: $board, period: $period, bucket: $bucket, region: $region, first: $first, after: $after) {
    edges { cursor node { rank score percentile achievedAt player { id } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

interface Edge {
  cursor: string;
  node: { rank: number; score: number; percentile: number; achievedAt: string; player: { id: string } };
}
interface Connection {
  edges: Edge[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

let t: TestApp;
let matches = 0;

async function createBoard(input: Record<string, unknown>) {
  const created = await t.admin(CREATE, { input: { title: String(input.id), maxScore: MAX_SCORE, ...input } });
  expect(created.errors).toBeUndefined();
}

async function submit(board: string, rows: (Row & { region?: string })[]) {
  for (let i = 0; i < rows.length; i += 100) {
    const inputs = rows.slice(i, i + 100).map((row) => ({
      board,
      playerId: row.playerId,
      score: row.score,
      matchId: `m${++matches}`,
      achievedAt: new Date(row.achievedAt).toISOString(),
      ...(row.region ? { region: row.region } : {}),
    }));
    const response = await t.server(SUBMIT, { inputs });
    expect(response.errors).toBeUndefined();
  }
}

async function page(variables: Record<string, unknown>): Promise<Connection> {
  const response = await t.gql<{ standings: Connection }>(PAGE, variables);
  expect(response.errors).toBeUndefined();
  return response.data!.standings;
}

/** A page as the oracle would print it. */
function expected(rows: Row[], from: number, count: number) {
  return rows.slice(from, from + count).map((row, i) => ({
    rank: from + i + 1,
    score: row.score,
    percentile: (100 * (rows.length - (from + i + 1))) / rows.length,
    achievedAt: new Date(row.achievedAt).toISOString(),
    player: { id: row.playerId },
  }));
}

beforeAll(async () => {
  t = await startTestApp();
});

describe('standings: pages of an unchanged board', () => {
  it.each<Order>(['HIGH_FIRST', 'LOW_FIRST'])('%s: every page is the oracle slice, then nothing follows', async (order) => {
    const board = `steady-${order.toLowerCase().replace('_', '-')}`;
    await createBoard({ id: board, order });
    const rows = seedRows(order === 'HIGH_FIRST' ? 1 : 2);
    await submit(board, rows);
    const oracle = rank(order, rows);

    // The default page size is 50.
    let after: string | null = null;
    let from = 0;
    for (;;) {
      const connection = await page({ board, after });
      expect(connection.edges.map((edge) => edge.node)).toEqual(expected(oracle, from, 50));
      from += connection.edges.length;
      expect(connection.pageInfo.hasNextPage).toBe(from < oracle.length);
      expect(connection.pageInfo.endCursor).toBe(connection.edges.at(-1)!.cursor);
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
    }
    expect(from).toBe(oracle.length);

    // Past the end: no rows, no cursor.
    const end = await page({ board, after: (await page({ board, first: 1000 })).pageInfo.endCursor });
    expect(end).toEqual({ edges: [], pageInfo: { hasNextPage: false, endCursor: null } });

    // Any page size, and a cursor taken from the middle of a page: the next page starts right after it.
    const all = await page({ board, first: 1000 });
    expect(all.edges.map((edge) => edge.node)).toEqual(expected(oracle, 0, 1000));
    for (const at of [0, 11, 12, 13, 150, oracle.length - 2]) {
      const next = await page({ board, first: 7, after: all.edges[at]!.cursor });
      expect(next.edges.map((edge) => edge.node)).toEqual(expected(oracle, at + 1, 7));
      expect(next.pageInfo.hasNextPage).toBe(at + 1 + 7 < oracle.length);
    }
  });
});

describe('standings: pages while others climb', () => {
  it('every player whose score does not change comes exactly once, in the oracle order', async () => {
    const board = 'moving';
    await createBoard({ id: board });
    const rows = seedRows(3);
    await submit(board, rows);
    const byId = new Map(rows.map((row) => [row.playerId, row]));
    const next = seeded(4);
    const movers = new Set<string>();
    const seen: string[] = [];
    const moved = { past: 0, ahead: 0, cursor: 0 };

    const climb = async (playerId: string, to: number) => {
      movers.add(playerId);
      await submit(board, [{ playerId, score: Math.min(MAX_SCORE, to), achievedAt: Date.now() - 1_000 }]);
    };

    let after: string | null = null;
    for (let pageNo = 0; ; pageNo++) {
      const connection = await page({ board, first: 17, after });
      const ranks = connection.edges.map((edge) => edge.node.rank);
      // One atomic read: the ranks within a page follow one another.
      expect(ranks).toEqual(ranks.map((_, i) => ranks[0]! + i));
      seen.push(...connection.edges.map((edge) => edge.node.player.id));
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;

      // Between pages, players climb: one already paged past, one not reached yet (by a little or
      // by a lot, so it may land just ahead of the cursor or far above it), and every third page
      // the player the cursor names.
      const still = (id: string) => !movers.has(id);
      const pastIds = [...new Set(seen)].filter(still);
      const seenSet = new Set(seen);
      const aheadIds = rows.map((row) => row.playerId).filter((id) => !seenSet.has(id) && still(id));
      if (pastIds.length > 0) {
        const id = pastIds[Math.floor(next() * pastIds.length)]!;
        await climb(id, byId.get(id)!.score + 50 * (1 + Math.floor(next() * 3)));
        moved.past++;
      }
      if (aheadIds.length > 0) {
        const id = aheadIds[Math.floor(next() * aheadIds.length)]!;
        await climb(id, byId.get(id)!.score + (next() < 0.5 ? 50 : 5_000));
        moved.ahead++;
      }
      const cursorId = connection.edges.at(-1)!.node.player.id;
      if (pageNo % 3 === 0 && still(cursorId)) {
        await climb(cursorId, byId.get(cursorId)!.score + 50);
        moved.cursor++;
      }
    }

    expect(moved.past).toBeGreaterThan(5);
    expect(moved.ahead).toBeGreaterThan(5);
    expect(moved.cursor).toBeGreaterThan(2);
    const steady = seen.filter((id) => !movers.has(id));
    expect(new Set(steady).size).toBe(steady.length);
    expect(steady).toEqual(
      rank(
        'HIGH_FIRST',
        rows.filter((row) => !movers.has(row.playerId)),
      ).map((row) => row.playerId),
    );
  });

  it("the cursor's own player leaves its place: the next page still starts right after where it was", async () => {
    const board = 'cursor-moves';
    await createBoard({ id: board });
    // A tie group of odd ids between players above and below it.
    const rows = [
      ...ODD_IDS.map((playerId) => ({ playerId, score: 500, achievedAt: BASE })),
      ...['a1', 'a2', 'a3'].map((playerId, i) => ({ playerId, score: 600 + i, achievedAt: BASE })),
      ...['b1', 'b2', 'b3'].map((playerId) => ({ playerId, score: 400, achievedAt: BASE + TIME_STEP })),
    ];
    await submit(board, rows);
    const oracle = rank('HIGH_FIRST', rows);

    // One row a page, and after each page its player climbs above everyone: the cursor never names
    // a member where it stands, so each page is found from the key alone.
    const seen: Edge['node'][] = [];
    let after: string | null = null;
    for (let climbed = 0; ; climbed++) {
      const connection = await page({ board, first: 1, after });
      seen.push(...connection.edges.map((edge) => edge.node));
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
      await submit(board, [{ playerId: connection.edges[0]!.node.player.id, score: 900_000 + climbed, achievedAt: BASE }]);
    }
    // Everyone already read moved above the rest, so each row still has the rank the oracle gives it.
    expect(seen.map(({ player, rank: r, score }) => ({ id: player.id, rank: r, score }))).toEqual(
      oracle.map((row, i) => ({ id: row.playerId, rank: i + 1, score: row.score })),
    );
  });
});

describe('standings: bad input', () => {
  let cursor: string;
  beforeAll(async () => {
    const day = new Date(Date.now() - 60_000);
    await createBoard({ id: 'other-a', periods: ['ALL_TIME', 'DAILY'], regions: ['eu'] });
    await createBoard({ id: 'other-b', periods: ['ALL_TIME', 'DAILY'], regions: ['eu'] });
    for (const board of ['other-a', 'other-b']) {
      await submit(board, [
        { playerId: 'x', score: 10, achievedAt: day.getTime(), region: 'eu' },
        { playerId: 'y', score: 20, achievedAt: day.getTime(), region: 'eu' },
      ]);
    }
    cursor = (await page({ board: 'other-a', first: 1 })).pageInfo.endCursor!;
  });

  const refused = async (variables: Record<string, unknown>, code = 'BAD_USER_INPUT') => {
    const response = await t.gql(PAGE, variables);
    expect(response.errors?.map((error) => error.extensions?.code)).toEqual([code]);
    expect(response.data).toBeNull();
  };

  it('accepts its own cursor', async () => {
    const next = await page({ board: 'other-a', first: 1, after: cursor });
    expect(next.edges.map((edge) => edge.node.player.id)).toEqual(['x']);
  });

  it('refuses an edited cursor, even one naming a real position', async () => {
    const [payload, signature] = cursor.split('.') as [string, string];
    const [scope, packed, playerId] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [string, number, string];
    const forge = (value: unknown) => `${Buffer.from(JSON.stringify(value)).toString('base64url')}.${signature}`;
    await refused({ board: 'other-a', after: forge([scope, packed - 1, playerId]) });
    await refused({ board: 'other-a', after: forge([scope, packed, 'x']) });
    await refused({ board: 'other-a', after: `${payload}.${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}` });
  });

  it('refuses garbage', async () => {
    for (const after of ['', 'garbage', 'a.b', '...', `${cursor}.x`, cursor.split('.')[0]!]) await refused({ board: 'other-a', after });
    // A signature of the right length in characters but not in bytes (once an internal error).
    const payload = cursor.split('.')[0]!;
    for (const signature of ['é'.repeat(22), '🎮'.repeat(11), '\u0000'.repeat(22), '+/='.repeat(7) + 'x'])
      await refused({ board: 'other-a', after: `${payload}.${signature}` });
  });

  it('refuses a cursor of another board, bucket or region', async () => {
    await refused({ board: 'other-b', after: cursor });
    const label = new Date(Date.now() - 60_000).toISOString().slice(0, 10);
    await refused({ board: 'other-a', period: 'DAILY', bucket: label, after: cursor });
    await refused({ board: 'other-a', region: 'eu', after: cursor });
    const daily = (await page({ board: 'other-a', period: 'DAILY', bucket: label, first: 1 })).pageInfo.endCursor;
    expect(daily).not.toBeNull();
    await refused({ board: 'other-a', after: daily });
  });

  it('refuses a page size outside 1..1000', async () => {
    for (const first of [0, -1, 1001]) await refused({ board: 'other-a', first });
    expect((await page({ board: 'other-a', first: 1000 })).edges).toHaveLength(2);
  });

  it('answers NOT_FOUND for an unknown board', async () => {
    await refused({ board: 'no-such-board' }, 'NOT_FOUND');
    await refused({ board: 'no-such-board', after: cursor }, 'NOT_FOUND');
  });
});
