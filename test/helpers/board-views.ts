import { expect } from 'vitest';
import { type Board, DEFAULT_RETENTION } from '../../src/model/board.js';
import { type OracleEntry, foldResults, rankEntries } from './oracle.js';
import type { TestApp } from './test-app.js';

/**
 * What every bucket of a board should show, read through the app, for the tests that submit
 * through it: the oracle (oracle.ts) folds the recorded results per bucket and ranks them, the
 * hidden players left out; the helpers below compare the app's reads with it.
 */

export interface ModelBoard {
  id: string;
  order: 'HIGH_FIRST' | 'LOW_FIRST';
  aggregate: 'BEST' | 'SUM';
  periods: ('ALL_TIME' | 'MONTHLY' | 'WEEKLY' | 'DAILY')[];
  regions: string[];
}

export interface ModelResult {
  board: string;
  playerId: string;
  matchId: string;
  score: number;
  region: string | null;
  achievedAt: Date;
}

/** A model result as a SubmitScoreInput's variables. */
export const submitInput = (r: ModelResult) => ({
  board: r.board,
  playerId: r.playerId,
  matchId: r.matchId,
  score: r.score,
  region: r.region,
  achievedAt: r.achievedAt.toISOString(),
});

/** Creates these boards through the app (admin key), each titled by its id; fails the test on any error. */
export async function createModelBoards(
  t: TestApp,
  boards: (Pick<ModelBoard, 'id' | 'order' | 'aggregate' | 'regions'> & { periods: readonly string[]; maxScore: number; shards?: number })[],
): Promise<void> {
  for (const { id, order, aggregate, maxScore, periods, regions, shards } of boards) {
    const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
      input: { id, title: id, order, aggregate, maxScore, periods, regions, ...(shards === undefined ? {} : { shards }) },
    });
    expect(created.errors, id).toBeUndefined();
  }
}

/** A standing as the oracle tests select it (STANDING_ROW). */
export interface StandingRow {
  rank: number;
  score: number;
  percentile: number;
  achievedAt: string;
  player: { id: string };
}
export const STANDING_ROW = 'rank score percentile achievedAt player { id }';

/** What the oracle says `entry`, ranked `rank` of `size`, must read as a StandingRow. */
export const standingRowOf = (entry: OracleEntry, rank: number, size: number): StandingRow => ({
  rank,
  score: entry.score,
  percentile: (100 * (size - rank)) / size,
  achievedAt: new Date(entry.reachedAt).toISOString(),
  player: { id: entry.playerId },
});

/** One bucket of a board as the model sees it. */
export interface ModelBucket {
  board: ModelBoard;
  period: string;
  label: string;
  region: string | null;
  ranked: OracleEntry[];
}

/** Every bucket of every board the results fall in (the oracle's fold), each ranked without the hidden players. */
export function modelBuckets(boards: ModelBoard[], results: ModelResult[], hidden: ReadonlySet<string> = new Set()): ModelBucket[] {
  return boards.flatMap((board) =>
    [
      ...foldResults(
        board,
        results.filter((result) => result.board === board.id),
      ),
    ].map(([id, entries]) => {
      const [period, label, ...region] = id.split('|');
      const shown = [...entries.values()].filter((entry) => !hidden.has(entry.playerId));
      return { board, period: period!, label: label!, region: region.join('|') || null, ranked: rankEntries(board, shown) };
    }),
  );
}

interface Row {
  rank: number;
  score: number;
  player: { id: string };
}
const ROW = 'rank score player { id }';
const rowsOf = (bucket: ModelBucket, entries: OracleEntry[]) =>
  entries.map((entry) => ({ rank: bucket.ranked.indexOf(entry) + 1, score: entry.score, player: { id: entry.playerId } }));

export interface ViewProbe {
  /** Players whose standing and around are read. */
  players: string[];
  /** Whose friends are read, and the friend list the test set for them. */
  friendsOf: Record<string, string[]>;
}

