import { beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * The write path writes a board-score row only when the result changes it, and only for the
 * buckets a board keeps as rows (a BEST board's ALL_TIME; every bucket of a SUM board; the others
 * are derived from the score log): a BEST score that stands is left as it was (no new row version
 * in PostgreSQL), and the answer still carries the player's standing in every bucket, with the
 * time and metadata of the result that set it, as if it had been written.
 */

const SUBMIT = `mutation($input: SubmitScoreInput!) {
  submitScore(input: $input) { __typename duplicate improved standings { __typename period bucket standing { __typename rank score achievedAt metadata } } }
}`;

interface Answer {
  submitScore: {
    duplicate: boolean;
    improved: boolean;
    standings: { period: string; standing: { rank: number; score: number; achievedAt: string; metadata: unknown } }[];
  };
}

describe('board-score writes', () => {
  let t: TestApp;
  /** Each row's version (xmin) and score, by period. */
  const rowsOf = async (board: string, player: string) =>
    Object.fromEntries(
      (
        await t.database.sql<{ period: string; version: string; score: number }[]>`
        select period, xmin::text as version, score from board_scores where board_id = ${board} and player_id = ${player}`
      ).map((row) => [row.period, row]),
    );
  const submit = async (board: string, player: string, score: number, matchId: string, achievedAt = new Date()) => {
    const answer = await t.server<Answer>(SUBMIT, {
      input: { board, playerId: player, score, matchId, achievedAt: achievedAt.toISOString(), metadata: { matchId } },
    });
    expect(answer.errors).toBeUndefined();
    return answer.data!.submitScore;
  };

  beforeAll(async () => {
    t = await startTestApp();
    for (const [id, aggregate] of [
      ['Best-EU', 'BEST'],
      ['Sum-EU', 'SUM'],
    ] as const) {
      const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
        input: { id, title: id, order: 'HIGH_FIRST', aggregate, periods: ['ALL_TIME', 'DAILY'], regions: [], maxScore: 1_000_000 },
      });
      expect(created.errors).toBeUndefined();
    }
  }, 60_000);

  it('a BEST score that stands writes no row, and is answered with the standing it keeps', async () => {
    const firstAt = new Date(Date.now() - 2_000);
    await submit('Best-EU', 'Zoë', 100, 'm1', firstAt);
    const first = await rowsOf('Best-EU', 'Zoë');
    expect(Object.keys(first).sort()).toEqual(['ALL_TIME']);

    const worse = await submit('Best-EU', 'Zoë', 50, 'm2');
    expect(worse).toMatchObject({ duplicate: false, improved: false });
    // Every bucket answers the standing the first result set, with its time and metadata.
    expect(worse.standings.map((s) => [s.period, s.standing.score, s.standing.rank, s.standing.achievedAt, s.standing.metadata])).toEqual([
      ['ALL_TIME', 100, 1, firstAt.toISOString(), { matchId: 'm1' }],
      ['DAILY', 100, 1, firstAt.toISOString(), { matchId: 'm1' }],
    ]);
    expect(await rowsOf('Best-EU', 'Zoë')).toEqual(first);

    const better = await submit('Best-EU', 'Zoë', 150, 'm3');
    expect(better).toMatchObject({ duplicate: false, improved: true });
    expect(better.standings.map((s) => [s.period, s.standing.score, s.standing.metadata])).toEqual([
      ['ALL_TIME', 150, { matchId: 'm3' }],
      ['DAILY', 150, { matchId: 'm3' }],
    ]);
    const after = await rowsOf('Best-EU', 'Zoë');
    expect(Object.keys(after)).toEqual(['ALL_TIME']);
    expect(after.ALL_TIME!.score).toBe(150);
    expect(after.ALL_TIME!.version).not.toBe(first.ALL_TIME!.version);
  });

  it('a SUM total moves with every result, so each one is written', async () => {
    await submit('Sum-EU', 'Zoë', 10, 'm1');
    const first = await rowsOf('Sum-EU', 'Zoë');
    const next = await submit('Sum-EU', 'Zoë', 5, 'm2');
    expect(next.standings.map((s) => s.standing.score)).toEqual([15, 15]);
    const after = await rowsOf('Sum-EU', 'Zoë');
    for (const period of ['ALL_TIME', 'DAILY']) {
      expect(after[period]!.score).toBe(15);
      expect(after[period]!.version).not.toBe(first[period]!.version);
    }
  });

  it('one call of results achieved at different times and in different regions answers each in its own buckets, placed as of its own moment', async () => {
    const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
      // Yesterday's results count in yesterday: a grace of two days (docs/closing.md).
      input: {
        id: 'Mixed-Batch',
        title: 'Mixed',
        order: 'HIGH_FIRST',
        periods: ['ALL_TIME', 'DAILY'],
        regions: ['EU', 'NA'],
        maxScore: 1_000_000,
        closeGraceSeconds: 2 * 86_400,
      },
    });
    expect(created.errors).toBeUndefined();
    const now = new Date();
    const yesterday = new Date(now.getTime() - 86_400_000);
    const results = [
      { playerId: 'Zoë', score: 300, region: 'EU', achievedAt: now },
      { playerId: 'Ĳsbrand', score: 200, region: null, achievedAt: now },
      { playerId: 'Łukasz', score: 100, region: 'EU', achievedAt: yesterday },
      { playerId: 'Ngozi', score: 400, region: 'NA', achievedAt: yesterday },
      { playerId: 'Ana', score: 250, region: 'EU', achievedAt: now },
    ];
    const answer = await t.server<{
      submitScores: { __typename: string; standings: { period: string; bucket: string; region: string | null; standing: { rank: number; score: number } }[] }[];
    }>(
      `fragment Placed on PeriodStanding { __typename period bucket region standing { __typename rank score } }
       mutation Mixed($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { __typename standings { ...Placed } } }`,
      { inputs: results.map((r) => ({ ...r, board: 'Mixed-Batch', matchId: 'mixed-1', achievedAt: r.achievedAt.toISOString() })) },
    );
    expect(answer.errors).toBeUndefined();

    // The oracle: each result's lists (ALL_TIME and its day, globally and in its region), and its
    // rank in each among the results of the call up to it.
    const day = (at: Date) => at.toISOString().slice(0, 10);
    const lists = (r: (typeof results)[number]) =>
      [null, ...(r.region ? [r.region] : [])].flatMap((region) => [
        ['ALL_TIME', 'all', region],
        ['DAILY', day(r.achievedAt), region],
      ]);
    const expected = results.map((r, i) =>
      lists(r).map(([period, bucket, region]) => {
        const rank = 1 + results.slice(0, i).filter((o) => o.score > r.score && lists(o).some((l) => l.join() === [period, bucket, region].join())).length;
        return [period, bucket, region, rank, r.score];
      }),
    );
    const sorted = (rows: unknown[][]) => rows.map((row) => JSON.stringify(row)).sort();
    answer.data!.submitScores.forEach((payload, i) => {
      expect(sorted(payload.standings.map((s) => [s.period, s.bucket, s.region, s.standing.rank, s.standing.score]))).toEqual(sorted(expected[i]!));
    });
  });
});
