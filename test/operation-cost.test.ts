import { type Client, createClient } from 'graphql-ws';
import { getNamedType, getNullableType, isListType, isObjectType, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { LIST_LENGTHS, operationCost } from '../src/http/operation-cost.js';
import { schema } from '../src/schema/index.js';
import { GENERATED_DOCUMENTS } from './helpers/generated-documents.js';
import { type GraphQLResponse, SERVER_KEY, type TestApp, startTestApp } from './helpers/test-app.js';
import { settle } from './helpers/wait.js';

/** Issue 17, part 2: what a read costs follows the rows it can return, and its client pays for them. */

const generated = (name: string) => GENERATED_DOCUMENTS.find((document) => document.operationName === name)!;
const BUCKET = { board: 'crowd', period: 'ALL_TIME', bucket: null, region: null };
const PLAYERS = 1_000;

async function post(t: TestApp, body: unknown): Promise<{ status: number; json: GraphQLResponse | GraphQLResponse[] }> {
  const response = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${SERVER_KEY}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as GraphQLResponse };
}
const one = async (t: TestApp, body: unknown) => {
  const { status, json } = await post(t, body);
  expect(status).toBe(200);
  return json as GraphQLResponse;
};

/** A board of 1,000 named players, one of whom has all the others as friends. */
async function seedCrowd(t: TestApp): Promise<void> {
  const created = await t.admin(`mutation { createBoard(input: { id: "crowd", title: "Crowd", maxScore: 1000000, topSize: 100 }) { id } }`);
  expect(created.errors).toBeUndefined();
  const inputs = Array.from({ length: PLAYERS }, (_, i) => ({ board: 'crowd', playerId: `p${i}`, score: i * 7, matchId: 'seed' }));
  expect((await t.server(`mutation($i: [SubmitScoreInput!]!) { submitScores(inputs: $i) { duplicate } }`, { i: inputs })).errors).toBeUndefined();
  const friends = Array.from({ length: PLAYERS - 1 }, (_, i) => `p${i + 1}`);
  expect((await t.server(`mutation($f: [ID!]!) { setFriends(playerId: "p0", friendIds: $f) }`, { f: friends })).errors).toBeUndefined();
}

