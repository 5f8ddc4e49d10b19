import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketAt } from '../src/model/buckets.js';
import { shardOf } from '../src/ranking/keys.js';
import { packingFor } from '../src/ranking/packing.js';
import { sentAtOnce } from './helpers/at-once.js';
import { startRedisClusterEarly } from './helpers/redis-cluster.js';
import { seeded } from './helpers/random.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';

/**
 * Query.around's `fill` (issue 60): a player near either end still gets min(size, 2 × radius + 1)
 * rows, the window shifted inward; without fill the run is cut at the edges as before. Every answer
 * is compared, whole (so ordered, complete, no row twice), with an oracle that sorts the results
 * itself and picks, among every window of that length holding the player, the most centred one.
 * For every player of boards with runs of ties, in every rank style, live (ALL_TIME) and closed (a
 * season's frozen standings, one player erased after the close, whose row the window skips); on
 * tiny boards (0, 1, 2 and 4 players, fewer than 2 × radius + 1); on a board whose time is in the
 * member (tie-break columns: the wide scripts); on 1 and 8 shards, on one Redis node (whose one-shard
 * reads name their players in the same script) and on a Redis Cluster. The reads of one document and
 * of concurrent requests are batched (reads/place-loader.ts): the same player asked with and without
 * fill and with several radii in one document answers each its own window.
 */

type Style = 'ORDINAL' | 'COMPETITION' | 'DENSE';
const STYLES: Style[] = ['ORDINAL', 'COMPETITION', 'DENSE'];

/** A player's board score as the oracle holds it: its result (score, then the tie-break columns) and when it was reached. */
interface Entry {
  playerId: string;
  score: number;
  values: number[];
  reachedMs: number;
}

interface Row {
  rank: number;
  score: number;
  player: { id: string };
}

/** -1 when x is better than y in `order`, 1 when worse, 0 when equal. */
const better = (order: string, x: number, y: number) => (x === y ? 0 : (order === 'HIGH_FIRST') === x > y ? -1 : 1);

/** Results compared on the score, then each column in its own order (HIGH_FIRST scores throughout). */
const compareResults = (columns: readonly string[], a: Entry, b: Entry) =>
  better('HIGH_FIRST', a.score, b.score) || columns.reduce((found, order, i) => found || better(order, a.values[i]!, b.values[i]!), 0);

/** The oracle's order: the better result, then the earlier time, then the player id's bytes descending. */
const ranked = (columns: readonly string[], entries: readonly Entry[]) =>
  [...entries].sort((a, b) => compareResults(columns, a, b) || a.reachedMs - b.reachedMs || Buffer.compare(Buffer.from(b.playerId), Buffer.from(a.playerId)));

/** Each entry of a sorted list as a row in `style`: ORDINAL its place, COMPETITION 1 + the players with a strictly better result, DENSE 1 + the distinct better results. */
function rowsOf(columns: readonly string[], list: readonly Entry[], style: Style): Row[] {
  return list.map((entry, i) => {
    const ahead = list.filter((other) => compareResults(columns, other, entry) < 0);
    const distinct = new Set(ahead.map((other) => `${other.score}|${other.values.join(',')}`));
    const rank = style === 'ORDINAL' ? i + 1 : style === 'COMPETITION' ? ahead.length + 1 : distinct.size + 1;
    return { rank, score: entry.score, player: { id: entry.playerId } };
  });
}

/**
 * The rows an around read must answer from `rows` (the visible list, in rank order) for the player
 * at `i`: without fill, `radius` either side cut at the edges; with fill, of every window of
 * min(length, 2 × radius + 1) rows holding the player, the one whose middle is nearest the player.
 */
function windowOf<T>(rows: readonly T[], i: number, radius: number, fill: boolean): T[] {
  if (i < 0) return [];
  if (!fill) return rows.slice(Math.max(0, i - radius), i + radius + 1);
  const length = Math.min(rows.length, 2 * radius + 1);
  let best = -1;
  for (let start = 0; start + length <= rows.length; start++) {
    if (start > i || start + length <= i) continue;
    if (best < 0 || Math.abs(start + radius - i) < Math.abs(best + radius - i)) best = start;
  }
  return rows.slice(best, best + length);
}

/** The around reads of one document: [alias, radius, fill]; radius 12 fills past the 17 players of a board (the whole board). */
const READS: [string, number, boolean][] = [
  ['r0', 0, false],
  ['r0f', 0, true],
  ['r1', 1, false],
  ['r1f', 1, true],
  ['r2', 2, false],
  ['r2f', 2, true],
  ['r3f', 3, true],
  ['r5', 5, false],
  ['r5f', 5, true],
  ['r12f', 12, true],
];

