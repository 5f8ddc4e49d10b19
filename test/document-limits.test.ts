import { type Client, createClient } from 'graphql-ws';
import { createSchema, createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { useDocumentLimits } from '../src/http/document-limits.js';
import { GENERATED_DOCUMENTS, type GeneratedDocument } from './helpers/generated-documents.js';
import { SERVER_KEY, type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * Issue 11, part 1: what a document may be (aliases, depth, tokens, directives, cost) never refuses
 * what a generated client sends for an operation of the contract, and refuses the rest with a
 * named limit, on every transport.
 */

interface Answer {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string; limit?: string; maximum?: number; found?: number } }[] | undefined;
}

interface Request {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  kind: GeneratedDocument['kind'];
}

type Transport = (t: TestApp, request: Request) => Promise<Answer>;

const auth = { authorization: `Bearer ${SERVER_KEY}` };

async function post(t: TestApp, request: Request, accept: string): Promise<Answer> {
  const { query, variables, operationName } = request;
  const response = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, ...auth },
    body: JSON.stringify({ query, variables, operationName }),
  });
  const text = await response.text();
  expect(response.status, text).toBeLessThan(500);
  return JSON.parse(text) as Answer;
}

/** The first `event: next` of a server-sent event stream (Yoga answers any operation that way when asked). */
async function firstEvent(t: TestApp, request: Request): Promise<Answer> {
  const { query, variables, operationName } = request;
  const abort = new AbortController();
  const response = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...auth },
    body: JSON.stringify({ query, variables, operationName }),
    signal: abort.signal,
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) throw new Error(`the stream ended without an event: ${buffer}`);
      buffer += decoder.decode(chunk.value, { stream: true });
      const event = /event: next\ndata: (.*)\n\n/.exec(buffer);
      if (event) return JSON.parse(event[1]!) as Answer;
    }
  } finally {
    abort.abort();
    await reader.cancel().catch(() => {});
  }
}

/** One operation over graphql-ws: its first result (a subscription's first view), or its error. */
async function overWebSocket(client: Client, request: Request): Promise<Answer> {
  return new Promise<Answer>((resolve) => {
    let unsubscribe = () => {};
    unsubscribe = client.subscribe(
      { query: request.query, variables: request.variables, operationName: request.operationName },
      {
        next: (result) => {
          resolve(result as Answer);
          // Leaves a subscription once its first view is in.
          queueMicrotask(() => unsubscribe());
        },
        error: (error) => resolve({ errors: Array.isArray(error) ? (error as Answer['errors']) : [{ message: String(error) }] }),
        complete: () => {},
      },
    );
  });
}

const TRANSPORTS: Record<string, { transport: Transport; kinds: GeneratedDocument['kind'][] }> = {
  'POST application/json (the fast path)': { transport: (t, r) => post(t, r, 'application/json'), kinds: ['query', 'mutation'] },
  "POST graphql-response+json (Yoga's path)": { transport: (t, r) => post(t, r, 'application/graphql-response+json'), kinds: ['query', 'mutation'] },
  GET: {
    transport: async (t, { query, variables, operationName }) => {
      const search = new URLSearchParams({ query, variables: JSON.stringify(variables ?? {}), ...(operationName ? { operationName } : {}) });
      const response = await fetch(`${t.url}/graphql?${search}`, { headers: { accept: 'application/json' } });
      const text = await response.text();
      expect(response.status, text).toBeLessThan(500);
      return JSON.parse(text) as Answer;
    },
    kinds: ['query'],
  },
  'server-sent events': { transport: firstEvent, kinds: ['query', 'mutation', 'subscription'] },
};

