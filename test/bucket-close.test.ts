import { describe, expect, it } from 'vitest';
import type { Board } from '../src/model/board.js';
import { parseBucketLabel } from '../src/model/buckets.js';
import { indexKeys } from '../src/ranking/keys.js';
import type { BoardBucket } from '../src/ranking/index.js';
import { type BucketCloser, startBucketCloser } from '../src/jobs/bucket-closer.js';
import { liveBucketsWithScores } from '../src/jobs/index-recovery.js';
import { type OracleEntry, rankEntries } from './helpers/oracle.js';
import { seeded } from './helpers/random.js';
import { type TestApp, codeOf, startTestApp } from './helpers/test-app.js';

/**
 * Closing calendar buckets (docs/closing.md): a day, a week and a month frozen, globally and for a
 * region on its own calendar (Asia/Tokyo, UTC+9 all year), each against a plain model of the
 * results (never the service's own output), on 1 and 8 shards; late results; the close raced by
 * two processes and crashed mid-way; closeGraceSeconds; flags, erasure, retention and the keys.
 * Every clock is injected: the closers here are the test's own (settle margin SETTLE_MS), run when
 * a test asks, and the apps' own closers are slowed down to an hour.
 */

const SETTLE_MS = 1_000;
const GRACE_MS = 300_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const TOKYO = 9 * HOUR;

