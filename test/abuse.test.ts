import { randomBytes } from 'node:crypto';
import { type Socket, connect } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createKeyring } from '../src/auth/keys.js';
import { MAX_BODY_BYTES } from '../src/http/request-limits.js';
import { type GraphQLResponse, SERVER_KEY, type TestApp, startTestApp } from './helpers/test-app.js';
import { until as poll, settle } from './helpers/wait.js';

/**
 * Issue 17, parts 2 and 3: what a misbehaving client can pin or queue (WebSocket frames and
 * operations, sockets that never read, large documents, guessed keys, trickling bodies) is
 * bounded. Heap figures are printed for the report; each test asserts the bound, not a time.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** The heap in MB once garbage is collected. */
function heapMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1e6;
}
function report(what: string, before: number, after: number): void {
  process.stdout.write(`heap ${what}: ${before.toFixed(1)} MB before, ${after.toFixed(1)} MB after (${(after - before).toFixed(1)} MB)\n`);
}

/** Every wait here: for `what`, checked every 10 ms, for at most `timeoutMs`. */
const until = (condition: () => boolean, what: string, timeoutMs = 10_000) => poll(condition, timeoutMs, what, 10);

interface Message {
  type: string;
  id?: string;
  payload?: GraphQLResponse & { extensions?: unknown } & { message?: string }[];
}

/** A graphql-transport-ws connection spoken by hand, acknowledged, collecting every message. */
async function rawSocket(t: TestApp) {
  const socket = new WebSocket(`${t.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
  const messages: Message[] = [];
  let closed: number | undefined;
  socket.on('message', (data: Buffer) => messages.push(JSON.parse(String(data)) as Message));
  socket.on('close', (code) => (closed = code));
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ type: 'connection_init' }));
  await until(() => messages.some((message) => message.type === 'connection_ack'), 'the ack');
  return {
    socket,
    messages,
    get closed() {
      return closed;
    },
    /** Sends every operation in one TCP write, so the server reads them together. */
    subscribeAll(queries: { id: string; query: string; variables?: Record<string, unknown> }[]) {
      const tcp = (socket as unknown as { _socket: Socket })._socket;
      tcp.cork();
      for (const { id, query, variables } of queries) socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query, variables } }));
      process.nextTick(() => tcp.uncork());
    },
    tcp: () => (socket as unknown as { _socket: Socket })._socket,
  };
}
const codeOf = (message: Message) => (message.payload as unknown as { extensions?: { code?: string } }[])[0]?.extensions?.code;

async function seed(t: TestApp, players: number): Promise<void> {
  expect((await t.admin(`mutation { createBoard(input: { id: "crowd", title: "Crowd", maxScore: 1000000, topSize: 10 }) { id } }`)).errors).toBeUndefined();
  const inputs = Array.from({ length: players }, (_, i) => ({ board: 'crowd', playerId: `player-${i}`, score: i, matchId: 'seed' }));
  expect((await t.server(`mutation($i: [SubmitScoreInput!]!) { submitScores(inputs: $i) { duplicate } }`, { i: inputs })).errors).toBeUndefined();
}

describe('WebSocket clients are bounded', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ requestLimits: { operationsPerSocket: 4, maxSocketBufferedBytes: 256 * 1024 } });
    await seed(t, 1_000);
  });

  it('a frame over MAX_BODY_BYTES closes the socket with 1009, as a body over it is refused', async () => {
    const client = await rawSocket(t);
    client.socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: `{ __typename } # ${'x'.repeat(MAX_BODY_BYTES)}` } }));
    await until(() => client.closed !== undefined, 'the close');
    expect(client.closed).toBe(1009);
  });

  it('queries in flight on one socket are capped; past the cap each is refused RATE_LIMITED', async () => {
    const client = await rawSocket(t);
    client.subscribeAll(
      Array.from({ length: 20 }, (_, i) => ({ id: `q${i}`, query: '{ top(board: "crowd", limit: 100) { entries { rank player { displayName } } } }' })),
    );
    await until(() => client.messages.filter((message) => message.type === 'next' || message.type === 'error').length === 20, 'every answer');
    const answered = client.messages.filter((message) => message.type === 'next');
    const refused = client.messages.filter((message) => message.type === 'error');
    expect(answered).toHaveLength(4);
    expect(refused.map(codeOf)).toEqual(Array.from({ length: 16 }, () => 'RATE_LIMITED'));
    // Once answered, the socket takes more.
    client.subscribeAll([{ id: 'later', query: '{ __typename }' }]);
    await until(() => client.messages.some((message) => message.id === 'later' && message.type === 'next'), 'the later answer');
    client.socket.close();
  });

  it('a socket whose client does not read is read no further, then closed, its answers let go', async () => {
    const client = await rawSocket(t);
    const before = heapMb();
    client.tcp().pause();
    const query =
      '{ standings(board: "crowd", first: 1000) { edges { cursor node { rank score achievedAt percentile player { id displayName avatarUrl } } } } }';
    // Four at a time (the cap), each about 200 kB of answer, over and over: today's code answers them all into its buffer.
    for (let round = 0; round < 10; round += 1) client.subscribeAll(Array.from({ length: 4 }, (_, i) => ({ id: `r${round}-${i}`, query })));
    let peak = before;
    const deadline = Date.now() + 1_500;
    // Why a wait of fixed length: the client's not reading for a second and a half is the abuse
    // itself (a scenario parameter); the heap is sampled meanwhile.
    while (Date.now() < deadline) {
      peak = Math.max(peak, process.memoryUsage().heapUsed / 1e6);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    client.tcp().resume();
    await until(() => client.closed !== undefined, 'the close');
    // Operations already running when it closed finish and are let go; the heap comes back down.
    const after = await settle(heapMb, (mb) => mb - before < 5, 10_000);
    report(`non-reading WebSocket (peak ${peak.toFixed(1)} MB)`, before, after);
    expect(client.messages.filter((message) => message.type === 'next').length).toBeLessThan(40);
    expect(client.closed).toBe(1006);
    expect(after - before).toBeLessThan(5);
  });
});

