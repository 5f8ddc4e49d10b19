import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seeded } from './helpers/random.js';
import { type RedisClusterFixture, startRedisCluster } from './helpers/redis-cluster.js';
import { ADMIN_KEY, type TestApp, startTestApp } from './helpers/test-app.js';
import { settle } from './helpers/wait.js';
import { type Direction, type TieBreakColumn, type TieBreakResult, type TieBreakRow, tieBreakStandings } from './helpers/tie-break-oracle.js';

/**
 * Tie-break columns on the live path (issue 59), against an oracle that sorts the tuples itself
 * (helpers/tie-break-oracle.ts, which shares no code with the service): boards of 1 to 4 columns in
 * mixed directions, whose scores and column values are drawn from a handful of values so that runs
 * of equal scores are long, split by the columns into shorter runs of equal tuples, and those by
 * the time (results on a few distinct days, several at the very same millisecond, which the player
 * id then orders). Each player sends one to three results, so the BEST merge picks by the tuple.
 * Every read is checked: top, standing, around at the edges of every run of equal tuples, friends,
 * pages that split the runs (cursors), COMPETITION and DENSE (which share a rank on an equal tuple,
 * not an equal score), Standing.tieBreakValues, and a rebuild from PostgreSQL; on 1 and 8 shards on
 * one node, and 8 shards on a Redis Cluster.
 */

interface TestBoard {
  id: string;
  order: Direction;
  rankStyle: 'ORDINAL' | 'COMPETITION' | 'DENSE';
  maxScore: number;
  columns: TieBreakColumn[];
  /** The values the scores are drawn from. */
  scores: number[];
}

const BOARDS: TestBoard[] = [
  {
    id: 'Laps',
    order: 'HIGH_FIRST',
    rankStyle: 'COMPETITION',
    maxScore: 50,
    columns: [{ name: 'lapMs', order: 'LOW_FIRST', max: 600_000 }],
    scores: [10, 11, 12],
  },
  {
    id: 'Moves',
    order: 'LOW_FIRST',
    rankStyle: 'DENSE',
    maxScore: 1_000,
    columns: [
      { name: 'stars', order: 'HIGH_FIRST', max: 3 },
      { name: 'moves', order: 'LOW_FIRST', max: 500 },
    ],
    scores: [40, 41],
  },
  {
    id: 'Rally',
    order: 'HIGH_FIRST',
    rankStyle: 'ORDINAL',
    maxScore: 100_000,
    columns: [
      { name: 'penalties', order: 'LOW_FIRST', max: 20 },
      { name: 'checkpoints', order: 'HIGH_FIRST', max: 64 },
      { name: 'restarts', order: 'LOW_FIRST', max: 9 },
    ],
    scores: [700, 800],
  },
  {
    id: 'Decathlon',
    order: 'HIGH_FIRST',
    rankStyle: 'DENSE',
    maxScore: 15,
    columns: [
      { name: 'gold', order: 'HIGH_FIRST', max: 255 },
      { name: 'fouls', order: 'LOW_FIRST', max: 63 },
      { name: 'pb', order: 'HIGH_FIRST', max: 1_000 },
      { name: 'age', order: 'LOW_FIRST', max: 7 },
    ],
    scores: [9, 10],
  },
];

/** Players per board: enough for long runs, few enough for the time budget. */
const PLAYERS = 26;
const DAY_MS = 86_400_000;

/** Each player's results on a board: values from a few each, on one of three days (some at the same millisecond). Seeded. */
function resultsOf(board: TestBoard, seed: number): (TieBreakResult & { matchId: string })[] {
  const random = seeded(seed);
  // Whole days back from a fixed midnight, so several results share their exact time. Every board's
  // epoch is a year before its creation, so these are all in its ALL_TIME span, far apart in its time units.
  const midnight = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const results: (TieBreakResult & { matchId: string })[] = [];
  for (let p = 0; p < PLAYERS; p++) {
    // Ids whose bytes order differently from their numbers, and one pair differing only in case.
    const playerId = p === 1 ? 'P-00' : `p-${String((p * 7) % PLAYERS).padStart(2, '0')}`;
    for (let k = random.int(1, 3); k > 0; k--) {
      results.push({
        playerId,
        matchId: `m${k}`,
        score: random.pick(board.scores),
        tieBreakValues: board.columns.map((column) => random.pick([0, 1, column.max])),
        achievedAt: new Date(midnight - random.int(1, 3) * 3 * DAY_MS),
      });
    }
  }
  return results;
}

