import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_BATCH_OPERATIONS } from '../src/app.js';
import { ADMIN_KEY, SERVER_KEY, type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * POST /graphql with `application/json` is served by the fast path (src/http/fast-graphql.ts);
 * `application/graphql+json`, which Yoga parses the same way, still goes through Yoga. So Yoga
 * itself is the oracle: every request below is sent both ways and must get the same status, body
 * and content type.
 */
describe('the HTTP fast path answers as Yoga does', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    const inputs = ['a', 'b', 'c'].map((playerId, i) => ({ board: 'global', playerId, score: 10 * (i + 1), matchId: 'm' }));
    await t.server('mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }', { inputs });
  });

  const send = async (contentType: string, body: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': contentType, ...headers }, body });
    return {
      status: response.status,
      contentType: response.headers.get('content-type'),
      cacheControl: response.headers.get('cache-control'),
      allowOrigin: response.headers.get('access-control-allow-origin'),
      body: await response.text(),
    };
  };
  const both = async (body: unknown, headers: Record<string, string> = {}) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const fast = await send('application/json', text, headers);
    const yoga = await send('application/graphql+json', text, headers);
    expect(fast).toEqual(yoga);
    return fast;
  };
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

  it('answers, resolver errors, argument errors and variables as Yoga does', async () => {
    expect((await both({ query: '{ standing(board: "global", playerId: "a") { rank score } }' })).body).toBe('{"data":{"standing":{"rank":3,"score":10}}}');
    await both({ query: 'query($p: ID!) { standing(board: "global", playerId: $p) { rank } }', variables: { p: 'c' }, operationName: null });
    await both({ query: '{ standing(board: "nope", playerId: "a") { rank } }' });
    await both({ query: '{ top(board: "global", limit: 0) { size } }' });
    await both({ query: 'query($p: ID!) { standing(board: "global", playerId: $p) { rank } }', variables: {} });
    await both({ query: 'query A { __typename } query B { top(board: "global") { size } }', operationName: 'B' });
    await both({ query: 'query A { __typename } query B { __typename }', operationName: 'C' });
  });

  it('refusals before execution go to Yoga: syntax, validation, limits, bad bodies, unknown parameters', async () => {
    await both({ query: '{ standing(' });
    await both({ query: '{ nope }' });
    await both({ query: `{ ${Array.from({ length: 30 }, (_, i) => `a${i}: __typename`).join(' ')} }` });
    await both('{"query": "{ __typename }"');
    await both('"just a string"');
    await both({ query: '{ __typename }', unexpected: 1 });
    await both({ query: 42 });
    await both({ variables: {} });
    // (Without an Accept header, Yoga would answer it as an endless event stream.)
    await both({ query: 'subscription { topChanged(board: "global") { size } }' }, { accept: 'application/json' });
  });

  it('keys and roles: anonymous, unknown, server and admin callers', async () => {
    const submit = { query: 'mutation { submitScore(input: { board: "global", playerId: "d", score: 1, matchId: "x" }) { duplicate } }' };
    await both(submit);
    await both(submit, bearer('not-a-key'));
    const created = { query: 'mutation { createBoard(input: { id: "fp", title: "fp", maxScore: 10 }) { id } }' };
    await both(created, bearer(SERVER_KEY));
    const first = await send('application/json', JSON.stringify(created), bearer(ADMIN_KEY));
    expect(first.body).toBe('{"data":{"createBoard":{"id":"fp"}}}');
    await both(created, bearer(ADMIN_KEY));
  });

  it(`batches of up to ${MAX_BATCH_OPERATIONS} operations, each answered in order; larger or empty ones refused`, async () => {
    const ops = Array.from({ length: MAX_BATCH_OPERATIONS }, (_, i) => ({ query: `{ standing(board: "global", playerId: "${'abc'[i % 3]}") { rank } }` }));
    const answer = await both(ops);
    expect(JSON.parse(answer.body)).toEqual(ops.map((_, i) => ({ data: { standing: { rank: 3 - (i % 3) } } })));
    await both([{ query: '{ __typename }' }, { query: '{ standing(board: "nope", playerId: "a") { rank } }' }]);
    expect((await both([...ops, { query: '{ __typename }' }])).status).toBe(413);
    await both([]);
    await both([{ query: '{ __typename }' }, { query: '{ nope }' }]);
  });

  it('CORS, cache-control and content negotiation headers', async () => {
    const read = { query: '{ top(board: "global") { size } }' };
    const withOrigin = await both(read, { origin: 'https://game.example' });
    // Any origin, without credentials (CORS_ORIGINS' default; test/cors.test.ts).
    expect(withOrigin.allowOrigin).toBe('*');
    expect(withOrigin.cacheControl).toBe('no-store');
    expect((await both(read, { accept: 'application/json' })).contentType).toBe('application/json; charset=utf-8');
    expect((await both({ query: '{ nope }' }, { accept: 'application/graphql-response+json' })).status).toBe(400);
    await both(read, { accept: 'text/event-stream' });
  });

  it('the Accept headers real clients send (graphql-response+json first) and their neighbours: media type, status and body as Yoga', async () => {
    const accepts = [
      // Apollo Client, urql, the typed client (client/src/index.ts).
      'application/graphql-response+json,application/json;q=0.9',
      'application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed',
      'application/graphql-response+json, application/json',
      'application/json, application/graphql-response+json',
      'application/*',
      '*/*;q=0.8, application/graphql-response+json',
      'text/event-stream, application/json',
      'application/graphql-response+json; charset=iso-8859-1, application/json',
      'text/html',
      '',
    ];
    const bodies = [
      { query: 'query($p: ID!) { __typename standing(board: "global", playerId: $p) { __typename rank } }', variables: { p: 'a' } },
      { query: '{ standing(board: "nope", playerId: "a") { rank } }' },
      { query: '{ top(board: "global", limit: 0) { size } }' },
      { query: 'mutation { submitScore(input: { board: "global", playerId: "e", score: 1, matchId: "y" }) { duplicate } }' },
      [{ query: '{ __typename }' }, { query: '{ standing(board: "nope", playerId: "a") { rank } }' }],
    ];
    for (const accept of accepts) {
      for (const body of bodies) await both(body, { accept });
    }
    expect((await both(bodies[0]!, { accept: accepts[0]! })).contentType).toBe('application/graphql-response+json; charset=utf-8');
  });
});