/**
 * Reads a bucket every way the API allows (top, size, standing, around, friends, every page) and
 * expects each to equal the model.
 */
export async function expectBucketMatches(t: TestApp, bucket: ModelBucket, probe: ViewProbe): Promise<void> {
  const where = `board: $b, period: $p, bucket: $k, region: $r`;
  const players = probe.players.map(
    (id, i) => `
      s${i}: standing(${where}, playerId: ${JSON.stringify(id)}) { ${ROW} }
      a${i}: around(${where}, playerId: ${JSON.stringify(id)}, radius: 3) { ${ROW} }`,
  );
  const response = await t.gql<Record<string, unknown>>(
    `query($b: ID!, $p: Period!, $k: String, $r: String) {
      top(${where}, limit: 1000) { size entries { ${ROW} } }
      board(id: $b) { size(period: $p, bucket: $k, region: $r) }
      ${players.join('\n')}
    }`,
    { b: bucket.board.id, p: bucket.period, k: bucket.label, r: bucket.region },
  );
  const name = `${bucket.board.id} ${bucket.period} ${bucket.label} ${bucket.region ?? ''}`;
  expect(response.errors, name).toBeUndefined();
  const data = response.data!;
  const { ranked } = bucket;
  expect(data.top, name).toEqual({ size: ranked.length, entries: rowsOf(bucket, ranked) });
  expect(data.board, name).toEqual({ size: ranked.length });
  probe.players.forEach((id, i) => {
    const at = ranked.findIndex((entry) => entry.playerId === id);
    expect(data[`s${i}`], `${name} standing ${id}`).toEqual(at < 0 ? null : rowsOf(bucket, [ranked[at]!])[0]);
    expect(data[`a${i}`], `${name} around ${id}`).toEqual(at < 0 ? [] : rowsOf(bucket, ranked.slice(Math.max(0, at - 3), at + 4)));
  });
  // One friends read a request: each may return up to 1,001 rows, so a few in one operation pass MAX_OPERATION_ROWS.
  for (const [id, list] of Object.entries(probe.friendsOf)) {
    const friends = await t.gql<{ friends: Row[] }>(
      `query($b: ID!, $p: Period!, $k: String, $r: String, $id: ID!) { friends(${where}, playerId: $id) { ${ROW} } }`,
      {
        b: bucket.board.id,
        p: bucket.period,
        k: bucket.label,
        r: bucket.region,
        id,
      },
    );
    expect(friends.errors, `${name} friends of ${id}`).toBeUndefined();
    const circle = new Set([id, ...list]);
    expect(friends.data!.friends, `${name} friends of ${id}`).toEqual(
      rowsOf(
        bucket,
        ranked.filter((entry) => circle.has(entry.playerId)),
      ),
    );
  }

  // Pages, walked by cursor to the end.
  const paged: Row[] = [];
  let after: string | null = null;
  for (let page = 0; page < 100; page++) {
    const next: { data?: { standings: { edges: { node: Row }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } | null } = await t.gql(
      `query($b: ID!, $p: Period!, $k: String, $r: String, $after: String) {
        standings(${where}, first: 7, after: $after) { edges { node { ${ROW} } } pageInfo { hasNextPage endCursor } }
      }`,
      { b: bucket.board.id, p: bucket.period, k: bucket.label, r: bucket.region, after },
    );
    const connection = next.data!.standings;
    paged.push(...connection.edges.map((edge) => edge.node));
    if (!connection.pageInfo.hasNextPage) break;
    after = connection.pageInfo.endCursor;
  }
  expect(paged, `${name} pages`).toEqual(rowsOf(bucket, ranked));
}

/** Submits results in batches through the API; answers every payload in order. */
export async function submitAll(t: TestApp, results: ModelResult[], batchSize = 100) {
  const payloads: { duplicate: boolean; improved: boolean; standings: { period: string; bucket: string; region: string | null }[] }[] = [];
  for (let i = 0; i < results.length; i += batchSize) {
    const batch = results.slice(i, i + batchSize);
    const response = await t.server<{ submitScores: typeof payloads }>(
      `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate improved standings { period bucket region } } }`,
      {
        inputs: batch.map(submitInput),
      },
    );
    expect(response.errors).toBeUndefined();
    payloads.push(...response.data!.submitScores);
  }
  return payloads;
}

/** Every member of every sorted set under the app's prefix that names `playerId`: keys as the app names them. */
export async function indexKeysHolding(t: TestApp, playerId: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    // SCAN patterns are not prefixed by ioredis; the keys it answers are full names.
    const [next, keys] = await t.redis.scan(cursor, 'MATCH', `${t.keyPrefix}*`, 'COUNT', 1000);
    for (const full of keys) {
      const key = full.slice(t.keyPrefix.length);
      if ((await t.redis.type(key)) === 'zset' && (await t.redis.zscore(key, playerId)) !== null) found.push(key);
    }
    cursor = next;
  } while (cursor !== '0');
  return found;
}

