import postgres from 'postgres';
import { beforeAll, describe, expect, it } from 'vitest';
import { movableClock } from './helpers/clock.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { settle } from './helpers/wait.js';

const metric = (text: string, line: RegExp) => Number(line.exec(text)?.[1] ?? NaN);

describe('health, readiness and metrics', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Every scrape that finds no measurement running starts one: the drift tests wait for it.
    t = await startTestApp({ indexDrift: { intervalMs: 0 } });
  });

  const scrape = async () => (await fetch(`${t.url}/metrics`)).text();
  const drift = (text: string, period: string, bucket: string) =>
    metric(text, new RegExp(`leaderboard_index_drift\\{board="global",period="${period}",bucket="${bucket}",region=""\\} (-?\\d+)`));

  it('/healthz and /readyz answer 200 while both stores answer', async () => {
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${t.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ postgres: 'up', postgresHost: '127.0.0.1:5432', redis: 'up', submissions: 'ok' });
  });

  it('/metrics counts submissions by outcome, times operations, and shows no drift on a healthy index', async () => {
    const submit = (matchId: string, score: number) =>
      t.server(`mutation($m: ID!, $s: Float!) { submitScore(input: { board: "global", playerId: "m1", score: $s, matchId: $m }) { duplicate } }`, {
        m: matchId,
        s: score,
      });
    await submit('a', 5);
    await submit('a', 5);
    await submit('b', -1);
    const text = await scrape();
    expect(metric(text, /leaderboard_submissions_total\{outcome="accepted"\} (\d+)/)).toBe(1);
    expect(metric(text, /leaderboard_submissions_total\{outcome="duplicate"\} (\d+)/)).toBe(1);
    expect(metric(text, /leaderboard_submissions_total\{outcome="rejected"\} (\d+)/)).toBe(1);
    expect(text).toMatch(/leaderboard_operation_seconds_count\{type="mutation",field="submitScore",outcome="ok"\} 2/);
    // The one PostgreSQL host of the test's DATABASE_URL.
    expect(text).toMatch(/^leaderboard_postgres_primary\{host="127.0.0.1:5432"\} 1$/m);
    // The counts run after a scrape, in the background: a later scrape serves them.
    expect(drift(await settle(scrape, (later) => drift(later, 'ALL_TIME', 'all') === 0, 5_000), 'ALL_TIME', 'all')).toBe(0);
  });

  it('the drift gauge shows players the index lost', async () => {
    await t.redis.zrem('lb:{global:ALL_TIME:all}', 'm1');
    expect(drift(await settle(scrape, (text) => drift(text, 'ALL_TIME', 'all') === 1, 5_000), 'ALL_TIME', 'all')).toBe(1);
  });

  it('a scrape answers while the counts it starts cannot run (board_scores locked)', async () => {
    const sql = postgres(t.databaseUrl, { max: 1, onnotice: () => undefined });
    try {
      await sql.begin(async (tx) => {
        await tx`lock table board_scores in access exclusive mode`;
        // The counts this scrape starts wait for the lock; the scrape does not wait for them.
        const response = await fetch(`${t.url}/metrics`, { signal: AbortSignal.timeout(3_000) });
        expect(response.status).toBe(200);
        expect(await response.text()).toMatch(/^leaderboard_index_drift_timestamp_seconds /m);
      });
    } finally {
      await sql.end();
    }
  });

  it('the drift gauge measures the day derived from the log, and not the week, month or season', async () => {
    const day = new Date().toISOString().slice(0, 10);
    await t.redis.zrem(`lb:{global:DAILY:${day}}`, 'm1');
    const text = await settle(scrape, (later) => drift(later, 'DAILY', day) === 1, 5_000);
    expect(drift(text, 'DAILY', day)).toBe(1);
    expect(text).not.toMatch(/leaderboard_index_drift\{board="global",period="(WEEKLY|MONTHLY|SEASON)"/);
  });
});

describe('the drift measurement, renewed once per interval by one process of a deployment', () => {
  const clock = movableClock();
  // The statements that count a bucket's board scores or results (countRankable), per app.
  const counts = { first: 0, second: 0 };
  const isCount = (statement: string) => /select count\(\*\)::int as n/.test(statement);
  let first: TestApp;
  let second: TestApp | undefined;
  beforeAll(async () => {
    first = await startTestApp({ now: clock.now, indexDrift: { intervalMs: 60_000 }, onQuery: (s) => void (isCount(s) && counts.first++) });
    second = await startTestApp({
      now: clock.now,
      indexDrift: { intervalMs: 60_000 },
      onQuery: (s) => void (isCount(s) && counts.second++),
      shareStoresOf: { databaseUrl: first.databaseUrl, keyPrefix: first.keyPrefix },
    });
  });

  const scrape = async (app: TestApp) => (await fetch(`${app.url}/metrics`)).text();
  const measuredAt = (text: string) => metric(text, /^leaderboard_index_drift_timestamp_seconds (\S+)$/m);
  const allTime = (text: string) => metric(text, /leaderboard_index_drift\{board="global",period="ALL_TIME",bucket="all",region=""\} (-?\d+)/);

  it('serves the last measurement to every scrape of every process, counting nothing until it is due, then renews it once', async () => {
    await first.server(`mutation { submitScore(input: { board: "global", playerId: "d1", score: 7, matchId: "d-1" }) { duplicate } }`);
    // The first scrape finds no measurement and starts one; it answers without waiting for it.
    // (The timestamp reads 0 until there is one.)
    const measured = await settle(
      () => scrape(first),
      (text) => measuredAt(text) > 0,
      5_000,
    );
    expect(allTime(measured)).toBe(0);
    const bucketsMeasured = measured.match(/^leaderboard_index_drift\{/gm)?.length ?? 0;
    expect(bucketsMeasured).toBeGreaterThan(1);
    const countsBefore = counts.first + counts.second;

    await first.redis.zrem('lb:{global:ALL_TIME:all}', 'd1');
    for (const app of [first, second!, first, second!]) {
      const text = await scrape(app);
      // The same figures from either process: the deployment's one measurement, not yet due again.
      expect(measuredAt(text)).toBe(measuredAt(measured));
      expect(allTime(text)).toBe(0);
    }
    expect(counts.first + counts.second).toBe(countsBefore);

    clock.advance(61_000);
    // Both processes are scraped at once: one of them measures, the other serves what it saved.
    const renewed = await settle(
      async () => (await Promise.all([scrape(first), scrape(second!)]))[1],
      (text) => measuredAt(text) > measuredAt(measured),
      5_000,
    );
    expect(allTime(renewed)).toBe(1);
    expect(allTime(await scrape(first))).toBe(1);
    // One count a bucket: one process measured.
    expect(counts.first + counts.second - countsBefore).toBe(bucketsMeasured);
  });
});

describe('/metrics behind METRICS_TOKEN', () => {
  const TOKEN = 'metrics-token-0123456789';
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ metricsToken: TOKEN });
  });

  it('answers 401 without the token or with another, and the metrics with it', async () => {
    const read = (authorization?: string) => fetch(`${t.url}/metrics`, authorization ? { headers: { authorization } } : {});
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789', TOKEN, `Bearer ${TOKEN}x`, `Basic ${TOKEN}`]) {
      const refused = await read(authorization);
      expect(refused.status, String(authorization)).toBe(401);
      expect(await refused.text()).not.toContain('leaderboard_');
    }
    const allowed = await read(`Bearer ${TOKEN}`);
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toContain('leaderboard_');
    // The rest of the service is not behind it.
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
  });
});
