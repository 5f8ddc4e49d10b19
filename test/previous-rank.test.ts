import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seeded } from './helpers/random.js';
import { type RedisClusterFixture, startRedisCluster } from './helpers/redis-cluster.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * previousRank in the submit answer (issue 60), against a plain oracle: every board's entries kept
 * in a map, folded result by result in the order sent, and sorted the long way round for each
 * result, before it (the previous rank) and after it (the rank). Boards BEST (HIGH_FIRST) and SUM
 * (HIGH_FIRST, and LOW_FIRST, whose totals only move down the board), each in every rank style,
 * with scores drawn from a few values so ties are common (COMPETITION and DENSE then differ from
 * ORDINAL). Batches carry results of every board interleaved and the same player two or three
 * times (each result sees the ones before it applied, and none after); then single calls, a
 * replayed result (duplicate: null) and a flagged player (no standings). On 1 and 8 shards on one
 * node, and 8 shards on a Redis Cluster.
 */

type Style = 'ORDINAL' | 'COMPETITION' | 'DENSE';
type Order = 'HIGH_FIRST' | 'LOW_FIRST';
type Aggregate = 'BEST' | 'SUM';

interface OracleBoard {
  id: string;
  order: Order;
  aggregate: Aggregate;
  rankStyle: Style;
  /** A BEST board with a tie-break column `laps` (fewer is better) wide enough that the index keeps the time in the member. */
  laps: boolean;
  /** player id → board score (and laps) and when it was reached (epoch ms). */
  entries: Map<string, Result & { reachedAt: number }>;
}

interface Result {
  score: number;
  laps: number;
}

interface Input {
  board: string;
  playerId: string;
  score: number;
  matchId: string;
  achievedAt: string;
  tieBreakValues?: number[];
}

interface Payload {
  duplicate: boolean;
  standings: { period: string; region: string | null; previousRank: number | null; standing: { rank: number; score: number } }[];
}

/** Below 2^13: an ALL_TIME bucket then breaks ties to the millisecond (packing.ts), so the oracle's times decide as the index's do. */
const MAX_SCORE = 8_000;
/** A board with tie-break columns whose bits leave too few for the time (26 + 20 of 53) keeps the time in the member, to the millisecond. */
const WIDE_MAX_SCORE = 2 ** 26 - 1;
const LAPS_MAX = 2 ** 20 - 1;

const SUBMIT = `mutation($inputs: [SubmitScoreInput!]!) {
  submitScores(inputs: $inputs) { duplicate standings { period region previousRank standing { rank score } } }
}`;
const SUBMIT_ONE = `mutation($input: SubmitScoreInput!) {
  submitScore(input: $input) { duplicate standings { period region previousRank standing { rank score } } }
}`;

/** Ids as studios use them: mixed case, unicode, some differing only in case. */
const PLAYERS = Array.from({ length: 22 }, (_, i) => ['Ada', 'ada', 'ßen', 'Zoë', 'EU', '名人', 'p😀'][i % 7]! + `-${i}`);

/** Whether result `a` is strictly better than `b`: the score, then (where the board has them) fewer laps. */
function better(board: OracleBoard, a: Result, b: Result): boolean {
  if (a.score !== b.score) return board.order === 'HIGH_FIRST' ? a.score > b.score : a.score < b.score;
  return a.laps < b.laps;
}

/** Better first: the result, then the earlier time, then the larger id in UTF-8 bytes (as Redis orders equal values in a REV read). */
function sorted(board: OracleBoard): { playerId: string }[] {
  return [...board.entries]
    .map(([playerId, entry]) => ({ playerId, ...entry }))
    .sort((a, b) => {
      if (better(board, a, b)) return -1;
      if (better(board, b, a)) return 1;
      if (a.reachedAt !== b.reachedAt) return a.reachedAt - b.reachedAt;
      return Buffer.compare(Buffer.from(b.playerId), Buffer.from(a.playerId));
    });
}

/** The player's rank in the board's style, or null when they hold no entry. */
function rankOf(board: OracleBoard, playerId: string): number | null {
  const entry = board.entries.get(playerId);
  if (!entry) return null;
  if (board.rankStyle === 'ORDINAL') return sorted(board).findIndex((e) => e.playerId === playerId) + 1;
  const ahead = [...board.entries.values()].filter((e) => better(board, e, entry)).map((e) => `${e.score}|${e.laps}`);
  return 1 + (board.rankStyle === 'COMPETITION' ? ahead.length : new Set(ahead).size);
}

/**
 * Folds one result into the board (results may be sent out of the order they were achieved in):
 * BEST keeps the better score, reached when first achieved; SUM adds, reached at its latest part
 * (every part here is above zero).
 */