describe('what an operation costs', () => {
  it('every list of objects in the schema has a length, so none is free by omission', () => {
    const lists: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      for (const field of Object.values(type.getFields())) {
        if (isListType(getNullableType(field.type)) && isObjectType(getNamedType(field.type))) lists.push(`${type.name}.${field.name}`);
      }
    }
    expect(lists.sort()).toEqual(Object.keys(LIST_LENGTHS).sort());
  });

  it('names the variables that decided it: list sizes and @skip/@include, not ids', () => {
    const read = (query: string, variables: Record<string, unknown>) =>
      [...(operationCost(schema, parse(query), undefined, variables)?.variablesRead ?? ['?'])].sort();
    expect(read('query($b: ID!, $p: ID!) { standing(board: $b, playerId: $p) { rank player { displayName } } }', { b: 'x', p: 'y' })).toEqual([]);
    expect(read('query($b: ID!, $p: ID!, $r: Int!) { around(board: $b, playerId: $p, radius: $r) { rank } }', { b: 'x', p: 'y', r: 3 })).toEqual(['r']);
    expect(read('query($b: ID!, $n: Int!) { top(board: $b, limit: $n) { entries { rank } } }', { b: 'x', n: 3 })).toEqual(['n']);
    const skipping =
      'query($b: ID!, $n: Int!, $m: Int!, $s: Boolean!) { a: top(board: $b, limit: $n) @skip(if: $s) { entries { rank } } b: top(board: $b, limit: $m) { entries { rank } } }';
    expect(read(skipping, { b: 'x', n: 3, m: 4, s: false })).toEqual(['m', 'n', 's']);
    // Skipped, its limit is not read.
    expect(read(skipping, { b: 'x', n: 3, m: 4, s: true })).toEqual(['m', 's']);
    // Issue 25: a backward page is sized by its last; first (always there, by its default) decides only without one.
    const page = 'query($b: ID!, $f: Int!, $l: Int, $c: String) { standings(board: $b, first: $f, last: $l, before: $c) { edges { node { rank } } } }';
    expect(read(page, { b: 'x', f: 10, l: 3, c: 'cursor' })).toEqual(['l']);
    expect(read(page, { b: 'x', f: 10, l: null, c: null })).toEqual(['f', 'l']);
  });

  it('a backward page (last) costs what a forward page of as many rows (first) costs, on standings and seasonResults alike', () => {
    const rowsOf = (query: string, variables: Record<string, unknown> = {}) => operationCost(schema, parse(query), undefined, variables)?.rows;
    const selection = '{ edges { cursor node { rank player { id } } } pageInfo { hasPreviousPage startCursor } }';
    for (const field of ['standings(board: "crowd"', 'seasonResults(board: "crowd", season: "1"']) {
      for (const size of [1, 7, 1_000]) {
        // The connection, its page info, and each edge with its standing and player: 2 + 3 × size.
        const forward = rowsOf(`{ ${field}, first: ${size}) ${selection} }`);
        expect(forward, `${field} first ${size}`).toBe(2 + 3 * size);
        expect(rowsOf(`{ ${field}, last: ${size}) ${selection} }`), `${field} last ${size}`).toBe(forward);
        expect(rowsOf(`{ ${field}, last: ${size}, before: "c") ${selection} }`), `${field} last ${size} before`).toBe(forward);
        // first keeps its default (50, 100) beside last: the page is last's size whichever is larger.
        expect(rowsOf(`{ ${field}, first: 1000, last: ${size}, before: "c") ${selection} }`)).toBe(forward);
        expect(rowsOf(`query($n: Int) { ${field}, last: $n) ${selection} }`, { n: size })).toBe(forward);
        // fromRank starts the page elsewhere; first still sizes it.
        expect(rowsOf(`{ ${field}, first: ${size}, fromRank: 500) ${selection} }`)).toBe(forward);
      }
    }
  });
});