/**
 * One document asking each of `reads` for one player (some radii and fills literal, some variables),
 * and the player's standing. A player asked several times in one document is read once, with the
 * largest radius (reads/place-loader.ts); SMALL_READS leave the run no larger than the window asked.
 */
const documentOf = (
  reads: readonly [string, number, boolean][],
) => `query AroundFill($b: ID!, $p: ID!, $period: Period! = ALL_TIME, $bucket: String, $s: RankStyle, $two: Int!, $yes: Boolean!) {
  __typename
  me: standing(board: $b, playerId: $p, period: $period, bucket: $bucket, rankStyle: $s) { ...Row }
  ${reads
    .map(([alias, radius, fill]) => {
      const r = radius === 2 ? '$two' : String(radius);
      const f = fill && radius === 2 ? '$yes' : String(fill);
      return `${alias}: around(board: $b, playerId: $p, period: $period, bucket: $bucket, radius: ${r}, fill: ${f}, rankStyle: $s) { ...Row }`;
    })
    .join('\n  ')}
}
fragment Row on Standing { __typename rank score player { ...Who } }
fragment Who on Player { __typename id }`;

/** Filled windows alone, the largest of radius 3: each shard's reads reach no further than that window needs. */
const SMALL_READS: [string, number, boolean][] = [
  ['r2f', 2, true],
  ['r3f', 3, true],
];

type Answer = Record<string, unknown>;

/** An answer without its __typenames: rows as the oracle writes them. */
const plain = (rows: unknown): unknown =>
  Array.isArray(rows) ? rows.map(plain) : rows && { rank: (rows as Row).rank, score: (rows as Row).score, player: { id: (rows as Row).player.id } };

const TARGETS = [
  { name: 'one Redis node', cluster: false },
  { name: 'a Redis Cluster of three masters', cluster: true },
];

const redisCluster = startRedisClusterEarly({ masters: 3, replicasPerMaster: 0 });