describe('subscriptions on one socket', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    await seed(t, 10);
  });

  it('1,000 at once: the socket cap (100) is open, the rest RATE_LIMITED, and the heap stays put', async () => {
    const before = heapMb();
    const client = await rawSocket(t);
    client.subscribeAll(
      Array.from({ length: 1_000 }, (_, i) => ({ id: `s${i}`, query: 'subscription { topChanged(board: "crowd") { entries { rank score player { id } } } }' })),
    );
    await until(
      () =>
        new Set(client.messages.filter((message) => message.type === 'next').map((message) => message.id)).size === 100 &&
        client.messages.filter((message) => message.type === 'error').length === 900,
      'every first answer',
      20_000,
    );
    expect(new Set(client.messages.filter((message) => message.type === 'error').map(codeOf))).toEqual(new Set(['RATE_LIMITED']));
    const after = heapMb();
    report('1,000 topChanged on one socket', before, after);
    expect(after - before).toBeLessThan(20);
    client.socket.close();
  });
});

describe('documents', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });

  it('a document over 100,000 bytes is refused before it is parsed, naming the limit', async () => {
    const query = `{ __typename } # ${'x'.repeat(150_000)}`;
    const response = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
    const answer = (await response.json()) as GraphQLResponse;
    expect(answer.errors?.[0]).toMatchObject({
      message: 'The document is 150,017 bytes long; the limit is 100,000 (50,017 over).',
      extensions: { code: 'BAD_USER_INPUT', limit: 'bytes' },
    });
    const client = await rawSocket(t);
    client.subscribeAll([{ id: 'big', query }]);
    await until(() => client.messages.some((message) => message.id === 'big'), 'the answer');
    expect(codeOf(client.messages.find((message) => message.id === 'big')!)).toBe('BAD_USER_INPUT');
    client.socket.close();
  });

  it('300 distinct documents of 90 kB are answered and not kept', async () => {
    const before = heapMb();
    for (let i = 0; i < 300; i += 1) {
      // Distinct text, few tokens: a comment pads it.
      const query = `{ __typename } # ${i} ${'x'.repeat(90_000)}`;
      const response = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
      expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
    }
    const after = heapMb();
    report('300 distinct 90 kB documents', before, after);
    // 300 × 90 kB is 27 MB of text, which the parse cache used to hold.
    expect(after - before).toBeLessThan(8);
  });
});