const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id closeGraceSeconds } }`;
const UPDATE = `mutation($input: UpdateBoardInput!) { updateBoard(input: $input) { id closeGraceSeconds } }`;
const SUBMIT = `mutation($inputs: [SubmitScoreInput!]!) {
  submitScores(inputs: $inputs) { duplicate standings { period bucket region standing { rank score } } } }`;
const REBUILD = `mutation($board: ID!, $period: Period!, $bucket: String, $region: String) {
  rebuildBoard(board: $board, period: $period, bucket: $bucket, region: $region) }`;

interface Result {
  playerId: string;
  matchId: string;
  score: number;
  region: string | null;
  achievedAt: number;
}

/** A UTC day's label, written out without the service's calendar code. */
const dayLabel = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The oracle of one list: each player's best result achieved in [from, to) (of `region`, or any
 * for the global list), reached at the earliest time they got it, ranked by score, then time, then
 * player id in UTF-8 byte order descending; as frozen rows.
 */
function oracle(results: Result[], from: number, to: number, region: string | null) {
  const best = new Map<string, OracleEntry>();
  for (const r of results) {
    if (r.achievedAt < from || r.achievedAt >= to || (region !== null && r.region !== region)) continue;
    const old = best.get(r.playerId);
    if (!old || r.score > old.score || (r.score === old.score && r.achievedAt < old.reachedAt))
      best.set(r.playerId, { playerId: r.playerId, score: r.score, reachedAt: r.achievedAt, metadata: null });
  }
  return rankEntries({ order: 'HIGH_FIRST' }, best.values()).map((e, i) => ({ rank: i + 1, playerId: e.playerId, score: e.score, reachedAt: e.reachedAt }));
}

async function frozenRows(t: TestApp, board: string, period: string, bucket: string, region: string | null) {
  const rows = await t.database.sql<{ rank: number; player_id: string | null; score: string; reached_ms: number }[]>`
    select rank, player_id, score, round(extract(epoch from reached_at) * 1000)::float8 as reached_ms from frozen_standings
    where board_id = ${board} and period = ${period} and bucket = ${bucket} and region = ${region ?? ''} order by rank`;
  return rows.map((row) => ({ rank: row.rank, playerId: row.player_id, score: Number(row.score), reachedAt: row.reached_ms }));
}

async function frozenBuckets(t: TestApp, board: string) {
  const rows = await t.database.sql<{ period: string; bucket: string; region: string; size: number }[]>`
    select period, bucket, region, size from frozen_buckets where board_id = ${board} order by period, bucket, region`;
  return rows.map((row) => `${row.period} ${row.bucket} ${row.region || '-'} ${row.size}`);
}

/**
 * The transactions that wrote a board's frozen standings and markers, as `list: xmin` lines: a list
 * frozen twice, or by two transactions, would show another id (postgres.js's statement log shows a
 * statement once per parse and once per run, so it cannot count them).
 */
async function freezeTransactions(t: TestApp, board: string) {
  const rows = await t.database.sql<{ list: string; xmins: string }[]>`
    select b.period || ' ' || b.bucket || ' ' || b.region as list, b.xmin::text || ' ' || coalesce(string_agg(distinct s.xmin::text, ','), '') as xmins
    from frozen_buckets b left join frozen_standings s using (board_id, period, bucket, region)
    where b.board_id = ${board} group by b.period, b.bucket, b.region, b.xmin::text order by 1`;
  return rows.map((row) => `${row.list}: ${row.xmins}`);
}

const isFrozen = async (t: TestApp, board: string, period: string, bucket: string, region: string | null) =>
  (await t.database.sql`select 1 from frozen_buckets where board_id = ${board} and period = ${period} and bucket = ${bucket} and region = ${region ?? ''}`)
    .length === 1;

async function createBoard(t: TestApp, id: string, extra: Record<string, unknown> = {}) {
  const response = await t.admin(CREATE, {
    input: {
      id,
      title: id,
      maxScore: 1_000,
      periods: ['DAILY', 'WEEKLY', 'MONTHLY'],
      regions: ['jp'],
      regionTimeZones: [{ region: 'jp', timeZone: 'Asia/Tokyo' }],
      ...extra,
    },
  });
  expect(response.errors).toBeUndefined();
  return response.data as { createBoard: { id: string; closeGraceSeconds: number } };
}

type Standings = { period: string; bucket: string; region: string | null; standing: { rank: number; score: number } }[];

async function submit(t: TestApp, boards: string[], r: Result): Promise<Standings[]> {
  const inputs = boards.map((board) => ({
    board,
    playerId: r.playerId,
    matchId: r.matchId,
    score: r.score,
    region: r.region,
    achievedAt: new Date(r.achievedAt).toISOString(),
  }));
  const response = await t.server<{ submitScores: { standings: Standings }[] }>(SUBMIT, { inputs });
  expect(response.errors).toBeUndefined();
  return response.data!.submitScores.map((payload) => payload.standings);
}

const bucketsOf = (standings: Standings) => standings.map((s) => `${s.period} ${s.bucket} ${s.region ?? '-'}`).sort();

async function boardOf(t: TestApp, id: string): Promise<Board> {
  return (await t.app.parts.boards.find(id))!;
}

/** The board bucket a list names (the service's label parser only names it; the oracle says what it holds). */
async function listOf(t: TestApp, board: string, period: 'DAILY' | 'WEEKLY' | 'MONTHLY', label: string, region: string | null): Promise<BoardBucket> {
  const b = await boardOf(t, board);
  return { board: b, bucket: parseBucketLabel(b, period, label, region)!, region };
}

async function keysLeft(t: TestApp, at: BoardBucket): Promise<number> {
  return t.redis.exists(...indexKeys(at));
}

/** What the index shows of a list, best first: [player, score] pairs. */
async function indexTop(t: TestApp, at: BoardBucket, limit = 1_000) {
  const top = await t.app.parts.index.top(at, limit);
  return top.places.map((place) => [place.playerId, place.score]);
}

/** A closer of the test's own over an app's parts: passes only when asked, with a short settle margin. */
const closerOf = (t: TestApp): BucketCloser => startBucketCloser(t.app.parts, { intervalMs: null, settleMs: SETTLE_MS });

// The first Wednesday from tomorrow on whose ISO week lies inside its month. The app clocks run
// ahead of the real one, never behind: the index's keys expire by Redis's own clock (their
// retention), so a bucket here must still be kept by the real clock.
const today = new Date();
const D = (() => {
  let at = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + 1);
  const sameMonth = (a: number, b: number) => new Date(a).getUTCMonth() === new Date(b).getUTCMonth();
  while (new Date(at).getUTCDay() !== 3 || !sameMonth(at - 2 * DAY, at + 4 * DAY)) at += DAY;
  return at;
})();
const MONTH_START = Date.UTC(new Date(D).getUTCFullYear(), new Date(D).getUTCMonth(), 1);
const MONTH_END = Date.UTC(new Date(D).getUTCFullYear(), new Date(D).getUTCMonth() + 1, 1);
const WEEK_START = D - 2 * DAY;
const WEEK_END = D + 5 * DAY;
const isoWeek = (() => {
  // The ISO week of D: the week of its Thursday's year, counted from the week holding 4 January.
  const thursday = new Date(D + DAY);
  const jan4 = Date.UTC(thursday.getUTCFullYear(), 0, 4);
  const week1 = jan4 - ((new Date(jan4).getUTCDay() + 6) % 7) * DAY;
  return `${thursday.getUTCFullYear()}-W${String(Math.floor((WEEK_START - week1) / (7 * DAY)) + 1).padStart(2, '0')}`;
})();
const monthLabel = new Date(MONTH_START).toISOString().slice(0, 7);

describe.each([1, 8])('a day, a week and a month closed and frozen, on %i shard(s)', (shards) => {
  const board = `close-${shards}`;
  let clock = new Date(D - DAY);
  let t: TestApp;
  let closer: BucketCloser;
  const results: Result[] = [];

  it('takes the results of two days, each submitted as it is achieved', async () => {
    t = await startTestApp({
      now: () => clock,
      seasonCloseIntervalMs: HOUR,
    });
    closer = closerOf(t);
    expect((await createBoard(t, board, { shards })).createBoard.closeGraceSeconds).toBe(300);
    const random = seeded(42 + shards);
    const players = ['Zoë', 'zoë', 'zoe', 'Émile', '😀', '日本', ...Array.from({ length: 50 }, (_, i) => `p${i}`)];
    // From noon of the day before D to D's last second: Tokyo's days D-1, D and D+1 are all touched.
    for (let i = 0; i < 160; i += 1) {
      results.push({
        playerId: players[Math.floor(random() * players.length)]!,
        matchId: `m${i}`,
        score: Math.floor(random() * 10) * 100,
        region: random() < 0.5 ? 'jp' : null,
        achievedAt: D - 12 * HOUR + Math.floor(random() * 36 * 3_600) * 1_000,
      });
    }
    results.sort((a, b) => a.achievedAt - b.achievedAt);
    for (const r of results) {
      clock = new Date(r.achievedAt + 1_000);
      await submit(t, [board], r);
    }
  });

  it('freezes a day once its end plus the grace plus the settle margin has passed, globally and on the region calendar', async () => {
    // The day has ended and its grace too, but not the settle margin: nothing is frozen yet.
    clock = new Date(D + DAY + GRACE_MS + SETTLE_MS / 2);
    await closer.pass();
    expect(await isFrozen(t, board, 'DAILY', dayLabel(D), null)).toBe(false);
    // Tokyo's day D ended at 15:00 UTC: frozen already.
    expect(await isFrozen(t, board, 'DAILY', dayLabel(D), 'jp')).toBe(true);

    clock = new Date(D + DAY + GRACE_MS + SETTLE_MS);
    await closer.pass();
    for (const [from, region] of [
      [D - DAY, null],
      [D, null],
      [D - DAY - TOKYO, 'jp'],
      [D - TOKYO, 'jp'],
    ] as const) {
      const expected = oracle(results, from, from + DAY, region);
      expect(expected.length).toBeGreaterThan(region ? 0 : 20);
      expect(await frozenRows(t, board, 'DAILY', dayLabel(from + TOKYO), region)).toEqual(expected);
      // Its keys are gone: Redis holds open buckets only.
      expect(await keysLeft(t, await listOf(t, board, 'DAILY', dayLabel(from + TOKYO), region))).toBe(0);
    }
    // Tokyo's day D+1 (to 15:00 UTC on D+1), the week and the month are open.
    expect(await isFrozen(t, board, 'DAILY', dayLabel(D + DAY), 'jp')).toBe(false);
    expect(await isFrozen(t, board, 'WEEKLY', isoWeek, null)).toBe(false);
    expect(await isFrozen(t, board, 'MONTHLY', monthLabel, null)).toBe(false);
    // A board seen for the first time freezes every past kept day, the empty ones too (size 0).
    expect(await frozenBuckets(t, board)).toContain(`DAILY ${dayLabel(D - 2 * DAY)} - 0`);
    // Each list frozen once, however many passes.
    const writers = await freezeTransactions(t, board);
    await closer.pass();
    expect(await freezeTransactions(t, board)).toEqual(writers);
    // Neither the index recovery nor the catch-up brings a closed bucket back.
    const live = await liveBucketsWithScores(t.app.parts);
    expect(live.filter((at) => at.board.id === board && at.bucket.period === 'DAILY').map((at) => at.bucket.label)).not.toContain(dayLabel(D));
  });

  it('a late result does not move the closed day, and moves the open week and month, in PostgreSQL and in the index', async () => {
    const frozenBefore = await frozenRows(t, board, 'DAILY', dayLabel(D), null);
    const late: Result = { playerId: 'late', matchId: 'late-1', score: 1_000, region: 'jp', achievedAt: D + 12 * HOUR };
    const [standings] = await submit(t, [board], late);
    expect(bucketsOf(standings!)).toEqual(
      [`ALL_TIME all -`, `ALL_TIME all jp`, `MONTHLY ${monthLabel} -`, `MONTHLY ${monthLabel} jp`, `WEEKLY ${isoWeek} -`, `WEEKLY ${isoWeek} jp`].sort(),
    );
    results.push(late);
    expect(await frozenRows(t, board, 'DAILY', dayLabel(D), null)).toEqual(frozenBefore);
    expect(frozenBefore.some((row) => row.playerId === 'late')).toBe(false);
    // In the index, the open week holds it.
    const week = await listOf(t, board, 'WEEKLY', isoWeek, null);
    const expectedWeek = oracle(results, WEEK_START, WEEK_END, null).map((row) => [row.playerId, row.score]);
    expect(expectedWeek[0]).toEqual(['late', 1_000]);
    expect(await indexTop(t, week)).toEqual(expectedWeek);
    // The closed day is not rebuilt; the open week rebuilt from PostgreSQL equals the oracle, the late result in it.
    const refused = await t.admin(REBUILD, { board, period: 'DAILY', bucket: dayLabel(D) });
    expect(codeOf(refused)).toBe('BAD_USER_INPUT');
    expect(refused.errors![0]!.message).toMatch(/frozen/);
    expect(await keysLeft(t, await listOf(t, board, 'DAILY', dayLabel(D), null))).toBe(0);
    const rebuilt = await t.admin<{ rebuildBoard: number }>(REBUILD, { board, period: 'WEEKLY', bucket: isoWeek });
    expect(rebuilt.errors).toBeUndefined();
    expect(rebuilt.data!.rebuildBoard).toBe(expectedWeek.length);
    expect(await indexTop(t, week)).toEqual(expectedWeek);
    const jpWeek = await listOf(t, board, 'WEEKLY', isoWeek, 'jp');
    expect(codeOf(await t.admin(REBUILD, { board, period: 'WEEKLY', bucket: isoWeek, region: 'jp' }))).toBeUndefined();
    expect(await indexTop(t, jpWeek)).toEqual(oracle(results, WEEK_START - TOKYO, WEEK_END - TOKYO, 'jp').map((row) => [row.playerId, row.score]));
  });

  it('freezes the week and the month, each with the late result, as the oracle ranks them', async () => {
    // Past the month's end and day D's retention (seven days after its end).
    clock = new Date(Math.max(MONTH_END, D + 8 * DAY) + GRACE_MS + SETTLE_MS);
    await closer.pass();
    for (const [period, label, from, to] of [
      ['WEEKLY', isoWeek, WEEK_START, WEEK_END],
      ['MONTHLY', monthLabel, MONTH_START, MONTH_END],
    ] as const) {
      for (const region of [null, 'jp']) {
        const shift = region ? TOKYO : 0;
        const expected = oracle(results, from - shift, to - shift, region);
        expect(expected[0]!.playerId).toBe('late');
        expect(await frozenRows(t, board, period, label, region)).toEqual(expected);
        expect(await frozenBuckets(t, board)).toContain(`${period} ${label} ${region ?? '-'} ${expected.length}`);
        expect(await keysLeft(t, await listOf(t, board, period, label, region))).toBe(0);
      }
    }
    // Retention: seven days after its end, the frozen day D is deleted; the month is kept (13 months).
    expect(await isFrozen(t, board, 'DAILY', dayLabel(D), null)).toBe(false);
    expect(await frozenRows(t, board, 'DAILY', dayLabel(D), null)).toEqual([]);
  });

  it('a flag, an unflag and an erasure after the freeze: the frozen rows stay, the erased one unnamed at its rank', async () => {
    const before = await frozenRows(t, board, 'MONTHLY', monthLabel, null);
    const flagged = before[1]!.playerId!;
    expect(codeOf(await t.admin(`mutation($p: ID!) { flagPlayer(playerId: $p, reason: "test") { id } }`, { p: flagged }))).toBeUndefined();
    expect(await frozenRows(t, board, 'MONTHLY', monthLabel, null)).toEqual(before);
    expect(codeOf(await t.admin(`mutation($p: ID!) { unflagPlayer(playerId: $p) { id } }`, { p: flagged }))).toBeUndefined();
    expect(await frozenRows(t, board, 'MONTHLY', monthLabel, null)).toEqual(before);
    // An unflag writes the player back into open buckets only: the closed month's keys stay gone.
    expect(await keysLeft(t, await listOf(t, board, 'MONTHLY', monthLabel, null))).toBe(0);
    const erased = before[2]!.playerId!;
    expect(codeOf(await t.admin(`mutation($p: ID!) { deletePlayer(playerId: $p) }`, { p: erased }))).toBeUndefined();
    expect(await frozenRows(t, board, 'MONTHLY', monthLabel, null)).toEqual(before.map((row) => (row.playerId === erased ? { ...row, playerId: null } : row)));
  });

  it('keeps dropping the keys a late write brings back into a closed bucket', async () => {
    const month = await listOf(t, board, 'MONTHLY', monthLabel, null);
    await t.redis.zadd(indexKeys(month)[0]!, 1, 'straggler');
    expect(await keysLeft(t, month)).toBe(1);
    await closer.pass();
    expect(await keysLeft(t, month)).toBe(0);
  });
});

describe('the close raced by two processes, and crashed mid-freeze', () => {
  it('two processes closing the same buckets at once: each list frozen by exactly one statement', async () => {
    let clock = new Date(D + 10 * HOUR);
    const a = await startTestApp({ now: () => clock, seasonCloseIntervalMs: HOUR });
    const b = await startTestApp({ now: () => clock, seasonCloseIntervalMs: HOUR, shareStoresOf: a });
    await createBoard(a, 'race', { periods: ['DAILY'], retention: { daily: 2 } });
    for (let i = 0; i < 30; i += 1)
      await submit(a, ['race'], { playerId: `p${i}`, matchId: `r${i}`, score: i * 10, region: i % 2 ? 'jp' : null, achievedAt: clock.getTime() - i * 60_000 });
    clock = new Date(D + DAY + GRACE_MS + SETTLE_MS);
    const [ca, cb] = [closerOf(a), closerOf(b)];
    await Promise.all([ca.pass(), cb.pass()]);
    // Two days of retention: days D-1 (empty) and D, globally and on Tokyo's calendar (its D+1 is open): four lists, once each.
    expect(await frozenBuckets(a, 'race')).toEqual([
      `DAILY ${dayLabel(D - DAY)} - 0`,
      `DAILY ${dayLabel(D - DAY)} jp 0`,
      `DAILY ${dayLabel(D)} - 30`,
      `DAILY ${dayLabel(D)} jp 15`,
    ]);
    // Each list claimed and filled by one transaction (day D's two lists by the same one).
    const writers = await freezeTransactions(a, 'race');
    const [, , d, dJp] = writers.map((line) => line.split(': ')[1]!);
    expect(d).toMatch(/^(\d+) \1$/);
    expect(dJp).toBe(d);
    await Promise.all([ca.pass(), cb.pass()]);
    expect(await freezeTransactions(b, 'race')).toEqual(writers);
  });

  it('a freeze whose backend is terminated mid-way leaves nothing frozen, and the next pass freezes it once', async () => {
    let clock = new Date(D + 10 * HOUR);
    const t = await startTestApp({
      now: () => clock,
      seasonCloseIntervalMs: HOUR,
    });
    await createBoard(t, 'crash', { periods: ['DAILY'], regions: [], regionTimeZones: [], retention: { daily: 1 } });
    const results: Result[] = Array.from({ length: 40 }, (_, i) => ({
      playerId: `p${i}`,
      matchId: `c${i}`,
      score: (i * 37) % 500,
      region: null,
      achievedAt: clock.getTime() - i * 1_000,
    }));
    for (const r of results) await submit(t, ['crash'], r);
    clock = new Date(D + DAY + GRACE_MS + SETTLE_MS);
    const closer = closerOf(t);
    // A lock taken by the test holds the freeze's insert until its backend is terminated.
    const holder = await t.database.sql.reserve();
    await holder`begin`;
    await holder`lock table frozen_standings in share row exclusive mode`;
    const pass = closer.pass().then(
      () => 'done',
      (error: unknown) => String(error),
    );
    let pid: number | undefined;
    for (let i = 0; i < 200 && pid === undefined; i += 1) {
      const [found] = await t.database.sql<{ pid: number }[]>`
        select pid from pg_stat_activity where datname = current_database() and query ilike '%insert into frozen_standings%' and wait_event_type = 'Lock'`;
      pid = found?.pid;
      if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(pid).toBeDefined();
    await t.database.sql`select pg_terminate_backend(${pid!})`;
    await holder`rollback`;
    holder.release();
    expect(await pass).not.toBe('done');
    // Rolled back whole: no marker, no standings.
    expect(await frozenBuckets(t, 'crash')).toEqual([]);
    expect((await t.database.sql`select count(*)::int as n from frozen_standings where board_id = 'crash'`)[0]!.n).toBe(0);
    await closer.pass();
    // One day kept (retention 1): D, frozen once, by one transaction.
    expect(await freezeTransactions(t, 'crash')).toEqual([expect.stringMatching(/^DAILY \S+ : (\d+) \1$/)]);
    expect(await frozenBuckets(t, 'crash')).toEqual([`DAILY ${dayLabel(D)} - 40`]);
    expect(await frozenRows(t, 'crash', 'DAILY', dayLabel(D), null)).toEqual(oracle(results, D, D + DAY, null));
  });
});

describe('closeGraceSeconds', () => {
  it('is 300 by default, takes 0 to 31,622,400, and refuses anything else, changing nothing', async () => {
    const t = await startTestApp({ seasonCloseIntervalMs: HOUR });
    expect((await createBoard(t, 'default')).createBoard.closeGraceSeconds).toBe(300);
    expect((await createBoard(t, 'zero', { closeGraceSeconds: 0 })).createBoard.closeGraceSeconds).toBe(0);
    expect((await createBoard(t, 'most', { closeGraceSeconds: 31_622_400 })).createBoard.closeGraceSeconds).toBe(31_622_400);
    for (const closeGraceSeconds of [-1, 31_622_401]) {
      expect(codeOf(await t.admin(CREATE, { input: { id: 'bad', title: 'x', maxScore: 10, closeGraceSeconds } }))).toBe('BAD_USER_INPUT');
      expect(codeOf(await t.admin(UPDATE, { input: { id: 'default', closeGraceSeconds } }))).toBe('BAD_USER_INPUT');
    }
    expect(codeOf(await t.admin(CREATE, { input: { id: 'null', title: 'x', maxScore: 10, closeGraceSeconds: null } }))).toBe('BAD_USER_INPUT');
    const read = await t.gql<{ board: { closeGraceSeconds: number } | null }>(`query { board(id: "default") { closeGraceSeconds } }`);
    expect(read.data!.board).toEqual({ closeGraceSeconds: 300 });
    expect((await t.gql<{ board: null }>(`query { board(id: "bad") { id } }`)).data!.board).toBeNull();
    expect(
      (await t.admin<{ updateBoard: { closeGraceSeconds: number } }>(UPDATE, { input: { id: 'default', title: 'kept' } })).data!.updateBoard.closeGraceSeconds,
    ).toBe(300);
  });

  it('a late result counts within the grace, not after it: at 0, at the default, and raised', async () => {
    const dayEnd = D + DAY;
    let clock = new Date(dayEnd);
    const t = await startTestApp({ now: () => clock, seasonCloseIntervalMs: HOUR });
    const periods = ['DAILY'];
    await createBoard(t, 'g0', { periods, regions: [], regionTimeZones: [], closeGraceSeconds: 0 });
    await createBoard(t, 'g300', { periods, regions: [], regionTimeZones: [] });
    await createBoard(t, 'g1d', { periods, regions: [], regionTimeZones: [], closeGraceSeconds: 86_400 });
    const inDay = (standings: Standings) => standings.some((s) => s.period === 'DAILY' && s.bucket === dayLabel(D));
    let n = 0;
    const late = async (board: string, at: number) => {
      clock = new Date(at);
      const [standings] = await submit(t, [board], { playerId: `p${n}`, matchId: `l${n++}`, score: 5, region: null, achievedAt: dayEnd - 1 });
      return inDay(standings!);
    };
    expect(await late('g0', dayEnd - 1)).toBe(true);
    expect(await late('g0', dayEnd)).toBe(false);
    expect(await late('g300', dayEnd + GRACE_MS - 1)).toBe(true);
    expect(await late('g300', dayEnd + GRACE_MS)).toBe(false);
    expect(await late('g1d', dayEnd + DAY - 1)).toBe(true);
    expect(await late('g1d', dayEnd + DAY)).toBe(false);
  });

  it('lowered by updateBoard, closes at once every bucket whose end plus the new grace has passed, counted from its end; raised again, reopens none', async () => {
    const dayEnd = D + DAY;
    let clock = new Date(dayEnd + 5 * 60_000);
    const t = await startTestApp({ now: () => clock, seasonCloseIntervalMs: HOUR });
    await createBoard(t, 'lowered', { periods: ['DAILY'], regions: [], regionTimeZones: [], closeGraceSeconds: 86_400 });
    const closer = closerOf(t);
    const inDay = (standings: Standings) => standings.some((s) => s.period === 'DAILY' && s.bucket === dayLabel(D));
    // Recorded five minutes after the day's end, and an hour after: both count while the grace is a day.
    const early: Result = { playerId: 'early', matchId: 'e', score: 7, region: null, achievedAt: dayEnd - 10 };
    expect(inDay((await submit(t, ['lowered'], early))[0]!)).toBe(true);
    clock = new Date(dayEnd + HOUR);
    expect(inDay((await submit(t, ['lowered'], { playerId: 'hour', matchId: 'h', score: 8, region: null, achievedAt: dayEnd - 20 }))[0]!)).toBe(true);
    await closer.pass();
    expect(await isFrozen(t, 'lowered', 'DAILY', dayLabel(D), null)).toBe(false);

    const lowered = await t.admin<{ updateBoard: { closeGraceSeconds: number } }>(UPDATE, { input: { id: 'lowered', closeGraceSeconds: 600 } });
    expect(lowered.data!.updateBoard.closeGraceSeconds).toBe(600);
    // Closed at once: a result achieved in it now counts elsewhere, not there.
    expect(inDay((await submit(t, ['lowered'], { playerId: 'after', matchId: 'a', score: 9, region: null, achievedAt: dayEnd - 5 }))[0]!)).toBe(false);
    // Frozen by the closer once the settle margin has passed since it saw the change (a process that
    // has not seen it yet may still be writing into the day), not before.
    await closer.pass();
    expect(await isFrozen(t, 'lowered', 'DAILY', dayLabel(D), null)).toBe(false);
    clock = new Date(clock.getTime() + SETTLE_MS);
    await closer.pass();
    // As if the day had closed ten minutes after its end: the result recorded an hour after is out.
    expect(await frozenRows(t, 'lowered', 'DAILY', dayLabel(D), null)).toEqual(oracle([early], D, dayEnd, null));

    await t.admin(UPDATE, { input: { id: 'lowered', closeGraceSeconds: 86_400 } });
    expect(inDay((await submit(t, ['lowered'], { playerId: 'raised', matchId: 'r', score: 11, region: null, achievedAt: dayEnd - 1 }))[0]!)).toBe(false);
    await closer.pass();
    expect(await frozenRows(t, 'lowered', 'DAILY', dayLabel(D), null)).toEqual(oracle([early], D, dayEnd, null));
  });
});

describe('a board whose packing reaches past year 9999 (a small maxScore)', () => {
  it('freezes its day: the tie-break clamp is left out rather than written as a year PostgreSQL refuses', async () => {
    let clock = new Date(D + HOUR);
    const t = await startTestApp({ now: () => clock, seasonCloseIntervalMs: HOUR });
    await createBoard(t, 'tiny', { maxScore: 10, periods: ['DAILY'], regions: [], regionTimeZones: [] });
    const results: Result[] = [
      { playerId: 'a', matchId: 'm1', score: 7, region: null, achievedAt: D + HOUR },
      { playerId: 'b', matchId: 'm2', score: 9, region: null, achievedAt: D + 2 * HOUR },
      { playerId: 'c', matchId: 'm3', score: 7, region: null, achievedAt: D + 3 * HOUR },
    ];
    for (const r of results) {
      clock = new Date(r.achievedAt);
      await submit(t, ['tiny'], r);
    }
    clock = new Date(D + DAY + GRACE_MS + SETTLE_MS);
    const closer = closerOf(t);
    await closer.pass();
    await closer.stop();
    expect(await frozenRows(t, 'tiny', 'DAILY', dayLabel(D), null)).toEqual(oracle(results, D, D + DAY, null));
  });
});