describe('every operation of the contract at its documented maximum', () => {
  let t: TestApp;
  let ws: Client;
  beforeAll(async () => {
    // The default limits: what a deployment has.
    t = await startTestApp();
    await seedCrowd(t);
    ws = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  });
  afterAll(async () => {
    await ws?.dispose();
  });

  it('standings(first: 200) with an ordinary selection is accepted on the JSON path', async () => {
    const answer = await one(t, {
      query:
        '{ standings(board: "crowd", first: 200) { edges { cursor node { rank score achievedAt player { id displayName } } } pageInfo { endCursor hasNextPage } } }',
    });
    expect(answer.errors).toBeUndefined();
    expect((answer.data as { standings: { edges: unknown[] } }).standings.edges).toHaveLength(200);
  });

  it('the deepest generated documents are accepted at the largest sizes the contract allows', async () => {
    const cases: [string, Record<string, unknown>, (data: Record<string, unknown>) => number][] = [
      ['TopRelay', { ...BUCKET, limit: 1_000 }, (data) => (data.top as { entries: unknown[] }).entries.length],
      ['StandingsRelay', { ...BUCKET, first: 1_000, after: null }, (data) => (data.standings as { edges: unknown[] }).edges.length],
      ['AroundRelay', { ...BUCKET, playerId: 'p500', radius: 50 }, (data) => (data.around as unknown[]).length],
      ['FriendsRelay', { ...BUCKET, playerId: 'p0' }, (data) => (data.friends as unknown[]).length],
    ];
    const expected: Record<string, number> = { TopRelay: 1_000, StandingsRelay: 1_000, AroundRelay: 101, FriendsRelay: PLAYERS };
    for (const [name, variables, rows] of cases) {
      const answer = await one(t, { query: generated(name).query, operationName: name, variables });
      expect(answer.errors, name).toBeUndefined();
      expect(rows(answer.data!), name).toBe(expected[name]);
    }
    const inputs = Array.from({ length: 1_000 }, (_, i) => ({
      board: 'crowd',
      playerId: `p${i}`,
      score: i * 7 + 1,
      matchId: 'max',
      region: null,
      achievedAt: null,
    }));
    const submitted = await one(t, { query: generated('SubmitScoresRelay').query, operationName: 'SubmitScoresRelay', variables: { inputs } });
    expect(submitted.errors).toBeUndefined();
    expect((submitted.data as { submitScores: unknown[] }).submitScores).toHaveLength(1_000);
  });

  it('topChanged at the board topSize (100) over graphql-ws', async () => {
    const result = await new Promise<GraphQLResponse>((resolve) => {
      const stop = ws.subscribe(
        { query: generated('TopChangedRelay').query, operationName: 'TopChangedRelay', variables: { ...BUCKET, limit: 100 } },
        {
          next: (value) => (resolve(value as GraphQLResponse), queueMicrotask(stop)),
          error: (error) => resolve({ errors: error as GraphQLResponse['errors'] }),
          complete: () => {},
        },
      );
    });
    expect(result.errors).toBeUndefined();
    expect((result.data as { topChanged: { entries: unknown[] } }).topChanged.entries).toHaveLength(100);
  });

  it('a list size costs the same from a literal and from a variable; aliases multiply it', async () => {
    const viaVariables = `query($n: Int!) { a: top(board: "crowd", limit: $n) { entries { rank player { id } } } b: top(board: "crowd", limit: $n) { entries { rank player { id } } } c: top(board: "crowd", limit: $n) { entries { rank player { id } } } }`;
    const viaLiterals = viaVariables.replace('query($n: Int!) ', '').replaceAll('$n', '1000');
    for (const answer of [await one(t, { query: viaVariables, variables: { n: 1_000 } }), await one(t, { query: viaLiterals })]) {
      expect(answer.data ?? null).toBeNull();
      // Three tops of 1,000 entries and their players: 3 × (1 + 1,000 + 1,000).
      expect(answer.errors).toEqual([
        expect.objectContaining({
          message: 'The operation can return 6,003 rows; the limit is 5,000 (1,003 over).',
          extensions: { code: 'BAD_USER_INPUT', limit: 'cost', maximum: 5_000, found: 6_003 },
        }),
      ]);
    }
    expect((await one(t, { query: viaVariables, variables: { n: 10 } })).errors).toBeUndefined();
    // A default counts too: radius 5 either side unless given.
    expect((await one(t, { query: '{ around(board: "crowd", playerId: "p1") { rank } }' })).errors).toBeUndefined();
  });

  it('a cost kept for one document is never reused for variables that change it', async () => {
    // One document, asked again and again: whoever the player, the radius and the @include decide.
    const page = 'standings(board: $b, first: 1000) @include(if: $wide) { edges { node { rank player { id } } } }';
    const query = `query($b: ID!, $p: ID!, $r: Int!, $wide: Boolean!) { a: around(board: $b, playerId: $p, radius: $r) { rank player { id } } b: ${page} c: ${page} }`;
    const ask = (p: string, r: number, wide: boolean) => one(t, { query, variables: { b: 'crowd', p, r, wide } });
    // a: 2 × (2r + 1) rows (the standings and their players); b and c: 1 + 3 × 1,000 each, when included.
    const refusal = (r: number) => ({ code: 'BAD_USER_INPUT', limit: 'cost', found: 2 * (2 * r + 1) + 2 * 3_001 });
    for (const p of ['p1', 'p2', 'p3']) expect((await ask(p, 5, false)).errors, p).toBeUndefined();
    expect((await ask('p4', 50, true)).errors?.[0]?.extensions).toMatchObject(refusal(50));
    expect((await ask('p5', 5, true)).errors?.[0]?.extensions).toMatchObject(refusal(5));
    expect((await ask('p6', 50, false)).errors).toBeUndefined();
    expect((await ask('p7', 2, true)).errors?.[0]?.extensions).toMatchObject(refusal(2));
  });

  it('a backward page of 1,000 (last) is accepted as the forward one is; three in one operation are refused by their cost as three forward ones are', async () => {
    const page = '{ edges { cursor node { rank score player { id displayName } } } pageInfo { hasPreviousPage hasNextPage startCursor endCursor } }';
    const answer = await one(t, { query: `query($n: Int) { standings(board: "crowd", last: $n) ${page} }`, variables: { n: 1_000 } });
    expect(answer.errors).toBeUndefined();
    const { edges, pageInfo } = (answer.data as { standings: { edges: { node: { player: { id: string } } }[]; pageInfo: Record<string, unknown> } }).standings;
    // The board's last 1,000 of its 1,000: every player, the top (p999, scored highest) first.
    expect(edges.map((edge) => edge.node.player.id)).toEqual(Array.from({ length: PLAYERS }, (_, i) => `p${PLAYERS - 1 - i}`));
    expect(pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: false });
    const three = (arg: string) =>
      `query($n: Int!) { ${['a', 'b', 'c'].map((alias) => `${alias}: standings(board: "crowd", ${arg}: $n) { edges { node { rank player { id } } } }`).join(' ')} }`;
    for (const arg of ['first', 'last']) {
      const refused = await one(t, { query: three(arg), variables: { n: 1_000 } });
      expect(refused.data ?? null, arg).toBeNull();
      // Three pages of 1,000 edges, their standings and players: 3 × (1 + 3 × 1,000).
      expect(refused.errors?.[0]?.extensions, arg).toMatchObject({ code: 'BAD_USER_INPUT', limit: 'cost', found: 9_003 });
    }
  });

  it('a refused cost answers the same over graphql-ws and over GET', async () => {
    const query = `query($n: Int!) { ${['a', 'b', 'c'].map((alias) => `${alias}: standings(board: "crowd", first: $n) { edges { node { rank player { id } } } }`).join(' ')} }`;
    const overWs = await new Promise<GraphQLResponse>((resolve) => {
      ws.subscribe(
        { query, variables: { n: 1_000 } },
        { next: (value) => resolve(value as GraphQLResponse), error: (error) => resolve({ errors: error as GraphQLResponse['errors'] }), complete: () => {} },
      );
    });
    expect(overWs.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', limit: 'cost', found: 9_003 });
    const search = new URLSearchParams({ query, variables: JSON.stringify({ n: 1_000 }) });
    const overGet = (await (await fetch(`${t.url}/graphql?${search}`, { headers: { accept: 'application/json' } })).json()) as GraphQLResponse;
    expect(overGet.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', limit: 'cost', found: 9_003 });
  });
});

describe('the read budget is charged by rows', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ rateLimits: { readsPerSecond: 0, submissionsPerSecond: 0, readRowsPerSecond: 5_000 } });
    await seedCrowd(t);
  });

  it('a batch of heavy reads spends the rows of each, and is refused past the budget', async () => {
    // Each costs 1 + 1,000 + 1,000 = 2,001 rows: two fit in 5,000 a second, the rest do not.
    const heavy = { query: 'query($n: Int!) { top(board: "crowd", limit: $n) { entries { rank player { displayName } } } }', variables: { n: 1_000 } };
    const { json } = await post(
      t,
      Array.from({ length: 10 }, () => heavy),
    );
    const codes = (json as GraphQLResponse[]).map((answer) => answer.errors?.[0]?.extensions?.code ?? 'ok');
    expect(codes.filter((code) => code === 'ok')).toHaveLength(2);
    expect(codes.filter((code) => code === 'RATE_LIMITED')).toHaveLength(8);
  });
});

