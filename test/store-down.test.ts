import { freePort } from './helpers/ports.js';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../src/app.js';
import { createDatabase } from '../src/db/client.js';
import { createLogger } from '../src/logger.js';
import { createRedis } from '../src/redis.js';
import { SERVER_KEY, type TestApp, startTestApp } from './helpers/test-app.js';

async function post(url: string, query: string, key?: string) {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ query }),
  });
  return (await response.json()) as { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: { code?: string } }[] };
}

const SUBMIT = `mutation { submitScore(input: { board: "global", playerId: "p", score: 5, matchId: "down-1" }) { duplicate standings { period } } }`;

describe('a store that does not answer gives UNAVAILABLE, never a false success', () => {
  let healthy: TestApp;
  const apps: { app: App; close: () => Promise<void> }[] = [];

  beforeAll(async () => {
    healthy = await startTestApp();
  });
  afterAll(async () => {
    for (const { close } of apps) await close();
    await healthy.close();
  });

  it('PostgreSQL down: a submission is UNAVAILABLE', async () => {
    const database = createDatabase(`postgres://postgres@127.0.0.1:${await freePort()}/nothing`);
    const redis = createRedis('redis://127.0.0.1:6379', { keyPrefix: `${healthy.keyPrefix}pgdown:` });
    await redis.connect();
    const app = buildApp({ database, redis, log: createLogger('silent'), serverKeys: [SERVER_KEY], port: 0 });
    const { url } = await app.start();
    apps.push({ app, close: async () => (await app.stop(), await database.close(), void (await redis.quit())) });

    const answer = await post(url, SUBMIT, SERVER_KEY);
    expect(answer.errors?.[0]?.extensions?.code).toBe('UNAVAILABLE');
    expect(answer.data).toBeNull();
  });

  it('Redis down: reads are UNAVAILABLE; a submission is recorded and answered without standings', async () => {
    const redis = createRedis(`redis://127.0.0.1:${await freePort()}`, { keyPrefix: 'unused:' });
    redis.on('error', () => {});
    redis.connect().catch(() => {});
    const app = buildApp({ database: healthy.database, redis, log: createLogger('silent'), serverKeys: [SERVER_KEY], port: 0 });
    const { url } = await app.start();
    apps.push({ app, close: async () => (await app.stop(), redis.disconnect()) });

    const read = await post(url, `{ top(board: "global") { size } }`);
    expect(read.errors?.[0]?.extensions?.code).toBe('UNAVAILABLE');

    const submitted = await post(url, SUBMIT, SERVER_KEY);
    expect(submitted.errors).toBeUndefined();
    expect(submitted.data?.submitScore).toEqual({ duplicate: false, standings: [] });
    const rows = await healthy.database.db.execute(sql`select player_id, score from results where match_id = 'down-1'`);
    expect([...rows]).toEqual([{ player_id: 'p', score: 5 }]);

    // A rename is refused before it commits: no process could be told its old profile is stale.
    const renamed = await post(url, `mutation { upsertPlayer(input: { id: "p", displayName: "Renamed while Redis was away" }) { id } }`, SERVER_KEY);
    expect(renamed.errors?.[0]?.extensions?.code).toBe('UNAVAILABLE');
    const profiles = await healthy.database.db.execute(sql`select display_name from players where id = 'p'`);
    expect([...profiles]).toEqual([]);
  });
});