describe.each(TARGETS)('around with fill, on $name', ({ cluster }) => {
  let t: TestApp;
  /** Per board: its columns' orders and its entries (the oracle's input). */
  const boards = new Map<string, { columns: string[]; entries: Entry[] }>();
  /** The main boards' list when their season closed (the frozen standings, erased player included). */
  const atClose = new Map<string, Entry[]>();
  const ERASED = 'Läufer-01';

  async function createBoard(id: string, shards: number, extra: Record<string, unknown> = {}) {
    const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
      input: { id, title: id, maxScore: 1_000, periods: ['ALL_TIME'], shards, ...extra },
    });
    expect(created.errors, id).toBeUndefined();
  }

  /** Every board's results in one submitScores (the boards' own order of inputs kept). */
  async function submitAll() {
    const inputs = [...boards].flatMap(([board, { columns, entries }]) =>
      entries.map((entry) => ({
        board,
        playerId: entry.playerId,
        matchId: `m-${entry.playerId}`,
        score: entry.score,
        achievedAt: new Date(entry.reachedMs).toISOString(),
        ...(columns.length > 0 ? { tieBreakValues: entry.values } : {}),
      })),
    );
    const sent = await t.server(`mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { __typename duplicate } }`, { inputs });
    expect(sent.errors).toBeUndefined();
  }

  beforeAll(async () => {
    const fixture = cluster ? await redisCluster.started() : undefined;
    t = await startTestApp(fixture ? { redisCluster: fixture } : {});
    const random = seeded(cluster ? 6_001 : 6_000);
    // Score 31 bits and two columns of 12 and 9 bits: the time goes into the member (the wide scripts).
    const wide = {
      rankStyle: 'DENSE',
      maxScore: 2 ** 30,
      tieBreaks: [
        { name: 'laps', order: 'HIGH_FIRST', max: 2 ** 12 - 1 },
        { name: 'ms', order: 'LOW_FIRST', max: 2 ** 9 - 1 },
      ],
    };
    await Promise.all(
      [1, 8].flatMap((shards) => [
        createBoard(`Fill-${shards}`, shards, { periods: ['ALL_TIME', 'SEASON'], rankStyle: 'DENSE' }),
        ...[0, 1, 2, 4].map((size) => createBoard(`Tiny-${shards}-${size}`, shards, { rankStyle: 'DENSE' })),
        createBoard(`Wide-${shards}`, shards, wide),
        ...(shards === 8 ? [createBoard('Lopsided-8', 8, { rankStyle: 'DENSE' })] : []),
      ]),
    );
    await Promise.all(
      [1, 8].map(async (shards) =>
        expect((await t.admin(`mutation($b: ID!) { startSeason(board: $b, name: "Fill") { id } }`, { b: `Fill-${shards}` })).errors).toBeUndefined(),
      ),
    );
    // Every result after the seasons started, so that each falls in its board's season.
    const NOW = Date.now() + 100;
    for (const shards of [1, 8]) {
      // 17 players on five scores: long runs of ties, each split by the time reached.
      const players = Array.from({ length: 17 }, (_, i) => (i % 5 === 2 ? `玩家-${String(i).padStart(2, '0')}` : `Läufer-${String(i).padStart(2, '0')}`));
      boards.set(`Fill-${shards}`, {
        columns: [],
        entries: players.map((playerId, i) => ({ playerId, score: random.pick([100, 200, 300, 400, 500]), values: [], reachedMs: NOW + 10 * i })),
      });
      // Tiny boards: empty, one player, two, and four (fewer than 2 × radius + 1 for radius 2 and more).
      for (const size of [0, 1, 2, 4]) {
        const few = Array.from({ length: size }, (_, i) => ({ playerId: `EU-${i}`, score: [7, 7, 3, 9][i]!, values: [], reachedMs: NOW + i }));
        boards.set(`Tiny-${shards}-${size}`, { columns: [], entries: few });
      }
      const board = await t.app.parts.boards.find(`Wide-${shards}`);
      expect(packingFor(board!, 'ALL_TIME').timeInMember).toBe(true);
      const crowd = Array.from({ length: 17 }, (_, i) => ({
        playerId: i % 4 === 1 ? `Ü-${i}` : `w${String(i).padStart(2, '0')}`,
        score: random.pick([2 ** 30, 123_456_789, 5]),
        values: [random.pick([4_095, 7]), random.pick([0, 511])],
        reachedMs: NOW + (i % 3),
      }));
      boards.set(`Wide-${shards}`, { columns: ['HIGH_FIRST', 'LOW_FIRST'], entries: crowd });
    }
    // Eight shards, all players but two in one of them: a window at an edge is read from that
    // shard alone, which must reach as far as the window's long side.
    const lopsided = Array.from({ length: 200 }, (_, i) => `Lop-${i}`);
    const crowded = lopsided.filter((id) => shardOf(id, 8) === shardOf('Lop-0', 8)).slice(0, 11);
    const apart = lopsided.filter((id) => shardOf(id, 8) !== shardOf('Lop-0', 8)).slice(0, 2);
    const leaning = [...crowded, ...apart].map((playerId, i) => ({ playerId, score: 10 * ((i * 7) % 13), values: [], reachedMs: NOW + i }));
    boards.set('Lopsided-8', { columns: [], entries: leaning });
    await submitAll();

    // The main boards' seasons close (their standings frozen as they stand); then one of their
    // players is erased: left out of every list, live and frozen, where the frozen rows keep the
    // ranks (and the size) they had.
    for (const shards of [1, 8]) {
      const main = `Fill-${shards}`;
      expect((await t.admin(`mutation($b: ID!) { closeSeason(board: $b) { id } }`, { b: main })).errors).toBeUndefined();
      atClose.set(main, ranked([], boards.get(main)!.entries));
    }
    expect((await t.admin(`mutation($p: ID!) { deletePlayer(playerId: $p) }`, { p: ERASED })).errors).toBeUndefined();
    for (const shards of [1, 8]) {
      const main = boards.get(`Fill-${shards}`)!;
      main.entries = main.entries.filter((entry) => entry.playerId !== ERASED);
      await until(
        async () =>
          (await t.gql<{ standing: unknown }>(`query($b: ID!, $p: ID!) { standing(board: $b, playerId: $p) { rank } }`, { b: `Fill-${shards}`, p: ERASED }))
            .data?.standing === null,
        3_000,
        `${ERASED} erased from Fill-${shards}`,
      );
    }
  }, 60_000);

  afterAll(() => t?.close());

  /** Each of `reads` (one document a player, sent all at once) for each player asked and one never ranked, against `rows` (the visible list in rank order, in the style asked). */
  async function expectWindows(board: string, rows: Row[], variables: Record<string, unknown>, askedAbout: readonly string[], reads = READS) {
    const asked = [...askedAbout, 'nobody-Ø'];
    // Every player's document at once: the reads of concurrent requests are batched too.
    const answers = await sentAtOnce<Answer>(
      t.url,
      documentOf(reads),
      asked.map((p) => ({ b: board, p, two: 2, yes: true, ...variables })),
    );
    answers.forEach((answer, k) => {
      const i = rows.findIndex((row) => row.player.id === asked[k]);
      expect(plain(answer.me), `${board} ${asked[k]} standing`).toEqual(i < 0 ? null : rows[i]);
      for (const [alias, radius, fill] of reads) {
        const got = plain(answer[alias]) as Row[];
        const where = `${board} ${JSON.stringify(variables)} ${asked[k]} radius ${radius} fill ${fill}`;
        expect(got, where).toEqual(windowOf(rows, i, radius, fill));
        expect(new Set(got.map((row) => row.player.id)).size, where).toBe(got.length);
        if (fill && i >= 0) expect(got.length, where).toBe(Math.min(rows.length, 2 * radius + 1));
      }
    });
  }

  /** Every player of an open board's ALL_TIME bucket (and one never ranked), in every rank style, against the oracle. */
  async function expectLiveBoard(board: string, reads = READS) {
    const { columns, entries } = boards.get(board)!;
    const list = ranked(columns, entries);
    for (const style of STYLES) {
      await expectWindows(
        board,
        rowsOf(columns, list, style),
        { s: style },
        list.map((entry) => entry.playerId),
        reads,
      );
    }
  }

  it.each([1, 8])('fills at both edges and in the middle, for every player, in every rank style, live (%i shard(s))', async (shards) => {
    await expectLiveBoard(`Fill-${shards}`);
  });

  it.each([1, 8])("fills a closed season's frozen standings the same, the erased player's row skipped but still counted (%i shard(s))", async (shards) => {
    const full = atClose.get(`Fill-${shards}`)!;
    for (const style of STYLES) {
      // Ranks as frozen (the erased player's place kept), the erased player's row left out of the list.
      const rows = rowsOf([], full, style).filter((row) => row.player.id !== ERASED);
      await expectWindows(
        `Fill-${shards}`,
        rows,
        { s: style, period: 'SEASON', bucket: 's1' },
        rows.map((row) => row.player.id),
      );
    }
  });

  it.each([1, 8])('fills tiny boards (0, 1, 2 and 4 players) with the whole board, never a row twice (%i shard(s))', async (shards) => {
    for (const size of [0, 1, 2, 4]) await expectLiveBoard(`Tiny-${shards}-${size}`);
  });

  it.each([1, 8])('fills a board whose time is in the member (tie-break columns), in every rank style (%i shard(s))', async (shards) => {
    await expectLiveBoard(`Wide-${shards}`);
  });

  it('fills a sharded bucket whose window at an edge lies in one shard', async () => {
    await expectLiveBoard('Lopsided-8', SMALL_READS);
  });

  it('answers several asks of one call, with and without fill, from the index itself (the scripts that name no players)', async () => {
    for (const id of ['Fill-1', 'Fill-8', 'Wide-1', 'Wide-8', 'Tiny-1-2', 'Lopsided-8']) {
      const board = (await t.app.parts.boards.find(id))!;
      const at = { board, bucket: bucketAt(board, 'ALL_TIME', new Date()), region: null };
      const { columns, entries } = boards.get(id)!;
      const list = ranked(columns, entries);
      const ids = list.map((entry) => entry.playerId);
      const asks = [0, 1, Math.floor(ids.length / 2), ids.length - 2, ids.length - 1]
        .filter((i) => i >= 0)
        .flatMap((i) => [
          { playerId: ids[i]!, radius: 3, fill: true },
          { playerId: ids[i]!, radius: 3, fill: false },
          { playerId: ids[i]!, radius: 1 },
        ]);
      const views = await t.app.parts.index.arounds(at, [...asks, { playerId: 'nobody-Ø', radius: 2, fill: true }]);
      const orderOf = ids.map((playerId, i) => ({ playerId, rank: i + 1 }));
      views.forEach((view, k) => {
        const ask = k < asks.length ? asks[k]! : { playerId: 'nobody-Ø', radius: 2, fill: true };
        expect(view.size, id).toBe(ids.length);
        expect(
          view.places.map(({ playerId, rank }) => ({ playerId, rank })),
          `${id} ${JSON.stringify(ask)}`,
        ).toEqual(windowOf(orderOf, ids.indexOf(ask.playerId), ask.radius, ask.fill === true));
      });
    }
  });
});