/** Which list a page read asks for: a board id, a period, a bucket label and a region (null: global). */
export interface BucketRef {
  board: string;
  period: string;
  label: string;
  region: string | null;
}

export const bucketRef = (bucket: ModelBucket): BucketRef => ({ board: bucket.board.id, period: bucket.period, label: bucket.label, region: bucket.region });

/** Reads every page of a bucket (uncached, 100 a page); the rows, or the error code when a read is refused. */
export async function pagesOf(t: TestApp, bucket: BucketRef) {
  type Page = {
    standings: { edges: { node: { rank: number; score: number; player: { id: string } } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
  };
  const rows: { rank: number; score: number; player: string }[] = [];
  let after: string | null = null;
  for (;;) {
    const response: { data?: Page | null | undefined; errors?: { extensions?: { code?: string } }[] | undefined } = await t.gql<Page>(
      `query($b: ID!, $p: Period!, $k: String, $r: String, $after: String) {
        standings(board: $b, period: $p, bucket: $k, region: $r, first: 100, after: $after) {
          edges { node { rank score player { id } } } pageInfo { hasNextPage endCursor }
        }
      }`,
      { b: bucket.board, p: bucket.period, k: bucket.label, r: bucket.region, after },
    );
    if (response.errors) return { code: response.errors[0]?.extensions?.code, rows: null };
    const { edges, pageInfo } = response.data!.standings;
    rows.push(...edges.map(({ node }) => ({ rank: node.rank, score: node.score, player: node.player.id })));
    if (!pageInfo.hasNextPage) return { code: null, rows };
    after = pageInfo.endCursor;
  }
}

/** A bucket's rows as the model ranks them, in the shape {@link pagesOf} reads them. */
export const expectedRows = (bucket: ModelBucket) => bucket.ranked.map((entry, i) => ({ rank: i + 1, score: entry.score, player: entry.playerId }));

/** Whether every bucket reads exactly as the model has it, now (for polling until it does). */
export async function allMatch(t: TestApp, buckets: ModelBucket[]): Promise<boolean> {
  for (const bucket of buckets) {
    const { rows } = await pagesOf(t, bucketRef(bucket));
    if (!rows || JSON.stringify(rows) !== JSON.stringify(expectedRows(bucket))) return false;
  }
  return true;
}

/**
 * A board as the index sees it, for tests of the index alone: one ALL_TIME period, no regions,
 * maxScore 50, so that scores tie often.
 */
export const indexTestBoard = (id: string, shards: number, order: Board['order'], aggregate: Board['aggregate'], topSize: number, createdAt: Date): Board => ({
  id,
  title: id,
  order,
  aggregate,
  maxScore: 50,
  periods: ['ALL_TIME'],
  regions: [],
  topSize,
  retention: DEFAULT_RETENTION,
  shards,
  timeZone: 'UTC',
  regionTimeZones: [],
  rankStyle: 'ORDINAL',
  epoch: new Date('2025-11-01T00:00:00.000Z'),
  createdAt,
});
