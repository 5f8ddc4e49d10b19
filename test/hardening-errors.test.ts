import { randomUUID } from 'node:crypto';
import { createClient } from 'graphql-ws';
import { beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createLogger } from '../src/logger.js';
import { type GraphQLResponse, SERVER_KEY, type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * A client's mistake is named on every transport, and logged as the client's: variables that fail
 * coercion (issue 53, item 12) answer BAD_USER_INPUT, a document that does not parse
 * GRAPHQL_PARSE_FAILED, one that does not validate GRAPHQL_VALIDATION_FAILED; the operation's log
 * line says so, and nothing is logged at error level.
 */
describe('request errors carry a code on every transport', () => {
  let t: TestApp;
  const lines: { level: number; msg: string; outcome?: string }[] = [];
  beforeAll(async () => {
    const log = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) });
    t = await startTestApp({ log });
  });

  type Answer = GraphQLResponse & { transport: string };
  const bearer = (key?: string): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {});

  /** The events of a server-sent event stream's `next` events, until it completes. */
  async function eventsOf(response: Response): Promise<GraphQLResponse[]> {
    const text = await response.text();
    return text
      .split('\n\n')
      .filter((event) => event.startsWith('event: next'))
      .map(
        (event) =>
          JSON.parse(
            event
              .split('\n')
              .find((line) => line.startsWith('data:'))!
              .slice(5),
          ) as GraphQLResponse,
      );
  }

  /** The first answer graphql-ws gives: a `next` message's payload, or an `error` message's errors. */
  async function overSocket(payload: { query: string; variables?: Record<string, unknown>; operationName?: string }, key?: string): Promise<GraphQLResponse> {
    const client = createClient({
      url: `${t.url.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: key ? { authorization: `Bearer ${key}` } : {},
    });
    try {
      const answers = client.iterate(payload);
      return (await answers.next()).value as GraphQLResponse;
    } catch (errors) {
      if (!Array.isArray(errors)) throw errors;
      return { errors: errors as GraphQLResponse['errors'] };
    } finally {
      await client.dispose();
    }
  }

  /**
   * The same operation over every transport that takes it: the fast POST path (application/json),
   * Yoga's own POST (application/graphql+json, which the fast path leaves to it), a GET, server-sent
   * events (GET, or POST for a mutation) and graphql-ws. The socket goes first, so that a parse
   * error Yoga caches is first met where no HTTP request is.
   */
  async function overEveryTransport(
    payload: { query: string; variables?: Record<string, unknown>; operationName?: string },
    { key, mutation = false }: { key?: string; mutation?: boolean } = {},
  ): Promise<Answer[]> {
    const answers: Answer[] = [{ transport: 'graphql-ws', ...(await overSocket(payload, key)) }];
    const body = JSON.stringify(payload);
    const post = (contentType: string, accept = 'application/graphql-response+json') =>
      fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': contentType, accept, ...bearer(key) }, body });
    answers.push({ transport: 'fast POST', ...((await (await post('application/json')).json()) as GraphQLResponse) });
    answers.push({ transport: 'Yoga POST', ...((await (await post('application/graphql+json')).json()) as GraphQLResponse) });
    const search = new URLSearchParams({ query: payload.query });
    if (payload.variables) search.set('variables', JSON.stringify(payload.variables));
    if (payload.operationName) search.set('operationName', payload.operationName);
    if (mutation) {
      for (const event of await eventsOf(await post('application/json', 'text/event-stream'))) answers.push({ transport: 'SSE POST', ...event });
    } else {
      const get = await fetch(`${t.url}/graphql?${search}`, { headers: { accept: 'application/graphql-response+json', ...bearer(key) } });
      answers.push({ transport: 'GET', ...((await get.json()) as GraphQLResponse) });
      const sse = await fetch(`${t.url}/graphql?${search}`, { headers: { accept: 'text/event-stream', ...bearer(key) } });
      for (const event of await eventsOf(sse)) answers.push({ transport: 'SSE GET', ...event });
    }
    return answers;
  }

  /** Each transport answered once, with no data and every error carrying `code`. */
  function expectRefused(answers: Answer[], code: string, transports: number) {
    expect(answers.map((answer) => answer.transport)).toHaveLength(transports);
    for (const answer of answers) {
      expect(answer.data ?? undefined, answer.transport).toBeUndefined();
      expect(answer.errors?.length, answer.transport).toBeGreaterThan(0);
      for (const error of answer.errors ?? []) expect(error.extensions?.code, `${answer.transport}: ${error.message}`).toBe(code);
    }
  }

  const TOP = 'query Top($limit: Int!) { top(board: "global", limit: $limit) { size } }';
  const SUBMIT = 'mutation Submit($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }';
  const input = { board: 'global', playerId: 'p', score: 2, matchId: 'm2' };

  it('variables that fail coercion: BAD_USER_INPUT', async () => {
    for (const limit of ['ten', 2 ** 31, 1.5, null, { n: 1 }])
      expectRefused(await overEveryTransport({ query: TOP, variables: { limit } }), 'BAD_USER_INPUT', 5);
    expectRefused(await overEveryTransport({ query: TOP, variables: {} }), 'BAD_USER_INPUT', 5);
    expectRefused(
      await overEveryTransport({ query: 'query($p: Period!) { top(board: "global", period: $p) { size } }', variables: { p: 'HOURLY' } }),
      'BAD_USER_INPUT',
      5,
    );
    // An input object with a field the schema does not have, a missing one, one of the wrong type.
    for (const wrong of [
      { ...input, nope: 1 },
      { board: 'global', playerId: 'p', score: 2 },
      { ...input, score: 'high' },
    ]) {
      expectRefused(await overEveryTransport({ query: SUBMIT, variables: { input: wrong } }, { key: SERVER_KEY, mutation: true }), 'BAD_USER_INPUT', 4);
    }
    // Nothing was recorded.
    expect((await t.gql('{ standing(board: "global", playerId: "p") { score } }')).data).toEqual({ standing: null });
  });

  it('a subscription with variables that fail coercion: BAD_USER_INPUT', async () => {
    const query = 'subscription($limit: Int!) { topChanged(board: "global", limit: $limit) { size } }';
    expectRefused([{ transport: 'graphql-ws', ...(await overSocket({ query, variables: { limit: 'ten' } })) }], 'BAD_USER_INPUT', 1);
    const search = new URLSearchParams({ query, variables: JSON.stringify({ limit: 'ten' }) });
    const events = await eventsOf(await fetch(`${t.url}/graphql?${search}`, { headers: { accept: 'text/event-stream' } }));
    expectRefused(
      events.map((event) => ({ transport: 'SSE GET', ...event })),
      'BAD_USER_INPUT',
      1,
    );
  });

  it("an operation name the document does not have: Yoga's OPERATION_RESOLUTION_FAILURE, over graphql-ws too", async () => {
    const query = 'query A { __typename } query B { __typename }';
    expectRefused(await overEveryTransport({ query, operationName: 'C' }), 'OPERATION_RESOLUTION_FAILURE', 5);
    expectRefused(await overEveryTransport({ query }), 'OPERATION_RESOLUTION_FAILURE', 5);
  });

  it('a document that does not parse: GRAPHQL_PARSE_FAILED, the first time and every time after', async () => {
    // A text no test sent before, so that Yoga's parse cache does not hold it yet.
    const query = `{ top(board: "${randomUUID()}" `;
    expectRefused(await overEveryTransport({ query }), 'GRAPHQL_PARSE_FAILED', 5);
    expectRefused(await overEveryTransport({ query }), 'GRAPHQL_PARSE_FAILED', 5);
  });

  it('a document that does not validate: GRAPHQL_VALIDATION_FAILED', async () => {
    expectRefused(await overEveryTransport({ query: `{ nope${randomUUID().slice(0, 8)} }` }), 'GRAPHQL_VALIDATION_FAILED', 5);
  });

  it('each is logged as the client mistake it is, never as an internal or unexpected error', async () => {
    const before = lines.length;
    await overEveryTransport({ query: TOP, variables: { limit: 'ten' } });
    await overEveryTransport({ query: SUBMIT, variables: { input: { ...input, nope: 1 } } }, { key: SERVER_KEY, mutation: true });
    const logged = lines.slice(before);
    const operations = logged.filter((line) => line.msg === 'operation');
    // One line an operation run: the socket's, the two POSTs', the GET's and the event stream's; the mutation's four.
    expect(operations.map((line) => line.outcome)).toEqual(Array.from({ length: 9 }, () => 'BAD_USER_INPUT'));
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  });
});