describe('documents a generated client makes', () => {
  let t: TestApp;
  let ws: Client;
  let seasonId: string;
  let matches = 0;
  beforeAll(async () => {
    t = await startTestApp();
    ws = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: auth });
    const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
      input: { id: 'arena', title: 'Arena', maxScore: 1_000_000, periods: ['ALL_TIME', 'SEASON', 'MONTHLY', 'WEEKLY', 'DAILY'], regions: ['eu'] },
    });
    expect(created.errors).toBeUndefined();
    const started = await t.admin<{ startSeason: { id: string } }>(`mutation { startSeason(board: "arena", name: "One") { id } }`);
    seasonId = started.data!.startSeason.id;
    const inputs = ['ana', 'bo', 'cy', 'di'].map((playerId, i) => ({ board: 'arena', playerId, score: 100 * (i + 1), matchId: 'setup', region: 'eu' }));
    expect((await t.server(`mutation($i: [SubmitScoreInput!]!) { submitScores(inputs: $i) { duplicate } }`, { i: inputs })).errors).toBeUndefined();
    expect((await t.admin(`mutation { closeSeason(board: "arena") { id } }`)).errors).toBeUndefined();
    expect((await t.server(`mutation { setFriends(playerId: "ana", friendIds: ["bo", "cy"]) }`)).errors).toBeUndefined();
    expect((await t.server(`mutation { upsertPlayer(input: { id: "ana", displayName: "Ana" }) { id } }`)).errors).toBeUndefined();
  });
  afterAll(async () => {
    await ws?.dispose();
  });

  /** Every argument a variable, each given, as a generated client sends them. */
  function variablesFor(document: GeneratedDocument): Record<string, unknown> {
    const bucket = { board: 'arena', period: 'ALL_TIME', bucket: null, region: 'eu' };
    const result = () => ({ board: 'arena', playerId: 'ana', score: 500 + matches, matchId: `m${(matches += 1)}`, region: 'eu', achievedAt: null });
    switch (document.operation) {
      case 'submitScore':
        return { input: result() };
      case 'submitScores':
        return { inputs: [result(), { ...result(), playerId: 'bo' }] };
      case 'top':
      case 'topChanged':
        return { ...bucket, limit: 10 };
      case 'standing':
      case 'friends':
        return { ...bucket, playerId: 'ana' };
      case 'around':
        return { ...bucket, playerId: 'ana', radius: 5 };
      case 'open':
        return { ...bucket, playerId: 'ana', limit: 10, radius: 5 };
      case 'standings':
        return { ...bucket, first: 50, after: null };
      case 'seasonResults':
        return { board: 'arena', season: seasonId, first: 50, after: null };
      case 'board':
        return { id: 'arena', period: 'ALL_TIME', bucket: null, region: null };
      case 'boards':
        return { period: 'ALL_TIME', bucket: null, region: null };
      case 'player':
        return { id: 'ana' };
      case 'history':
        return { board: 'arena', playerId: 'ana', period: 'DAILY', region: 'eu', first: 30, after: null };
      case 'scoreDistribution':
        return { ...bucket, bins: 20 };
      case 'periodBuckets':
        return { id: 'arena', period: 'DAILY', region: 'eu', first: 20, after: null };
      default:
        throw new Error(`no variables for ${document.operation}`);
    }
  }

  const transports: [string, GeneratedDocument['kind'][], (t: TestApp, r: Request) => Promise<Answer>][] = [
    ...Object.entries(TRANSPORTS).map(([name, { transport, kinds }]) => [name, kinds, transport] as [string, GeneratedDocument['kind'][], Transport]),
    ['graphql-ws', ['query', 'mutation', 'subscription'], (_t, r) => overWebSocket(ws, r)],
  ];

  for (const [name, kinds, transport] of transports) {
    it(`are accepted over ${name}`, async () => {
      const documents = GENERATED_DOCUMENTS.filter((document) => kinds.includes(document.kind));
      for (const document of documents) {
        const answer = await transport(t, { ...document, variables: variablesFor(document) });
        expect(answer.errors, `${document.operationName}: ${JSON.stringify(answer.errors)}`).toBeUndefined();
        // Every root field answered (open's three: top, me and around).
        const fields = Object.entries(answer.data ?? {}).filter(([field]) => field !== '__typename');
        expect(fields.length, document.operationName).toBeGreaterThan(0);
        for (const [field, value] of fields) expect(value, `${document.operationName}: ${field}`).toBeTruthy();
      }
    });
  }

  it('answer what the same operation written plainly answers', async () => {
    const variables = { board: 'arena', period: 'ALL_TIME', bucket: null, region: 'eu', first: 50, after: null };
    const generated = GENERATED_DOCUMENTS.find((document) => document.operationName === 'StandingsRelay')!;
    const deep = await TRANSPORTS['POST application/json (the fast path)']!.transport(t, { ...generated, variables });
    const plain = await t.gql(
      `query($board: ID!, $period: Period!, $bucket: String, $region: String, $first: Int!, $after: String) {
        standings(board: $board, period: $period, bucket: $bucket, region: $region, first: $first, after: $after) {
          edges { cursor node { rank score percentile achievedAt metadata player { id displayName avatarUrl } } }
          pageInfo { endCursor hasNextPage } } }`,
      variables,
    );
    const strip = (value: unknown): unknown => JSON.parse(JSON.stringify(value), (key, inner: unknown) => (key === '__typename' ? undefined : inner));
    expect(strip(deep.data)).toEqual({ standings: (plain.data as { standings: unknown }).standings });
    expect((plain.data as { standings: { edges: unknown[] } }).standings.edges.length).toBe(4);
  });

  /** Documents over each limit, and what each must say. */
  const aliases = `{ ${Array.from({ length: 30 }, (_, i) => `a${i}: top(board: "arena") { size }`).join(' ')} }`;
  const tokens = `{ top(board: "arena") { ${Array.from({ length: 2_500 }, () => 'size').join(' ')} } }`;
  const directives = `{ top(board: "arena") { ${['size', 'boardId', 'bucket', 'period', 'asOf', 'region'].map((field) => `${field} @include(if: true) @skip(if: false)`).join(' ')} } }`;
  const cost = `{ ${Array.from({ length: 5 }, (_, i) => `a${i}: standings(board: "arena", first: 1000) { edges { node { rank player { id displayName } } } }`).join(' ')} }`;
  const HEAVY: [string, string, string, RegExp][] = [
    ['aliases', aliases, 'aliases', /has 30 aliases; the limit is 20 \(10 over\)/],
    ['tokens', tokens, 'tokens', /has 2,5\d\d tokens; the limit is 2,000 \(5\d\d over\)/],
    ['directives', directives, 'directives', /has 12 directives; the limit is 10 \(2 over\)/],
    ['cost', cost, 'cost', /can return 15,005 rows; the limit is 5,000 \(10,005 over\)/],
  ];

  for (const [name, kinds, transport] of transports) {
    it(`heavy documents are refused over ${name} with the limit named, and by how much`, async () => {
      for (const [what, query, limit, message] of HEAVY) {
        // Over a subscription-only transport, the same shapes on topChanged.
        const kind = kinds.includes('query') ? 'query' : 'subscription';
        const answer = await transport(t, { query, kind });
        expect(answer.data ?? null, what).toBeNull();
        expect(answer.errors, what).toHaveLength(1);
        const [error] = answer.errors!;
        expect(error!.extensions, `${what}: ${error!.message}`).toMatchObject({ code: 'BAD_USER_INPUT', limit });
        expect(error!.message).toMatch(message);
        expect(error!.message).not.toMatch(/Syntax Error|Unexpected error/);
      }
      if (kinds.includes('subscription')) {
        const answer = await transport(t, { query: `subscription { topChanged(board: "arena") { ${'size '.repeat(2_500)} } }`, kind: 'subscription' });
        expect(answer.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', limit: 'tokens', maximum: 2_000, found: 2_511 });
      }
    });
  }
});