interface Row {
  rank: number;
  score: number;
  tieBreakValues: number[];
  player: { id: string };
}
const ROW = 'rank score tieBreakValues player { id }';
const asRow = (row: TieBreakRow): Row => ({ rank: row.rank, score: row.score, tieBreakValues: row.tieBreakValues, player: { id: row.playerId } });

/** The indexes at both edges of every run of equal tuples in a sorted list (the last of one run, the first two of the next). */
function edgesOfTupleRuns(sorted: readonly TieBreakRow[]): number[] {
  const key = (row: TieBreakRow) => `${row.score}|${row.tieBreakValues.join(',')}`;
  const edges = sorted.flatMap((row, i) => (i === 0 || key(sorted[i - 1]!) !== key(row) ? [i - 1, i, i + 1] : []));
  return [...new Set(edges)].filter((i) => i >= 0 && i < sorted.length);
}

describe.each([
  { shards: 1, cluster: false },
  { shards: 8, cluster: false },
  { shards: 8, cluster: true },
])('tie-break columns ($shards shard(s), on a Redis Cluster: $cluster)', ({ shards, cluster }) => {
  let t: TestApp;
  let redisCluster: RedisClusterFixture | undefined;
  const sent = new Map<string, (TieBreakResult & { matchId: string })[]>();
  /** The oracle's standings of a board in a style. */
  const oracle = (board: TestBoard, style: TestBoard['rankStyle'] = board.rankStyle) =>
    tieBreakStandings(board.order, board.columns, sent.get(board.id)!, style);

  beforeAll(async () => {
    if (cluster) redisCluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
    t = await startTestApp(redisCluster ? { redisCluster } : {});
    for (const [b, board] of BOARDS.entries()) {
      const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
        input: {
          id: board.id,
          title: board.id,
          order: board.order,
          maxScore: board.maxScore,
          periods: ['ALL_TIME'],
          shards,
          rankStyle: board.rankStyle,
          tieBreaks: board.columns,
        },
      });
      expect(created.errors).toBeUndefined();
      const results = resultsOf(board, 59 * 100 + b * 10 + shards + (cluster ? 1 : 0));
      sent.set(board.id, results);
      // In two calls, so that a player's later results merge with a stored board score, not only within one group.
      for (const half of [results.filter((_, i) => i % 2 === 0), results.filter((_, i) => i % 2 === 1)]) {
        const answer = await t.server(`mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`, {
          inputs: half.map((r) => ({
            board: board.id,
            playerId: r.playerId,
            matchId: r.matchId,
            score: r.score,
            tieBreakValues: r.tieBreakValues,
            achievedAt: r.achievedAt,
          })),
        });
        expect(answer.errors).toBeUndefined();
      }
    }
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await redisCluster?.stop();
  });

  const read = async <T>(query: string, variables: Record<string, unknown>) => {
    const answer = await t.gql<T>(query, variables);
    expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
    return answer.data!;
  };

  const top = async (board: TestBoard, style: string | null = null) =>
    (
      await read<{ top: { entries: Row[] } }>(`query($b: ID!, $s: RankStyle) { top(board: $b, limit: 1000, rankStyle: $s) { entries { ${ROW} } } }`, {
        b: board.id,
        s: style,
      })
    ).top.entries;

  it.each(BOARDS.map((board) => [board.id, board] as const))(
    '%s: the top, in the board style and ORDINAL, is the oracle sorting the tuples',
    async (_, board) => {
      expect(await top(board)).toEqual(oracle(board).map(asRow));
      expect(await top(board, 'ORDINAL')).toEqual(oracle(board, 'ORDINAL').map(asRow));
      if (board.rankStyle !== 'DENSE') expect(await top(board, 'COMPETITION')).toEqual(oracle(board, 'COMPETITION').map(asRow));
    },
  );

  /** Many reads of one field, each under an alias, up to 20 a request (the service's limit): `asks` are the field's arguments in GraphQL text. */
  const readMany = async <T>(field: string, asks: string[]): Promise<T[]> => {
    const answers: T[] = [];
    for (let from = 0; from < asks.length; from += 20) {
      const part = asks.slice(from, from + 20);
      const data = await read<Record<string, T>>(`{ ${part.map((args, i) => `r${i}: ${field}(${args}) { ${ROW} }`).join(' ')} }`, {});
      answers.push(...part.map((_, i) => data[`r${i}`]!));
    }
    return answers;
  };

  it.each(BOARDS.map((board) => [board.id, board] as const))(
    '%s: every standing, with its tieBreakValues and the shared rank of its tuple',
    async (_, board) => {
      const styles = board.rankStyle === 'DENSE' ? (['DENSE', 'ORDINAL'] as const) : (['COMPETITION', 'ORDINAL'] as const);
      for (const style of styles) {
        const want = oracle(board, style);
        const standings = await readMany<Row>(
          'standing',
          want.map((row) => `board: "${board.id}", playerId: ${JSON.stringify(row.playerId)}, rankStyle: ${style}`),
        );
        expect(standings, style).toEqual(want.map(asRow));
      }
    },
  );

  it.each(BOARDS.map((board) => [board.id, board] as const))('%s: around at both edges of every run of equal tuples', async (_, board) => {
    const want = oracle(board);
    const asks = edgesOfTupleRuns(want).flatMap((i) => [0, 2].map((radius) => ({ i, radius })));
    const arounds = await readMany<Row[]>(
      'around',
      asks.map(({ i, radius }) => `board: "${board.id}", playerId: ${JSON.stringify(want[i]!.playerId)}, radius: ${radius}`),
    );
    asks.forEach(({ i, radius }, k) => {
      expect(arounds[k], `around ${i} radius ${radius}`).toEqual(want.slice(Math.max(0, i - radius), i + radius + 1).map(asRow));
    });
  });

  it.each(BOARDS.map((board) => [board.id, board] as const))('%s: friends, ranked among themselves by the tuple', async (_, board) => {
    const want = oracle(board);
    const me = want[Math.floor(want.length / 2)]!.playerId;
    const friends = [0, 1, 2, 5, want.length - 1].map((i) => want[i]!.playerId).filter((id) => id !== me);
    expect((await t.server(`mutation($p: ID!, $f: [ID!]!) { setFriends(playerId: $p, friendIds: $f) }`, { p: me, f: friends })).errors).toBeUndefined();
    const data = await read<{ friends: Row[] }>(`query($b: ID!, $p: ID!) { friends(board: $b, playerId: $p) { ${ROW} } }`, { b: board.id, p: me });
    expect(data.friends).toEqual(want.filter((row) => [me, ...friends].includes(row.playerId)).map(asRow));
  });

  it.each(BOARDS.map((board) => [board.id, board] as const))('%s: pages that split runs of equal tuples: nothing skipped or repeated', async (_, board) => {
    for (const first of [3, 7]) {
      const rows: Row[] = [];
      let after: string | null = null;
      for (;;) {
        const data: { standings: { edges: { node: Row }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } = await read(
          `query($b: ID!, $f: Int!, $a: String) { standings(board: $b, first: $f, after: $a) { edges { node { ${ROW} } } pageInfo { hasNextPage endCursor } } }`,
          { b: board.id, f: first, a: after },
        );
        rows.push(...data.standings.edges.map((edge) => edge.node));
        if (!data.standings.pageInfo.hasNextPage) break;
        after = data.standings.pageInfo.endCursor;
      }
      expect(rows, `pages of ${first}`).toEqual(oracle(board).map(asRow));
    }
  });

  it('a worse result on the columns leaves the standing; a better one on a column alone takes it, and says it improved', async () => {
    const board = BOARDS[1]!; // LOW_FIRST score, stars HIGH_FIRST, moves LOW_FIRST.
    const playerId = 'merge-check';
    const submit = async (matchId: string, tieBreakValues: number[]) => {
      const answer = await t.server<{ submitScore: { improved: boolean; standings: { standing: Row }[] } }>(
        `mutation($i: SubmitScoreInput!) { submitScore(input: $i) { improved standings { standing { ${ROW} } } } }`,
        { i: { board: board.id, playerId, matchId, score: 40, tieBreakValues } },
      );
      expect(answer.errors).toBeUndefined();
      sent.get(board.id)!.push({ playerId, matchId, score: 40, tieBreakValues, achievedAt: new Date() });
      return answer.data!.submitScore;
    };
    expect((await submit('a', [2, 100])).improved).toBe(true);
    // Fewer stars: worse, whatever the moves.
    const worse = await submit('b', [1, 0]);
    expect(worse.improved).toBe(false);
    expect(worse.standings[0]!.standing.tieBreakValues).toEqual([2, 100]);
    // The same stars, fewer moves: better on the second column alone.
    const better = await submit('c', [2, 99]);
    expect(better.improved).toBe(true);
    expect(better.standings[0]!.standing.tieBreakValues).toEqual([2, 99]);
    const rows = await t.database.sql<{ tie_break_values: number[] }[]>`
      select tie_break_values from board_scores where board_id = ${board.id} and player_id = ${playerId}`;
    expect(rows.map((row) => row.tie_break_values)).toEqual([[2, 99]]);
    const want = oracle(board);
    expect(want.find((row) => row.playerId === playerId)!.tieBreakValues).toEqual([2, 99]);
    // The top is served from the shared top cache, up to about a second old (ranking/top-cache.ts): polled until it holds the write.
    expect(
      await settle(
        () => top(board),
        (rows) => isDeepStrictEqual(rows, want.map(asRow)),
        5_000,
      ),
    ).toEqual(want.map(asRow));
  });

  it.each(BOARDS.filter((board) => board.rankStyle !== 'ORDINAL').map((board) => [board.id, board] as const))(
    '%s: the export (NDJSON) ranks as the reads do, a rank shared by an equal tuple',
    async (_, board) => {
      const response = await fetch(`${t.url}/export?${new URLSearchParams({ board: board.id, period: 'ALL_TIME', format: 'ndjson' }).toString()}`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(response.status).toBe(200);
      const lines = (await response.text())
        .trim()
        .split('\n')
        .map((line) => {
          const { rank, playerId, score } = JSON.parse(line) as { rank: number; playerId: string; score: number };
          return { rank, playerId, score };
        });
      expect(lines).toEqual(oracle(board).map((row) => ({ rank: row.rank, playerId: row.playerId, score: row.score })));
    },
  );

  it('a flag takes a player out and an unflag writes their board score back from PostgreSQL with its values, in its place', async () => {
    const board = BOARDS[3]!; // Four columns: every value must come back for the place to be right.
    const want = oracle(board);
    const playerId = want[Math.floor(want.length / 2)]!.playerId;
    expect((await t.admin(`mutation($p: ID!) { flagPlayer(playerId: $p, reason: "check") { id } }`, { p: playerId })).errors).toBeUndefined();
    const without = (await top(board, 'ORDINAL')).map((row) => row.player.id);
    expect(without).toEqual(oracle(board, 'ORDINAL').flatMap((row) => (row.playerId === playerId ? [] : [row.playerId])));
    expect((await t.admin(`mutation($p: ID!) { unflagPlayer(playerId: $p) { id } }`, { p: playerId })).errors).toBeUndefined();
    expect(await top(board)).toEqual(want.map(asRow));
  });

  it.each(BOARDS.map((board) => [board.id, board] as const))('%s: a rebuild from PostgreSQL equals the oracle', async (_, board) => {
    const rebuilt = await t.admin<{ rebuildBoard: number }>(`mutation($b: ID!) { rebuildBoard(board: $b) }`, { b: board.id });
    expect(rebuilt.errors).toBeUndefined();
    const want = oracle(board);
    expect(rebuilt.data!.rebuildBoard).toBe(want.length);
    expect(await top(board)).toEqual(want.map(asRow));
    expect(await top(board, 'ORDINAL')).toEqual(oracle(board, 'ORDINAL').map(asRow));
  });
});
