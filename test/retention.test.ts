import { beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from './helpers/test-app.js';

// A date to come (2037 has 2026's calendar): the app sets Redis expiries from this clock, so a
// past date would expire the keys at once.
let clock = new Date('2037-11-29T12:00:00.000Z');
const SUBMIT = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { standings { period bucket } } }`;

describe('retention: buckets stay readable for their board retention, and their keys expire from the bucket', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Yesterday's results still count in yesterday: a grace of two days (docs/closing.md).
    t = await startTestApp({ now: () => clock });
    const created = await t.admin<{ createBoard: { retention: unknown } }>(
      `mutation { createBoard(input: { id: "kept", title: "Kept", maxScore: 100, periods: [DAILY, WEEKLY, MONTHLY], retention: { daily: 2 }, closeGraceSeconds: 172800 }) { retention { daily weekly monthly } } }`,
    );
    expect(created.data?.createBoard.retention).toEqual({ daily: 2, weekly: 35, monthly: 396 });
  });

  const expireTime = (key: string) => t.redis.call('EXPIRETIME', key) as Promise<number>;

  it("sets a daily key's expiry to the end of its day plus the retention, whatever the time of the write", async () => {
    await t.server(SUBMIT, { input: { board: 'kept', playerId: 'a', score: 5, matchId: 'm1', achievedAt: '2037-11-28T03:00:00.000Z' } });
    const key = 'lb:{kept:DAILY:2037-11-28}';
    const expected = Date.parse('2037-11-29T00:00:00.000Z') / 1000 + 2 * 86_400;
    expect(await expireTime(key)).toBe(expected);
    clock = new Date('2037-11-29T18:00:00.000Z');
    await t.server(SUBMIT, { input: { board: 'kept', playerId: 'b', score: 6, matchId: 'm2', achievedAt: '2037-11-28T23:00:00.000Z' } });
    expect(await expireTime(key)).toBe(expected);
    expect(await expireTime('lb:{kept:WEEKLY:2037-W48}')).toBe(Date.parse('2037-11-30T00:00:00.000Z') / 1000 + 35 * 86_400);
    expect(await expireTime('lb:{kept:ALL_TIME:all}')).toBe(-1);
  });

  it('reads a bucket while it is kept and answers NOT_FOUND after', async () => {
    const read = () => t.gql<{ top: { size: number } }>(`{ top(board: "kept", period: DAILY, bucket: "2037-11-28") { size } }`);
    expect((await read()).data?.top.size).toBe(2);
    clock = new Date('2037-12-01T00:00:00.000Z');
    expect((await read()).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('records a late result for a bucket no longer kept without bringing that bucket back', async () => {
    const answer = await t.server<{ submitScore: { standings: { period: string; bucket: string }[] } }>(SUBMIT, {
      input: { board: 'kept', playerId: 'c', score: 7, matchId: 'm3', achievedAt: '2037-11-27T10:00:00.000Z' },
    });
    expect(answer.data?.submitScore.standings.map((s) => `${s.period} ${s.bucket}`)).toEqual(['ALL_TIME all', 'MONTHLY 2037-11', 'WEEKLY 2037-W48']);
    expect(await t.redis.exists('lb:{kept:DAILY:2037-11-27}')).toBe(0);
  });

  it('refuses a retention out of range', async () => {
    const answer = await t.admin(`mutation { createBoard(input: { id: "bad-retention", title: "x", maxScore: 1, retention: { weekly: -1 } }) { id } }`);
    expect(answer.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
