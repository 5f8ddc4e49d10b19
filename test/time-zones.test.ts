import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketAt, parseBucketLabel } from '../src/model/buckets.js';
import { labelsAt, rankEntries } from './helpers/oracle.js';
import { type RedisClusterFixture, startRedisCluster } from './helpers/redis-cluster.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * Calendar buckets on a time zone's calendar, across the days its clocks change: a day runs from
 * one local midnight to the next (23 or 25 hours on those days), labelled by the local date. The
 * oracle asks Intl for the local date of an instant and finds a local day's first instant by
 * walking the clock in quarter hours; it shares nothing with the service's calendar code.
 */

const HOUR = 3_600_000;
const PARIS = 'Europe/Paris';
const NEW_YORK = 'America/New_York';
/** The days the clocks change in 2037 (2026's calendar): spring forward and fall back. */
const CHANGES: Record<string, string[]> = { [PARIS]: ['2037-03-29', '2037-10-25'], [NEW_YORK]: ['2037-03-08', '2037-11-01'] };

const localDates = new Map<string, Intl.DateTimeFormat>();
/** The local date (YYYY-MM-DD) of an instant in a zone, from Intl. */
function localDate(ms: number, zone: string): string {
  let format = localDates.get(zone);
  if (!format) localDates.set(zone, (format = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' })));
  return format.format(new Date(ms));
}

/** The first instant of a local date in a zone: walks from well before it in quarter hours (every zone's offset is a multiple of one). */
function firstInstant(date: string, zone: string): number {
  let at = Date.parse(`${date}T00:00:00Z`) - 15 * HOUR;
  while (localDate(at, zone) < date) at += HOUR / 4;
  return at;
}

const nextDate = (date: string) => new Date(Date.parse(`${date}T12:00:00Z`) + 24 * HOUR).toISOString().slice(0, 10);

/** The oracle's labels of an instant on a zone's calendar: the UTC labels of its local date. */
function zonedLabels(ms: number, zone: string): Record<string, string> {
  return labelsAt(new Date(`${localDate(ms, zone)}T12:00:00Z`));
}

describe('calendar buckets follow a time zone', () => {
  it.each([PARIS, NEW_YORK])(
    '%s: every quarter hour of the weeks its clocks change lands in the oracle day, which runs from local midnight to local midnight',
    (zone) => {
      const calendar = { epoch: new Date('2036-01-01T00:00:00Z'), timeZone: zone };
      for (const change of CHANGES[zone]!) {
        const from = Date.parse(`${change}T00:00:00Z`) - 3 * 24 * HOUR;
        for (let at = from; at < from + 7 * 24 * HOUR; at += HOUR / 4) {
          const labels = zonedLabels(at, zone);
          const day = localDate(at, zone);
          const daily = bucketAt(calendar, 'DAILY', new Date(at));
          expect(daily.label).toBe(labels.DAILY);
          expect([daily.start.getTime(), daily.end!.getTime()]).toEqual([firstInstant(day, zone), firstInstant(nextDate(day), zone)]);
          expect(bucketAt(calendar, 'WEEKLY', new Date(at)).label).toBe(labels.WEEKLY);
          expect(bucketAt(calendar, 'MONTHLY', new Date(at)).label).toBe(labels.MONTHLY);
          for (const period of ['DAILY', 'WEEKLY', 'MONTHLY'] as const)
            expect(parseBucketLabel(calendar, period, labels[period]!)).toEqual(bucketAt(calendar, period, new Date(at)));
        }
        const [spring, fall] = CHANGES[zone]!;
        const length = (date: string) => parseBucketLabel(calendar, 'DAILY', date)!;
        expect(length(spring!).end!.getTime() - length(spring!).start.getTime()).toBe(23 * HOUR);
        expect(length(fall!).end!.getTime() - length(fall!).start.getTime()).toBe(25 * HOUR);
      }
    },
  );

  it('a region of its own zone: the same instant is in another day there', () => {
    const board = { epoch: new Date('2036-01-01T00:00:00Z'), timeZone: PARIS, regionTimeZones: [{ region: 'NA', timeZone: NEW_YORK }] };
    const at = new Date('2037-11-02T02:30:00Z');
    expect(bucketAt(board, 'DAILY', at).label).toBe('2037-11-02');
    expect(bucketAt(board, 'DAILY', at, 'EU').label).toBe('2037-11-02');
    expect(bucketAt(board, 'DAILY', at, 'NA').label).toBe('2037-11-01');
  });
});

interface Top {
  startsAt: string | null;
  endsAt: string | null;
  entries: { rank: number; score: number; player: { id: string } }[];
}

/** Numbers the boards the refusal test tries to create: a fresh id each, none of them may exist. */
let refusedBoards = 0;

describe.each([
  { shards: 1, cluster: false },
  { shards: 8, cluster: false },
  { shards: 8, cluster: true },
])('a board on Paris time with a New York region ($shards shard(s), on a Redis Cluster: $cluster), through the service', ({ shards, cluster }) => {
  // After every change of 2037; the app sets Redis expiries from its clock, so the clock is ahead of the real one.
  const NOW = new Date('2037-11-02T12:00:00.000Z');
  const BOARD = `Paris-Daily-${shards}`;
  let t: TestApp;
  let redisCluster: RedisClusterFixture | undefined;
  const submitted: { playerId: string; score: number; region: string | null; achievedAt: number }[] = [];

  beforeAll(async () => {
    // Three masters, no replicas: the buckets' shards spread over every master.
    if (cluster) redisCluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
    t = await startTestApp({ now: () => NOW, ...(redisCluster ? { redisCluster } : {}) });
    const created = await t.admin<{ createBoard: { timeZone: string; regionTimeZones: { region: string; timeZone: string }[] } }>(
      `mutation($input: CreateBoardInput!) { createBoard(input: $input) { timeZone regionTimeZones { region timeZone } } }`,
      {
        input: {
          id: BOARD,
          title: 'Paris daily',
          maxScore: 1_000_000,
          periods: ['DAILY', 'WEEKLY', 'MONTHLY'],
          regions: ['EU', 'NA'],
          // europe/paris: the canonical name is kept.
          timeZone: 'europe/paris',
          regionTimeZones: [{ region: 'NA', timeZone: NEW_YORK }],
          retention: { daily: 400, weekly: 400, monthly: 400 },
          // Results from March to November 2037 count in their buckets: the longest grace (docs/closing.md).
          closeGraceSeconds: 31_622_400,
          shards,
        },
      },
    );
    expect(created.errors).toBeUndefined();
    expect(created.data!.createBoard).toEqual({ timeZone: PARIS, regionTimeZones: [{ region: 'NA', timeZone: NEW_YORK }] });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await redisCluster?.stop();
  });

  it('writes each result to its zone-local day, week and month, and serves each bucket with its start and end', { timeout: 60_000 }, async () => {
    // Around each local midnight of the days the clocks change, in both zones: a minute before, at, a minute after.
    const instants = Object.values(CHANGES)
      .flat()
      .flatMap((date) => [PARIS, NEW_YORK].flatMap((zone) => [firstInstant(date, zone), firstInstant(nextDate(date), zone)]))
      .flatMap((at) => [at - 60_000, at, at + 60_000]);
    const inputs = instants.flatMap((at, i) =>
      [null, 'EU', 'NA'].map((region, r) => {
        const result = { playerId: `spieler-${i}-${r}-ü`, score: 1 + ((i * 7 + r * 13) % 50), region, achievedAt: at };
        submitted.push(result);
        return { board: BOARD, playerId: result.playerId, score: result.score, region, matchId: `m-${i}-${r}`, achievedAt: new Date(at).toISOString() };
      }),
    );
    const answer = await t.server<{
      submitScores: { standings: { period: string; bucket: string; region: string | null; startsAt: string; endsAt: string }[] }[];
    }>(`mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { standings { period bucket region startsAt endsAt } } }`, { inputs });
    expect(answer.errors).toBeUndefined();

    const zoneOf = (region: string | null) => (region === 'NA' ? NEW_YORK : PARIS);
    // The payload names each result's buckets on its list's calendar, with their bounds.
    answer.data!.submitScores.forEach((payload, i) => {
      const result = submitted[i]!;
      for (const standing of payload.standings) {
        const zone = zoneOf(standing.region);
        expect(standing.bucket).toBe(zonedLabels(result.achievedAt, zone)[standing.period]);
        if (standing.period === 'DAILY') {
          const day = localDate(result.achievedAt, zone);
          expect([Date.parse(standing.startsAt), Date.parse(standing.endsAt)]).toEqual([firstInstant(day, zone), firstInstant(nextDate(day), zone)]);
        }
      }
    });

    // Every bucket the oracle knows, read back: its entries ranked as a plain sort ranks them, and its bounds.
    const buckets = new Map<
      string,
      { period: string; label: string; region: string | null; entries: Map<string, { playerId: string; score: number; reachedAt: number }> }
    >();
    for (const result of submitted) {
      for (const region of result.region ? [null, result.region] : [null]) {
        const labels = zonedLabels(result.achievedAt, zoneOf(region));
        for (const period of ['DAILY', 'WEEKLY', 'MONTHLY']) {
          const id = `${period}|${labels[period]}|${region ?? ''}`;
          const bucket = buckets.get(id) ?? { period, label: labels[period]!, region, entries: new Map() };
          buckets.set(id, bucket);
          bucket.entries.set(result.playerId, { playerId: result.playerId, score: result.score, reachedAt: result.achievedAt });
        }
      }
    }
    for (const { period, label, region, entries } of buckets.values()) {
      const read = await t.gql<{ top: Top }>(
        `query($board: ID!, $period: Period!, $bucket: String, $region: String) { top(board: $board, period: $period, bucket: $bucket, region: $region, limit: 1000) { startsAt endsAt entries { rank score player { id } } } }`,
        { board: BOARD, period, bucket: label, region },
      );
      expect(read.errors, `${period} ${label} ${region}`).toBeUndefined();
      const ranked = rankEntries({ order: 'HIGH_FIRST' }, entries.values());
      expect(
        read.data!.top.entries.map((entry) => [entry.player.id, entry.score]),
        `${period} ${label} ${region}`,
      ).toEqual(ranked.map((entry) => [entry.playerId, entry.score]));
      if (period === 'DAILY') {
        const zone = zoneOf(region);
        expect([Date.parse(read.data!.top.startsAt!), Date.parse(read.data!.top.endsAt!)]).toEqual([
          firstInstant(label, zone),
          firstInstant(nextDate(label), zone),
        ]);
      }
    }
    // The spring-forward and fall-back days, as the service serves them: 23 and 25 hours.
    for (const [zone, region] of [
      [PARIS, 'EU'],
      [NEW_YORK, 'NA'],
    ] as const) {
      const [spring, fall] = CHANGES[zone]!;
      for (const [date, hours] of [
        [spring!, 23],
        [fall!, 25],
      ] as const) {
        const read = await t.gql<{ top: Top }>(
          `query($b: ID!, $d: String, $r: String) { top(board: $b, period: DAILY, bucket: $d, region: $r) { startsAt endsAt } }`,
          { b: BOARD, d: date, r: region },
        );
        expect(Date.parse(read.data!.top.endsAt!) - Date.parse(read.data!.top.startsAt!), `${zone} ${date}`).toBe(hours * HOUR);
      }
    }
  });

  it('ALL_TIME has no bounds; the current day is the zone-local one', async () => {
    const read = await t.gql<{ all: Top; today: Top & { bucket: string }; there: Top & { bucket: string } }>(
      `query($b: ID!) { all: top(board: $b) { startsAt endsAt entries { rank } } today: top(board: $b, period: DAILY) { bucket startsAt endsAt entries { rank } } there: top(board: $b, period: DAILY, region: "NA") { bucket startsAt endsAt entries { rank } } }`,
      { b: BOARD },
    );
    expect(read.errors).toBeUndefined();
    expect([read.data!.all.startsAt, read.data!.all.endsAt]).toEqual([null, null]);
    expect(read.data!.today.bucket).toBe(localDate(NOW.getTime(), PARIS));
    expect(read.data!.there.bucket).toBe(localDate(NOW.getTime(), NEW_YORK));
    expect(Date.parse(read.data!.there.startsAt!)).toBe(firstInstant(localDate(NOW.getTime(), NEW_YORK), NEW_YORK));
  });

  it('refuses a zone that is not an IANA zone, and a region zone for a region the board lacks, creating nothing', async () => {
    for (const [timeZone, regionTimeZones, rule] of [
      ['Mars/Olympus_Mons', [], /timeZone: "Mars\/Olympus_Mons" is not an IANA time zone/],
      ['+01:00', [], /not an IANA time zone/],
      [PARIS, [{ region: 'APAC', timeZone: 'Asia/Tokyo' }], /"APAC" is not one of the board's regions/],
      [PARIS, [{ region: 'NA', timeZone: 'Nowhere/Land' }], /regionTimeZones\[0\]\.timeZone/],
    ] as const) {
      const id = `Refused-${shards}-${++refusedBoards}`;
      const answer = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
        input: { id, title: 'x', maxScore: 10, periods: ['DAILY'], regions: ['EU', 'NA'], timeZone, regionTimeZones },
      });
      expect(answer.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(answer.errors?.[0]?.message).toMatch(rule);
      expect((await t.gql<{ board: unknown }>(`query($id: ID!) { board(id: $id) { id } }`, { id })).data!.board).toBeNull();
    }
  });
});
