import { beforeAll, describe, expect, it } from 'vitest';
import { type OracleBoard, type OracleEntry, type OracleResult, bucketId, foldResults, rankEntries } from './helpers/oracle.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { seeded } from './helpers/random.js';
import { STANDING_ROW, type StandingRow, standingRowOf } from './helpers/board-views.js';

/**
 * Thousands of submissions over hundreds of players, with replays, shared match ids, repeated
 * scores decided by time, every calendar period and regions, on BEST/SUM × HIGH_FIRST/LOW_FIRST
 * boards: every read must equal a plain sort of the same data.
 */

// A date to come (2037 has 2026's calendar): the app sets Redis expiries from this clock, so a
// past date would expire the keys at once.
const NOW = new Date('2037-11-29T12:00:00.000Z');
const PERIODS = ['ALL_TIME', 'MONTHLY', 'WEEKLY', 'DAILY'];
const REGIONS = ['eu', 'us'];
const PLAYERS = 240;
const RESULTS_PER_BOARD = 2_400;

const BOARDS: OracleBoard[] = [
  { id: 'best-high', order: 'HIGH_FIRST', aggregate: 'BEST', periods: PERIODS },
  { id: 'best-low', order: 'LOW_FIRST', aggregate: 'BEST', periods: PERIODS },
  { id: 'sum-high', order: 'HIGH_FIRST', aggregate: 'SUM', periods: PERIODS },
  { id: 'sum-low', order: 'LOW_FIRST', aggregate: 'SUM', periods: PERIODS },
];

interface Submission extends OracleResult {
  board: string;
  matchId: string;
}

function generate(board: OracleBoard, seed: number): { originals: Submission[]; replays: Submission[] } {
  const next = seeded(seed);
  const players = Array.from({ length: PLAYERS }, (_, i) => `p${String(i).padStart(3, '0')}`);
  const originals: Submission[] = [];
  const used = new Set<string>();
  let match = 0;
  while (originals.length < RESULTS_PER_BOARD) {
    // A match holds several players; they share its matchId and often its time.
    match += 1;
    const matchTime = NOW.getTime() - next.int(0, 6 * 24 * 60 - 1) * 60_000;
    const size = next.int(1, 6);
    for (let k = 0; k < size; k++) {
      const playerId = next.pick(players);
      if (used.has(`${match}/${playerId}`)) continue;
      used.add(`${match}/${playerId}`);
      originals.push({
        board: board.id,
        matchId: `m${match}`,
        playerId,
        // Few distinct scores, so that ties are common and decided by time, then by id.
        score: Math.floor(next() * 40),
        region: next.chance(0.5) ? next.pick(REGIONS) : null,
        achievedAt: new Date(next() < 0.7 ? matchTime : matchTime - Math.floor(next() * 3) * 60_000),
      });
    }
  }
  const replays = originals
    .filter(() => next() < 0.1)
    .map((original) => ({ ...original, score: Math.floor(next() * 40), achievedAt: new Date(original.achievedAt.getTime() - 60_000) }));
  return { originals, replays };
}

const toInput = (s: Submission) => ({
  board: s.board,
  playerId: s.playerId,
  score: s.score,
  matchId: s.matchId,
  region: s.region,
  achievedAt: s.achievedAt.toISOString(),
});

const SUBMIT_MANY = `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate improved } }`;

type Row = StandingRow;
const ROW = STANDING_ROW;
const expectRow = (row: Row | null | undefined, entry: OracleEntry, rank: number, size: number) => expect(row).toEqual(standingRowOf(entry, rank, size));

