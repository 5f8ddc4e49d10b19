import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from './helpers/test-app.js';

describe('health, readiness and metrics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const metric = (text: string, line: RegExp) => Number(line.exec(text)?.[1] ?? NaN);

  it('/healthz and /readyz answer 200 while both stores answer', async () => {
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${t.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ postgres: 'up', redis: 'up', submissions: 'ok' });
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
    const text = await (await fetch(`${t.url}/metrics`)).text();
    expect(metric(text, /leaderboard_submissions_total\{outcome="accepted"\} (\d+)/)).toBe(1);
    expect(metric(text, /leaderboard_submissions_total\{outcome="duplicate"\} (\d+)/)).toBe(1);
    expect(metric(text, /leaderboard_submissions_total\{outcome="rejected"\} (\d+)/)).toBe(1);
    expect(text).toMatch(/leaderboard_operation_seconds_count\{type="mutation",field="submitScore",outcome="ok"\} 2/);
    expect(metric(text, /leaderboard_index_drift\{board="global",period="ALL_TIME",bucket="all",region=""\} (-?\d+)/)).toBe(0);
  });

  it('the drift gauge shows players the index lost', async () => {
    await t.redis.zrem('lb:{global:ALL_TIME:all}', 'm1');
    const text = await (await fetch(`${t.url}/metrics`)).text();
    expect(metric(text, /leaderboard_index_drift\{board="global",period="ALL_TIME",bucket="all",region=""\} (-?\d+)/)).toBe(1);
  });

  it('the drift gauge measures the day derived from the log on every scrape, and not the week, month or season', async () => {
    const day = new Date().toISOString().slice(0, 10);
    await t.redis.zrem(`lb:{global:DAILY:${day}}`, 'm1');
    const text = await (await fetch(`${t.url}/metrics`)).text();
    expect(metric(text, new RegExp(`leaderboard_index_drift\\{board="global",period="DAILY",bucket="${day}",region=""\\} (-?\\d+)`))).toBe(1);
    expect(text).not.toMatch(/leaderboard_index_drift\{board="global",period="(WEEKLY|MONTHLY|SEASON)"/);
  });
});

describe('/metrics behind METRICS_TOKEN', () => {
  const TOKEN = 'metrics-token-0123456789';
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ metricsToken: TOKEN });
  });
  afterAll(() => t?.close());

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