function apply(board: OracleBoard, { playerId, score, achievedAt, tieBreakValues }: Input): void {
  const at = new Date(achievedAt).getTime();
  const held = board.entries.get(playerId);
  if (board.aggregate === 'SUM') {
    board.entries.set(playerId, { score: (held?.score ?? 0) + score, laps: 0, reachedAt: Math.max(held?.reachedAt ?? at, at) });
    return;
  }
  const result = { score, laps: tieBreakValues?.[0] ?? 0 };
  const kept = held && (better(board, held, result) || (!better(board, result, held) && held.reachedAt <= at));
  if (!kept) board.entries.set(playerId, { ...result, reachedAt: at });
}

/** One app on the test's Redis node for the 1- and 8-shard blocks (each board its own id); the Cluster's block starts its own. */
let nodeApp: TestApp;
// The cluster starts while the one-node tests run: most of its start is waiting for the nodes to agree.
let clusterStarting: Promise<RedisClusterFixture> | undefined;
beforeAll(async () => {
  clusterStarting = startRedisCluster({ masters: 3, replicasPerMaster: 0 });
  // Its failure is the cluster block's to report (it awaits it), not an unhandled rejection meanwhile.
  clusterStarting.catch(() => undefined);
  nodeApp = await startTestApp();
}, 60_000);
afterAll(async () => {
  await (await clusterStarting?.catch(() => undefined))?.stop();
});