describe('the depth limit', () => {
  // The served schema has no cycle, so no valid document of it is deeper than 5 fields; a schema
  // with one shows the limit counting fields, not fragment spreads.
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: 'type Node { id: ID! child: Node } type Query { node: Node }',
      resolvers: { Query: { node: () => ({ id: '1' }) }, Node: { child: () => null } },
    }),
    plugins: [...useDocumentLimits({ depth: 4 })],
  });
  const ask = async (query: string) =>
    (await (
      await yoga.fetch('http://yoga/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) })
    ).json()) as Answer;

  it('counts fields through nested fragments and inline fragments, not the spreads', async () => {
    const query = `{ __typename node { __typename ...A } }
      fragment A on Node { __typename id child { __typename ...B ... on Node { id } } }
      fragment B on Node { __typename child { __typename ... on Node { ...C } } }
      fragment C on Node { __typename id }`;
    expect(await ask(query)).toEqual({ data: { __typename: 'Query', node: { __typename: 'Node', id: '1', child: null } } });
  });

  it('refuses a document a field too deep, naming the limit and by how much', async () => {
    const answer = await ask('{ node { child { child { child { child { id } } } } } }');
    expect(answer.errors).toEqual([
      expect.objectContaining({
        message: 'The operation nests fields 6 deep; the limit is 4 (2 over).',
        extensions: { code: 'BAD_USER_INPUT', limit: 'depth', maximum: 4, found: 6 },
      }),
    ]);
  });
});