describe('ranks against an oracle', () => {
  let t: TestApp;
  const expected = new Map<string, Map<string, Map<string, OracleEntry>>>();

  beforeAll(async () => {
    t = await startTestApp({ now: () => NOW });
    for (const [i, board] of BOARDS.entries()) {
      const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
        input: {
          id: board.id,
          title: board.id,
          order: board.order,
          aggregate: board.aggregate,
          maxScore: 8_000,
          periods: board.periods,
          regions: REGIONS,
          closeGraceSeconds: 7 * 86_400,
        },
      });
      expect(created.errors).toBeUndefined();

      const { originals, replays } = generate(board, 1_000 + i);
      // Four game servers at once, in batches of mixed size: concurrent batches touch the same players.
      const streams = [0, 1, 2, 3].map((s) => originals.filter((_, k) => k % 4 === s));
      await Promise.all(
        streams.map(async (stream) => {
          for (let k = 0; k < stream.length;) {
            const size = 1 + ((k * 7) % 120);
            const batch = stream.slice(k, k + size);
            k += size;
            const response = await t.server<{ submitScores: { duplicate: boolean }[] }>(SUBMIT_MANY, { inputs: batch.map(toInput) });
            expect(response.errors).toBeUndefined();
            expect(response.data?.submitScores.every((p) => !p.duplicate)).toBe(true);
          }
        }),
      );
      // Replays, with another score and time, change nothing and say so.
      const replayed = await t.server<{ submitScores: { duplicate: boolean; improved: boolean }[] }>(SUBMIT_MANY, { inputs: replays.map(toInput) });
      expect(replayed.errors).toBeUndefined();
      expect(replayed.data?.submitScores.every((p) => p.duplicate && !p.improved)).toBe(true);

      expected.set(board.id, foldResults(board, originals));
    }
  }, 180_000);

  const bucketsOf = (boardId: string) =>
    [...expected.get(boardId)!.entries()].map(([id, entries]) => {
      const [period, bucket, region] = id.split('|') as [string, string, string];
      return { period, bucket, region: region || null, entries };
    });

  it.each(BOARDS.map((b) => [b.id, b] as const))('%s: top and size of every bucket equal the oracle', async (_id, board) => {
    for (const { period, bucket, region, entries } of bucketsOf(board.id)) {
      const ranked = rankEntries(board, entries.values());
      const response = await t.gql<{ top: { size: number; bucket: string; entries: Row[] }; board: { size: number } }>(
        `query($b: ID!, $p: Period!, $k: String, $r: String) {
          top(board: $b, period: $p, bucket: $k, region: $r, limit: 1000) { size bucket entries { ${ROW} } }
          board(id: $b) { size(period: $p, bucket: $k, region: $r) }
        }`,
        { b: board.id, p: period, k: bucket, r: region },
      );
      expect(response.errors).toBeUndefined();
      expect(response.data?.top.size).toBe(ranked.length);
      expect(response.data?.board.size).toBe(ranked.length);
      expect(response.data?.top.entries.length).toBe(ranked.length);
      ranked.forEach((entry, i) => expectRow(response.data?.top.entries[i], entry, i + 1, ranked.length));
    }
  });

  it.each(BOARDS.map((b) => [b.id, b] as const))('%s: standing and around, at both edges and in the middle', async (_id, board) => {
    for (const { period, bucket, region, entries } of bucketsOf(board.id)) {
      const ranked = rankEntries(board, entries.values());
      const n = ranked.length;
      const probes = [...new Set([0, 1, Math.floor(n / 2), n - 2, n - 1].filter((i) => i >= 0 && i < n))];
      const fields = probes
        .map(
          (i) => `
          s${i}: standing(board: $b, period: $p, bucket: $k, region: $r, playerId: "${ranked[i]!.playerId}") { ${ROW} }
          a${i}: around(board: $b, period: $p, bucket: $k, region: $r, playerId: "${ranked[i]!.playerId}", radius: 3) { ${ROW} }`,
        )
        .join('\n');
      const response = await t.gql<Record<string, Row | Row[] | null>>(
        `query($b: ID!, $p: Period!, $k: String, $r: String) {
          ${fields}
          nobody: standing(board: $b, period: $p, bucket: $k, region: $r, playerId: "never-played") { rank }
          nobodyAround: around(board: $b, period: $p, bucket: $k, region: $r, playerId: "never-played") { rank }
        }`,
        { b: board.id, p: period, k: bucket, r: region },
      );
      expect(response.errors).toBeUndefined();
      for (const i of probes) {
        expectRow(response.data?.[`s${i}`] as Row, ranked[i]!, i + 1, n);
        const around = response.data?.[`a${i}`] as Row[];
        const from = Math.max(0, i - 3);
        const window = ranked.slice(from, Math.min(n, i + 4));
        expect(around.length).toBe(window.length);
        window.forEach((entry, k) => expectRow(around[k], entry, from + k + 1, n));
      }
      expect(response.data?.nobody).toBeNull();
      expect(response.data?.nobodyAround).toEqual([]);
    }
  });

  it('friends: the player and friends with a score there, in rank order, with their rank on the whole board', async () => {
    const board = BOARDS[0]!;
    const all = rankEntries(
      board,
      expected
        .get(board.id)!
        .get(bucketId('ALL_TIME', 'all', null))!
        .values(),
    );
    const me = all[17]!;
    const friendIds = [all[3]!.playerId, all[40]!.playerId, all[2]!.playerId, 'has-no-score', me.playerId];
    const set = await t.server<{ setFriends: number }>(`mutation($p: ID!, $f: [ID!]!) { setFriends(playerId: $p, friendIds: $f) }`, {
      p: me.playerId,
      f: friendIds,
    });
    expect(set.data?.setFriends).toBe(4);
    const response = await t.gql<{ friends: Row[] }>(`{ friends(board: "${board.id}", playerId: "${me.playerId}") { ${ROW} } }`);
    const wanted = [2, 3, 17, 40];
    expect(response.data?.friends.map((row) => row.rank)).toEqual(wanted.map((i) => i + 1));
    wanted.forEach((i, k) => expectRow(response.data?.friends[k], all[i]!, i + 1, all.length));
  });
});
