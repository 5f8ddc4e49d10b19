import { describe, expect, it } from 'vitest';
import { type GraphQLResponse, type TestApp, codeOf, startTestApp } from './helpers/test-app.js';
import { labelsAt } from './helpers/oracle.js';
import { DAY_MS, type Result, freeze, insertBoard, noonDaysAgo, submit } from './helpers/bucket-history.js';

/**
 * Board.periodBuckets and Board.nextReset (issue 21, item 2): every page concatenated is the
 * oracle's list of the buckets a period can still read (newest first, within retention), each with
 * its size and whether it closed; the next reset on a calendar through a daylight-saving change;
 * the closed flag under closeGraceSeconds 0, default and raised; and bad input.
 */

const BUCKETS = `query($id: ID!, $period: Period!, $region: String, $first: Int!, $after: String) {
  board(id: $id) { periodBuckets(period: $period, region: $region, first: $first, after: $after) {
    edges { cursor node { period bucket region startsAt endsAt closed size } } pageInfo { hasNextPage endCursor } } } }`;
const NEXT_RESET = `query($id: ID!, $period: Period!, $region: String) { board(id: $id) { nextReset(period: $period, region: $region) } }`;

interface Listed {
  period: string;
  bucket: string;
  region: string | null;
  startsAt: string | null;
  endsAt: string | null;
  closed: boolean;
  size: number;
}
type Page = { board: { periodBuckets: { edges: { cursor: string; node: Listed }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } };

/** Every page of a period's buckets, `first` at a time. */
async function allPages(t: TestApp, id: string, period: string, region: string | null, first: number): Promise<Listed[]> {
  const out: Listed[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const answer: GraphQLResponse<Page> = await t.gql<Page>(BUCKETS, { id, period, region, first, after });
    expect(answer.errors).toBeUndefined();
    const { edges, pageInfo } = answer.data!.board.periodBuckets;
    expect(edges.length).toBeLessThanOrEqual(first);
    out.push(...edges.map((edge) => edge.node));
    if (!pageInfo.hasNextPage) return out;
    expect(pageInfo.endCursor).toBe(edges.at(-1)!.cursor);
    after = pageInfo.endCursor;
  }
  throw new Error('too many pages');
}

/** The oracle's calendar buckets of a UTC board: [start, end) spans stepped back from now's, kept while end + retention days > now. */
function utcSpans(period: 'DAILY' | 'WEEKLY' | 'MONTHLY', now: Date, retentionDays: number): { start: number; end: number }[] {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const today = Date.UTC(y, m, now.getUTCDate());
  const spans: { start: number; end: number }[] = [];
  for (let k = 0; ; k++) {
    let start: number;
    let end: number;
    if (period === 'DAILY') {
      start = today - k * DAY_MS;
      end = start + DAY_MS;
    } else if (period === 'WEEKLY') {
      const monday = today - ((new Date(today).getUTCDay() + 6) % 7) * DAY_MS;
      start = monday - 7 * k * DAY_MS;
      end = start + 7 * DAY_MS;
    } else {
      start = Date.UTC(y, m - k, 1);
      end = Date.UTC(y, m - k + 1, 1);
    }
    if (end + retentionDays * DAY_MS <= now.getTime()) return spans;
    spans.push({ start, end });
  }
}

/** A raised grace: results for the past days count, and no day closes by the clock in the first test. */
const GRACE_S = 30 * 86_400;

describe.each([1, 8])('periodBuckets on %i shard(s)', (shards) => {
  it('all pages concatenated are the oracle list: newest first, within retention, sizes and closed flags', async () => {
    const t = await startTestApp();
    const now = t.app.parts.now();
    const id = `pb-${shards}`;
    await insertBoard(t, { id, shards, periods: ['ALL_TIME', 'DAILY', 'WEEKLY', 'MONTHLY'], regions: ['eu'], closeGraceSeconds: GRACE_S });
    const results: Result[] = [];
    for (let i = 0; i < 90; i++) {
      const daysAgo = i % 8;
      results.push({
        board: id,
        playerId: `p${(i * 7) % 23}`,
        score: (i * 37) % 101,
        // Today's results are never after now: just past midnight, noon has not come yet.
        achievedAt: new Date(Math.min(noonDaysAgo(now, daysAgo).getTime() - (i % 5) * 3_600_000, now.getTime() - 1_000)),
        region: i % 3 === 0 ? 'eu' : null,
      });
    }
    await submit(t, results);
    // Two days closed by a freeze (as the closer would), though their grace has not passed.
    const frozenDays = [2, 3].map((k) => labelsAt(noonDaysAgo(now, k)).DAILY!);
    await freeze(t, id, 'DAILY', frozenDays, [null, 'eu']);
    const at = t.app.parts.now();

    for (const region of [null, 'eu']) {
      const ofList = results.filter((r) => region === null || r.region === region);
      const playersIn = (start: number, end: number) =>
        new Set(ofList.filter((r) => r.achievedAt.getTime() >= start && r.achievedAt.getTime() < end).map((r) => r.playerId)).size;
      for (const period of ['DAILY', 'WEEKLY', 'MONTHLY'] as const) {
        const retention = { DAILY: 7, WEEKLY: 35, MONTHLY: 396 }[period];
        const expected = utcSpans(period, at, retention).map(({ start, end }) => {
          const bucket = labelsAt(new Date(start))[period]!;
          return {
            period,
            bucket,
            region,
            startsAt: new Date(start).toISOString(),
            endsAt: new Date(end).toISOString(),
            closed: (period === 'DAILY' && frozenDays.includes(bucket)) || at.getTime() >= end + GRACE_S * 1000,
            size: playersIn(start, end),
          };
        });
        expect(expected.length).toBeGreaterThan(1);
        for (const first of [1, 3, 100]) {
          expect(await allPages(t, id, period, region, first), `${period} ${region} first ${first}`).toEqual(expected);
        }
      }
      expect(await allPages(t, id, 'ALL_TIME', region, 20)).toEqual([
        { period: 'ALL_TIME', bucket: 'all', region, startsAt: null, endsAt: null, closed: false, size: new Set(ofList.map((r) => r.playerId)).size },
      ]);
    }
  });
});

describe('periodBuckets and nextReset on a calendar with daylight-saving changes', () => {
  it('the next reset is the next local midnight (a 23- or 25-hour day), and the listed days have those spans', async () => {
    let clock = new Date('2026-03-29T12:00:00.000Z');
    const t = await startTestApp({ now: () => clock });
    await insertBoard(t, {
      id: 'dst',
      periods: ['ALL_TIME', 'DAILY', 'WEEKLY', 'MONTHLY'],
      regions: ['eu'],
      timeZone: 'America/New_York',
      regionTimeZones: [{ region: 'eu', timeZone: 'Europe/Paris' }],
    });
    const reset = async (period: string, region: string | null) => {
      const answer = await t.gql<{ board: { nextReset: string | null } }>(NEXT_RESET, { id: 'dst', period, region });
      expect(answer.errors).toBeUndefined();
      return answer.data!.board.nextReset;
    };
    // Paris springs forward on 29 March 2026 (02:00 CET → 03:00 CEST): that day ends at 22:00 UTC, 23 hours after it began.
    expect(await reset('DAILY', 'eu')).toBe('2026-03-29T22:00:00.000Z');
    expect(await reset('WEEKLY', 'eu')).toBe('2026-03-29T22:00:00.000Z');
    expect(await reset('MONTHLY', 'eu')).toBe('2026-03-31T22:00:00.000Z');
    expect(await reset('ALL_TIME', 'eu')).toBeNull();
    // The board's own calendar (New York, on EDT since 8 March): midnight is 04:00 UTC.
    expect(await reset('DAILY', null)).toBe('2026-03-30T04:00:00.000Z');
    const days = await allPages(t, 'dst', 'DAILY', 'eu', 2);
    expect(days.slice(0, 3).map(({ bucket, startsAt, endsAt }) => ({ bucket, startsAt, endsAt }))).toEqual([
      { bucket: '2026-03-29', startsAt: '2026-03-28T23:00:00.000Z', endsAt: '2026-03-29T22:00:00.000Z' },
      { bucket: '2026-03-28', startsAt: '2026-03-27T23:00:00.000Z', endsAt: '2026-03-28T23:00:00.000Z' },
      { bucket: '2026-03-27', startsAt: '2026-03-26T23:00:00.000Z', endsAt: '2026-03-27T23:00:00.000Z' },
    ]);

    // New York springs forward on 8 March 2026 at 07:00 UTC; on that day, before and after.
    clock = new Date('2026-03-08T06:00:00.000Z');
    expect(await reset('DAILY', null)).toBe('2026-03-09T04:00:00.000Z');
    clock = new Date('2026-03-08T12:00:00.000Z');
    expect(await reset('DAILY', null)).toBe('2026-03-09T04:00:00.000Z');
    const ny = await allPages(t, 'dst', 'DAILY', null, 20);
    expect(ny[0]).toMatchObject({ bucket: '2026-03-08', startsAt: '2026-03-08T05:00:00.000Z', endsAt: '2026-03-09T04:00:00.000Z', closed: false });

    // Paris falls back on 25 October 2026: that day lasts 25 hours; New York on 1 November.
    clock = new Date('2026-10-25T01:30:00.000Z');
    expect(await reset('DAILY', 'eu')).toBe('2026-10-25T23:00:00.000Z');
    clock = new Date('2026-10-26T09:00:00.000Z');
    const autumn = await allPages(t, 'dst', 'DAILY', 'eu', 3);
    expect(autumn[1]).toMatchObject({ bucket: '2026-10-25', startsAt: '2026-10-24T22:00:00.000Z', endsAt: '2026-10-25T23:00:00.000Z', closed: true });
    clock = new Date('2026-11-01T12:00:00.000Z');
    expect(await reset('DAILY', null)).toBe('2026-11-02T05:00:00.000Z');
  });
});

describe('closed flags follow closeGraceSeconds', () => {
  it('0 closes at the end, the default 300 s after it, a raised grace later; a season when closed', async () => {
    // Ahead of the wall clock, so the results recorded now are recorded before every bucket closes.
    const wallTomorrow = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()) + 2 * DAY_MS;
    let clock = new Date(wallTomorrow - 3_600_000);
    const t = await startTestApp({ now: () => clock });
    const graces = { zero: 0, standard: undefined, raised: 3_600 } as const;
    for (const [name, closeGraceSeconds] of Object.entries(graces)) {
      await insertBoard(t, { id: `grace-${name}`, periods: ['ALL_TIME', 'DAILY'], ...(closeGraceSeconds === undefined ? {} : { closeGraceSeconds }) });
      await submit(
        t,
        [1, 2, 3].map((i) => ({ board: `grace-${name}`, playerId: `p${i}`, score: i, achievedAt: new Date(clock.getTime() - 60_000) })),
      );
    }
    const yesterday = labelsAt(new Date(wallTomorrow - DAY_MS)).DAILY!;
    const closedOf = async (name: string) => {
      const [day] = await allPages(t, `grace-${name}`, 'DAILY', null, 100).then((list) => list.filter((b) => b.bucket === yesterday));
      expect(day!.size).toBe(3);
      return day!.closed;
    };
    expect([await closedOf('zero'), await closedOf('standard'), await closedOf('raised')]).toEqual([false, false, false]);
    clock = new Date(wallTomorrow + 120_000);
    expect([await closedOf('zero'), await closedOf('standard'), await closedOf('raised')]).toEqual([true, false, false]);
    clock = new Date(wallTomorrow + 360_000);
    expect([await closedOf('zero'), await closedOf('standard'), await closedOf('raised')]).toEqual([true, true, false]);
    clock = new Date(wallTomorrow + 3_660_000);
    expect([await closedOf('zero'), await closedOf('standard'), await closedOf('raised')]).toEqual([true, true, true]);
  });

  it("SEASON lists every season, newest first; closed once closed, its size frozen; nextReset the open one's end", async () => {
    const t = await startTestApp();
    await insertBoard(t, { id: 'seasonal', periods: ['ALL_TIME', 'SEASON'] });
    const start = await t.admin<{ startSeason: { id: string } }>(`mutation { startSeason(board: "seasonal", name: "one") { id } }`);
    expect(start.errors).toBeUndefined();
    const now = t.app.parts.now();
    await submit(
      t,
      [1, 2, 3, 4].map((i) => ({ board: 'seasonal', playerId: `p${i}`, score: i, achievedAt: now })),
    );
    expect((await t.admin(`mutation { closeSeason(board: "seasonal") { id } }`)).errors).toBeUndefined();
    const endsAt = new Date(now.getTime() + 10 * DAY_MS).toISOString();
    expect(
      (await t.admin(`mutation($endsAt: DateTime) { startSeason(board: "seasonal", name: "two", endsAt: $endsAt) { id } }`, { endsAt })).errors,
    ).toBeUndefined();
    await submit(
      t,
      [5, 6].map((i) => ({ board: 'seasonal', playerId: `p${i}`, score: i, achievedAt: new Date(t.app.parts.now().getTime()) })),
    );
    const seasons = await allPages(t, 'seasonal', 'SEASON', null, 1);
    expect(seasons.map(({ bucket, closed, size, endsAt: ends }) => ({ bucket, closed, size, endsAt: ends }))).toEqual([
      { bucket: 's2', closed: false, size: 2, endsAt },
      { bucket: 's1', closed: true, size: 4, endsAt: null },
    ]);
    const reset = await t.gql<{ board: { nextReset: string | null } }>(NEXT_RESET, { id: 'seasonal', period: 'SEASON', region: null });
    expect(reset.data!.board.nextReset).toBe(endsAt);
    expect((await t.admin(`mutation { closeSeason(board: "seasonal") { id } }`)).errors).toBeUndefined();
    const none = await t.gql<{ board: { nextReset: string | null } }>(NEXT_RESET, { id: 'seasonal', period: 'SEASON', region: null });
    expect(none.data!.board.nextReset).toBeNull();
  });
});