describe.each([
  { shards: 1, cluster: false },
  { shards: 8, cluster: false },
  { shards: 8, cluster: true },
])('previousRank in the submit answer ($shards shard(s), Redis Cluster: $cluster)', ({ shards, cluster }) => {
  let t: TestApp;
  const random = seeded(60_000 + shards + (cluster ? 1 : 0));
  const boards: OracleBoard[] = [];
  // Each block its own players: a flag (the last test) is the player's on every board.
  const players = PLAYERS.map((id) => `${id}.${shards}${cluster ? 'c' : ''}`);
  const sent: Input[] = [];
  let clock = Date.now() - 3_600_000;
  let matches = 0;

  /** A result of `board` for `playerId`: a score from a few values (BEST) or a small part (SUM), each achieved 7 ms after the last. */
  const resultOf = (board: OracleBoard, playerId: string): Input => ({
    board: board.id,
    playerId,
    score: board.aggregate === 'BEST' ? 10 * random.int(1, 8) : random.int(1, 4),
    matchId: `m${++matches}`,
    achievedAt: new Date((clock += 7)).toISOString(),
    ...(board.laps && { tieBreakValues: [random.int(1, 3)] }),
  });

  /**
   * Checks each answer against the oracle, result by result in the order sent: the ALL_TIME
   * standing's previousRank is the rank before the result, its rank the one after.
   */
  const expectAnswers = (inputs: Input[], payloads: Payload[]) => {
    expect(payloads).toHaveLength(inputs.length);
    inputs.forEach((input, i) => {
      const board = boards.find((b) => b.id === input.board)!;
      const before = rankOf(board, input.playerId);
      apply(board, input);
      const [standing, ...others] = payloads[i]!.standings.filter((s) => s.period === 'ALL_TIME' && s.region === null);
      const what = `result ${i} (${input.board}, ${input.playerId}, ${input.score})`;
      expect(others, what).toHaveLength(0);
      expect(payloads[i]!.duplicate, what).toBe(false);
      expect({ previousRank: standing?.previousRank, rank: standing?.standing.rank, score: standing?.standing.score }, what).toEqual({
        previousRank: before,
        rank: rankOf(board, input.playerId),
        score: board.entries.get(input.playerId)!.score,
      });
    });
    sent.push(...inputs);
  };

  const submitBatch = async (inputs: Input[]) => {
    const answer = await t.server<{ submitScores: Payload[] }>(SUBMIT, { inputs });
    expect(answer.errors).toBeUndefined();
    expectAnswers(inputs, answer.data!.submitScores);
  };

  beforeAll(async () => {
    t = cluster ? await startTestApp({ redisCluster: await clusterStarting! }) : nodeApp;
    const kinds: [Aggregate, Order, boolean][] = [
      ['BEST', 'HIGH_FIRST', false],
      ['SUM', 'HIGH_FIRST', false],
      ['SUM', 'LOW_FIRST', false],
      ['BEST', 'HIGH_FIRST', true],
    ];
    for (const [aggregate, order, laps] of kinds) {
      for (const rankStyle of ['ORDINAL', 'COMPETITION', 'DENSE'] as const) {
        const id = `Prev-${aggregate}-${order}${laps ? '-laps' : ''}-${rankStyle}-${shards}${cluster ? 'c' : ''}`;
        boards.push({ id, order, aggregate, rankStyle, laps, entries: new Map() });
      }
    }
    const created = await Promise.all(
      boards.map(({ id, order, aggregate, rankStyle, laps }) =>
        t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
          input: {
            id,
            title: id,
            order,
            aggregate,
            maxScore: laps ? WIDE_MAX_SCORE : MAX_SCORE,
            periods: ['ALL_TIME', 'DAILY'],
            shards,
            rankStyle,
            ...(laps && { tieBreaks: [{ name: 'laps', order: 'LOW_FIRST', max: LAPS_MAX }] }),
          },
        }),
      ),
    );
    for (const answer of created) expect(answer.errors).toBeUndefined();
  }, 60_000);
  afterAll(async () => {
    if (cluster) await t?.close();
  });

  it('a first result has no previous rank; each later one the rank just before it, result by result in a batch', async () => {
    // Each board's first results, interleaved: none had a rank before (null), some twice in the batch (then the first's rank).
    const first: Input[] = [];
    for (const playerId of players.slice(0, 16)) for (const board of boards) first.push(resultOf(board, playerId));
    for (const board of boards) first.push(resultOf(board, players[3]!), resultOf(board, players[0]!));
    await submitBatch(first);
    for (let round = 0; round < 3; round++) {
      const batch: Input[] = [];
      for (const board of boards) {
        // Players already ranked and new ones; the same player two or three times in the batch, apart or in a row.
        for (let k = 0; k < 5; k++) batch.push(resultOf(board, random.pick(players)));
        const twice = random.pick(players.slice(0, 16));
        batch.push(resultOf(board, twice), resultOf(board, twice));
      }
      // Boards interleaved, so one call writes every bucket in turns.
      batch.sort(() => random() - 0.5);
      await submitBatch(batch);
    }
  });

  it('single submitScore calls answer the rank before, and a BEST result that does not improve answers its rank twice', async () => {
    // Boards side by side (their calls share groups), each board's calls one after the other.
    const singles = async (board: OracleBoard) => {
      for (let k = 0; k < 3; k++) {
        const input = resultOf(board, random.pick(players));
        const answer = await t.server<{ submitScore: Payload }>(SUBMIT_ONE, { input });
        expect(answer.errors).toBeUndefined();
        expectAnswers([input], [answer.data!.submitScore]);
      }
      if (board.aggregate !== 'BEST') return;
      // The lowest score: never an improvement, so nothing moves and the rank before is the rank now.
      const input = { ...resultOf(board, players[0]!), score: 1 };
      const answer = await t.server<{ submitScore: Payload }>(SUBMIT_ONE, { input });
      const [standing] = answer.data!.submitScore.standings.filter((s) => s.period === 'ALL_TIME');
      expect(standing!.previousRank).toBe(standing!.standing.rank);
      expectAnswers([input], [answer.data!.submitScore]);
    };
    await Promise.all(boards.map(singles));
  });

  it('a replayed result (duplicate) answers no previous rank, and its rank as it is now', async () => {
    const replays = boards.map((board) => sent.find((input) => input.board === board.id)!);
    const answer = await t.server<{ submitScores: Payload[] }>(SUBMIT, { inputs: replays });
    expect(answer.errors).toBeUndefined();
    answer.data!.submitScores.forEach((payload, i) => {
      const board = boards[i]!;
      expect(payload.duplicate).toBe(true);
      const [standing] = payload.standings.filter((s) => s.period === 'ALL_TIME');
      expect({ previousRank: standing!.previousRank, rank: standing!.standing.rank }, board.id).toEqual({
        previousRank: null,
        rank: rankOf(board, replays[i]!.playerId),
      });
    });
  });

  it('a flagged player is answered no standings, so no previous rank; the others theirs, as if the flagged one had left', async () => {
    const flagged = players[5]!;
    const flag = await t.admin(`mutation($p: ID!) { flagPlayer(playerId: $p, reason: "test") { id } }`, { p: flagged });
    expect(flag.errors).toBeUndefined();
    for (const board of boards) board.entries.delete(flagged);
    const inputs = boards.map((board) => resultOf(board, flagged));
    const answer = await t.server<{ submitScores: Payload[] }>(SUBMIT, { inputs });
    expect(answer.errors).toBeUndefined();
    for (const payload of answer.data!.submitScores) expect(payload.standings).toEqual([]);
    await submitBatch(boards.map((board) => resultOf(board, players[6]!)));
  });
});