describe('subscriptions are charged and capped', () => {
  let t: TestApp;
  const sockets: Client[] = [];
  const socket = () => {
    const client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
    sockets.push(client);
    return client;
  };
  /** Starts a topChanged; answers its first result (a view, or the refusal) and how to stop it. */
  const watch = (client: Client, limit = 1) =>
    new Promise<{ first: GraphQLResponse; stop: () => void }>((resolve) => {
      const stop = client.subscribe(
        { query: 'subscription($l: Int!) { topChanged(board: "crowd", limit: $l) { entries { rank player { id } } } }', variables: { l: limit } },
        {
          next: (value) => resolve({ first: value as GraphQLResponse, stop }),
          error: (error) => resolve({ first: { errors: error as GraphQLResponse['errors'] }, stop }),
          complete: () => {},
        },
      );
    });
  beforeAll(async () => {
    t = await startTestApp({
      rateLimits: { readsPerSecond: 0, submissionsPerSecond: 0, readRowsPerSecond: 0 },
      requestLimits: { subscriptionsPerSocket: 3, subscriptionsPerClient: 5 },
    });
    await seedCrowd(t);
  });
  afterAll(async () => {
    for (const client of sockets) await client.dispose();
  });

  it('per socket and per client, refused with RATE_LIMITED past either cap, and freed when one ends', async () => {
    const a = socket();
    const onA = [await watch(a), await watch(a), await watch(a), await watch(a)];
    expect(onA.map(({ first }) => first.errors?.[0]?.extensions?.code ?? 'ok')).toEqual(['ok', 'ok', 'ok', 'RATE_LIMITED']);
    expect(onA[3]!.first.errors?.[0]?.message).toMatch(/socket has 3 subscriptions open/);
    const b = socket();
    const onB = [await watch(b), await watch(b), await watch(b)];
    expect(onB.map(({ first }) => first.errors?.[0]?.extensions?.code ?? 'ok')).toEqual(['ok', 'ok', 'RATE_LIMITED']);
    expect(onB[2]!.first.errors?.[0]?.message).toMatch(/client has 5 subscriptions open/);
    // Over server-sent events too: the client's cap is the process's, whatever the transport.
    const sse = await fetch(`${t.url}/graphql?query=${encodeURIComponent('subscription { topChanged(board: "crowd", limit: 1) { size } }')}`, {
      headers: { accept: 'text/event-stream' },
    });
    const text = await sse.text();
    expect(text).toContain('RATE_LIMITED');
    onA[0]!.stop();
    // The slot comes back once the stopped subscription has ended on the server.
    const again = await settle(
      () => watch(b),
      (watched) => !watched.first.errors,
      5_000,
      20,
    );
    expect(again.first.errors).toBeUndefined();
  });
});