describe('bad input', () => {
  it('a period not kept, a region not had, first outside 1..100 and a forged or foreign cursor answer BAD_USER_INPUT', async () => {
    const t = await startTestApp();
    await insertBoard(t, { id: 'bad', periods: ['ALL_TIME', 'DAILY'], regions: ['eu'] });
    const bucketsCode = async (variables: Record<string, unknown>) => codeOf(await t.gql(BUCKETS, { id: 'bad', region: null, first: 20, ...variables }));
    const resetCode = async (variables: Record<string, unknown>) => codeOf(await t.gql(NEXT_RESET, { id: 'bad', region: null, ...variables }));
    expect(await bucketsCode({ period: 'MONTHLY' })).toBe('BAD_USER_INPUT');
    expect(await bucketsCode({ period: 'SEASON' })).toBe('BAD_USER_INPUT');
    expect(await resetCode({ period: 'WEEKLY' })).toBe('BAD_USER_INPUT');
    expect(await bucketsCode({ period: 'DAILY', region: 'zz' })).toBe('BAD_USER_INPUT');
    expect(await resetCode({ period: 'DAILY', region: 'zz' })).toBe('BAD_USER_INPUT');
    expect(await bucketsCode({ period: 'DAILY', first: 0 })).toBe('BAD_USER_INPUT');
    expect(await bucketsCode({ period: 'DAILY', first: 101 })).toBe('BAD_USER_INPUT');
    expect(await bucketsCode({ period: 'DAILY', first: 100 })).toBeUndefined();
    const page = await t.gql<Page>(BUCKETS, { id: 'bad', period: 'DAILY', region: null, first: 1 });
    const cursor = page.data!.board.periodBuckets.pageInfo.endCursor!;
    expect(await bucketsCode({ period: 'DAILY', after: cursor })).toBeUndefined();
    const forged = `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`;
    expect(await bucketsCode({ period: 'DAILY', after: forged })).toBe('BAD_USER_INPUT');
    expect(await bucketsCode({ period: 'DAILY', after: 'not-a-cursor' })).toBe('BAD_USER_INPUT');
    // Another list's cursor: the region's, or another period's.
    expect(await bucketsCode({ period: 'DAILY', region: 'eu', after: cursor })).toBe('BAD_USER_INPUT');
    expect(await bucketsCode({ period: 'ALL_TIME', after: cursor })).toBe('BAD_USER_INPUT');
  });
});
