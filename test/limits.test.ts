import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../src/http/request-limits.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';

async function post(t: TestApp, body: string) {
  const started = performance.now();
  const response = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await response.text();
  return { status: response.status, text, ms: performance.now() - started };
}

describe('limits on what a request may cost', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });

  it('refuses a query with thousands of aliases, cheaply', async () => {
    const query = `{ ${Array.from({ length: 3_000 }, (_, i) => `a${i}: top(board: "global") { size }`).join(' ')} }`;
    const answer = await post(t, JSON.stringify({ query }));
    expect(answer.text).not.toContain('"data":{');
    expect(answer.text).toMatch(/aliases|[Tt]oken|bytes/);
    expect(await t.redis.dbsize()).toBeGreaterThanOrEqual(0);
  });

  // The schema has no cycles (a Standing names a Player, which names nothing), so no query of it
  // can be deep; the depth limit guards the day one is added. Token and cost limits bite now.
  it('refuses a query of thousands of tokens', async () => {
    const query = `{ top(board: "global") { ${Array.from({ length: 2_500 }, () => 'size').join(' ')} } }`;
    const answer = await post(t, JSON.stringify({ query }));
    expect(answer.text).toMatch(/[Tt]oken/);
    expect(answer.text).not.toContain('"data":{');
  });

  it('refuses a body over MAX_BODY_BYTES (3 MiB) with 413', async () => {
    const answer = await post(t, JSON.stringify({ query: '{ boards { id } }', variables: { padding: 'x'.repeat(MAX_BODY_BYTES) } }));
    expect(answer.status).toBe(413);
  });

  it('refuses a chunked body without a declared length with 411', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) =>
        resolve(res.statusCode ?? 0),
      );
      req.on('error', reject);
      req.write(JSON.stringify({ query: '{ boards { id } }' }));
      req.end();
    });
    expect(status).toBe(411);
  });

  it('still answers ordinary queries', async () => {
    const answer = await post(t, JSON.stringify({ query: '{ a: top(board: "global") { size } b: boards { id } }' }));
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({ data: { a: { size: 0 } } });
  });
});

describe('rate limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ rateLimits: { readsPerSecond: 5, submissionsPerSecond: 10 } });
  });

  it('answers RATE_LIMITED to a client over its read budget', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => t.gql(`{ boards { id } }`)));
    const codes = answers.map((a) => a.errors?.[0]?.extensions?.code ?? 'ok');
    expect(codes.filter((c) => c === 'ok')).toHaveLength(5);
    expect(codes.filter((c) => c === 'RATE_LIMITED')).toHaveLength(3);
    // The budget refills within its second.
    await until(async () => !(await t.gql(`{ boards { id } }`)).errors, 3_000, 'a read answered again', 250);
  });

  it('counts each result of a batch against the API key, and records nothing of a refused batch', async () => {
    const inputs = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ board: 'global', playerId: `${tag}${i}`, score: i, matchId: tag }));
    const submit = (n: number, tag: string) => t.server(`mutation($i: [SubmitScoreInput!]!) { submitScores(inputs: $i) { duplicate } }`, { i: inputs(n, tag) });
    expect((await submit(8, 'a')).errors).toBeUndefined();
    const refused = await submit(5, 'b');
    expect(refused.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    const rows = await t.database.sql`select count(*)::int as n from results where match_id = 'b'`;
    expect(rows[0]?.n).toBe(0);
  });
});