describe('subscriptions spend the read budget', () => {
  let t: TestApp;
  let client: Client;
  beforeAll(async () => {
    t = await startTestApp({ rateLimits: { readsPerSecond: 0, submissionsPerSecond: 0, readRowsPerSecond: 100 } });
    await seedCrowd(t);
    client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  });
  afterAll(async () => {
    await client?.dispose();
  });

  it('each topChanged is charged its rows as it starts', async () => {
    // limit 10 with players: 1 + 10 + 10 = 21 rows; four fit in 100 a second, the fifth does not.
    const query = 'subscription { topChanged(board: "crowd", limit: 10) { entries { rank player { id } } } }';
    const firsts = await Promise.all(
      Array.from(
        { length: 5 },
        () =>
          new Promise<GraphQLResponse>((resolve) => {
            client.subscribe(
              { query },
              {
                next: (value) => resolve(value as GraphQLResponse),
                error: (error) => resolve({ errors: error as GraphQLResponse['errors'] }),
                complete: () => {},
              },
            );
          }),
      ),
    );
    const codes = firsts.map((first) => first.errors?.[0]?.extensions?.code ?? 'ok');
    expect(codes.filter((code) => code === 'ok')).toHaveLength(4);
    expect(codes.filter((code) => code === 'RATE_LIMITED')).toHaveLength(1);
  });
});