describe('guessed API keys', () => {
  let t: TestApp;
  let lookups = 0;
  beforeAll(async () => {
    t = await startTestApp({
      rateLimits: { readsPerSecond: 0, submissionsPerSecond: 0, readRowsPerSecond: 0, authFailuresPerSecond: 3 },
      onQuery: (statement) => {
        if (/from "api_keys"/.test(statement)) lookups += 1;
      },
    });
  });

  it('are budgeted per client: past the budget a new key is refused RATE_LIMITED without a lookup; known keys still work', async () => {
    lookups = 0;
    const answers: GraphQLResponse[] = [];
    for (let i = 0; i < 10; i += 1) answers.push(await t.gql('{ __typename }', {}, { key: `lb_server_${randomBytes(16).toString('hex')}` }));
    expect(answers.slice(0, 3).map((answer) => answer.errors)).toEqual([undefined, undefined, undefined]);
    expect(answers.slice(3).map((answer) => answer.errors?.[0]?.extensions?.code)).toEqual(Array.from({ length: 7 }, () => 'RATE_LIMITED'));
    // Yoga's path (GET) names the refusal as well.
    const overGet = await fetch(`${t.url}/graphql?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { accept: 'application/json', authorization: `Bearer lb_server_${randomBytes(16).toString('hex')}` },
    });
    expect(((await overGet.json()) as GraphQLResponse).errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    expect(lookups).toBe(3);
    expect((await t.gql('mutation { upsertPlayer(input: { id: "x" }) { id } }', {}, { key: SERVER_KEY })).errors).toBeUndefined();
    expect((await t.gql('{ __typename }')).errors).toBeUndefined();
  });

  it('the key cache keeps at most its bound of lookups', async () => {
    const keyring = createKeyring({ stored: { find: () => Promise.resolve(null) }, cacheEntries: 100 });
    const before = heapMb();
    for (let i = 0; i < 20_000; i += 1) await keyring.identify(randomBytes(24).toString('base64url'));
    const after = heapMb();
    report('20,000 random keys looked up', before, after);
    expect(keyring.cachedLookups).toBe(100);
  });
});

describe('HTTP connections', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ requestLimits: { requestTimeoutMs: 1_000, maxConnections: 20 } });
  });

  const port = () => Number(new URL(t.url).port);

  it('a body trickled slower than the request timeout is answered 408 and its connection closed', async () => {
    const socket = connect(port(), '127.0.0.1');
    let received = '';
    let closedAt = 0;
    socket.on('data', (chunk: Buffer) => (received += String(chunk)));
    socket.on('close', () => (closedAt = Date.now()));
    await new Promise((resolve) => socket.once('connect', resolve));
    const startedAt = Date.now();
    socket.write('POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"query":"');
    const trickle = setInterval(() => socket.writable && socket.write('x'), 100);
    await until(() => closedAt > 0, 'the connection to close');
    clearInterval(trickle);
    expect(received).toMatch(/^HTTP\/1.1 408/);
    // The timeout (1 s), checked every second.
    expect(closedAt - startedAt).toBeLessThan(4_000);
  });

  it('connections past the limit are closed as they come', async () => {
    const open = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const socket = connect(port(), '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        return socket;
      }),
    );
    // Each of these is accepted by the kernel, then closed by the server.
    const extra = connect(port(), '127.0.0.1');
    let closed = false;
    extra.on('close', () => (closed = true));
    extra.on('error', () => {});
    await until(() => closed, 'the extra connection to close');
    for (const socket of open) socket.destroy();
    // Once they are gone, requests are served again.
    await until(() => open.every((socket) => socket.destroyed), 'the sockets to close');
    // The server lets the slots go once it has seen them close: the first requests may still be refused.
    await expect.poll(async () => (await t.gql('{ __typename }').catch(() => null))?.data, { timeout: 5_000, interval: 20 }).toEqual({ __typename: 'Query' });
  });
});

describe('request bodies held at once', () => {
  let t: TestApp;
  // Room for one largest body (3 MiB) and a little more: two bodies of 2 MB do not fit together.
  const budget = MAX_BODY_BYTES + 100_000;
  beforeAll(async () => {
    t = await startTestApp({ requestLimits: { maxBodyBytesInFlight: budget } });
  });

  const large = () => JSON.stringify({ query: '{ __typename }', variables: { padding: 'x'.repeat(2_000_000) } });
  const post = async (body: string) => {
    const response = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: (await response.json()) as { errors?: { extensions?: { code?: string } }[] },
    };
  };

  it('a body that would pass the budget is answered 503 UNAVAILABLE at once, small ones are served meanwhile, and it is served once the other is done', async () => {
    // A client that declares 2 MB and sends a little of it: its declared length is held until its
    // request is answered or its connection closes.
    const slow = connect(Number(new URL(t.url).port), '127.0.0.1');
    slow.on('error', () => {});
    await new Promise((resolve) => slow.once('connect', resolve));
    slow.write('POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n{"query":"');

    await expect.poll(async () => (await post(large())).status, { timeout: 5_000, interval: 20 }).toBe(503);
    const refused = await post(large());
    expect(refused.status).toBe(503);
    expect(refused.retryAfter).toBe('1');
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('UNAVAILABLE');
    // What fits beside it is served.
    expect((await t.gql('{ __typename }')).data).toEqual({ __typename: 'Query' });

    slow.destroy();
    await expect.poll(async () => (await post(large())).status, { timeout: 5_000, interval: 20 }).toBe(200);
  });
});
