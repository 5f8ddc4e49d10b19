import { request as httpRequest } from 'node:http';
import { type Socket, connect } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { MAX_BODY_BYTES } from '../src/http/request-limits.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { until as poll } from './helpers/wait.js';

/**
 * Issue 53, items 8 and 9: one client address cannot take the request bodies in flight, nor the
 * connections, from the others, and no connection stays open for long without a request. Every
 * client here is a loopback address of its own (127.0.0.2, ...), as the service tells clients apart
 * by the socket's peer.
 */

/** Every wait here: for `what`, checked every 20 ms, for at most `timeoutMs`. */
const until = (condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000) => poll(condition, timeoutMs, what, 20);

/** A raw connection from `from`, keeping what it received and whether it closed. */
async function open(t: TestApp, from: string) {
  const socket: Socket = connect({ host: '127.0.0.1', port: Number(new URL(t.url).port), localAddress: from });
  const connection = { socket, received: '', closed: false };
  socket.on('data', (chunk: Buffer) => (connection.received += String(chunk)));
  socket.on('close', () => (connection.closed = true));
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  return connection;
}
type Connection = Awaited<ReturnType<typeof open>>;

/** One request on a connection of its own from `from`; status 0 when the connection was closed without an answer. */
function send(t: TestApp, from: string, method: string, path: string, body?: string) {
  return new Promise<{ status: number; retryAfter?: string | undefined; code?: string | undefined }>((resolve) => {
    const req = httpRequest(
      `${t.url}${path}`,
      {
        method,
        localAddress: from,
        agent: false,
        headers: body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += String(chunk)));
        res.on('end', () => {
          const code = res.headers['content-type']?.includes('json')
            ? (JSON.parse(text) as { errors?: { extensions?: { code?: string } }[] }).errors?.[0]?.extensions?.code
            : undefined;
          resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], code });
        });
      },
    );
    req.on('error', () => resolve({ status: 0 }));
    req.end(body);
  });
}

const largeBody = () => JSON.stringify({ query: '{ __typename }', variables: { padding: 'x'.repeat(2_000_000) } });

describe('request bodies in flight, per client address', () => {
  let t: TestApp;
  // Room for four largest bodies in all, and one (and a little) for each address.
  beforeAll(async () => {
    t = await startTestApp({ requestLimits: { maxBodyBytesInFlight: 4 * MAX_BODY_BYTES, maxBodyBytesInFlightPerClient: MAX_BODY_BYTES + 100_000 } });
  });

  it("one address declaring large bodies and sending none gets its own refusals, and another address's POST is served", async () => {
    // More than the whole budget: five largest bodies declared, not a byte of them sent.
    const stalled = await Promise.all(Array.from({ length: 5 }, () => open(t, '127.0.0.2')));
    for (const { socket } of stalled)
      socket.write(`POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${MAX_BODY_BYTES}\r\n\r\n`);
    // Past what it may hold, the server refuses the rest (and closes their connections).
    await until(() => stalled.some((connection) => connection.closed), 'a stalled request to be refused');

    // Another address is served, its large body too.
    expect(await send(t, '127.0.0.3', 'POST', '/graphql', largeBody())).toMatchObject({ status: 200 });
    expect((await t.gql('{ __typename }')).data).toEqual({ __typename: 'Query' });

    // One of the stalled requests is held (until the request timeout); the others were refused as
    // they came, as is the address's next large body.
    await until(() => stalled.filter((connection) => connection.closed).length === 4, 'four stalled connections to be refused');
    for (const connection of stalled.filter(({ closed }) => closed)) expect(connection.received).toMatch(/^HTTP\/1.1 429/);
    expect(await send(t, '127.0.0.2', 'POST', '/graphql', largeBody())).toEqual({ status: 429, retryAfter: '1', code: 'RATE_LIMITED' });

    // Once the stalled one is gone, the address has its share back.
    for (const { socket } of stalled) socket.destroy();
    await until(async () => (await send(t, '127.0.0.2', 'POST', '/graphql', largeBody())).status === 200, 'the address to be served again');
  });
});

describe('connections per client address', () => {
  let t: TestApp;
  const held: Connection[] = [];
  beforeAll(async () => {
    // The default request timeout (10 s): the held connections stay open through each test.
    t = await startTestApp({ requestLimits: { maxConnectionsPerClient: 5 }, http: { trustedProxies: ['127.0.0.9'] } });
  });
  afterEach(async () => {
    for (const { socket } of held.splice(0)) socket.destroy();
  });

  it('connections past the cap are closed as they come, while another address is served', async () => {
    held.push(...(await Promise.all(Array.from({ length: 5 }, () => open(t, '127.0.0.2')))));
    const extra = await open(t, '127.0.0.2');
    held.push(extra);
    await until(() => extra.closed, 'the connection past the cap to close');
    expect(extra.received).toBe('');
    expect(held.slice(0, 5).every((connection) => !connection.closed)).toBe(true);
    // A WebSocket from the address is refused too: it is one more connection.
    const socket = new WebSocket(`${t.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws', { localAddress: '127.0.0.2' });
    let refused = false;
    socket.on('error', () => (refused = true));
    await until(() => refused, 'the WebSocket past the cap to be refused');

    expect(await send(t, '127.0.0.3', 'GET', '/healthz')).toMatchObject({ status: 200 });
    expect((await t.gql('{ __typename }')).data).toEqual({ __typename: 'Query' });

    // Its connections closed, the address is served again.
    for (const { socket: tcp } of held) tcp.destroy();
    await until(async () => (await send(t, '127.0.0.2', 'GET', '/healthz')).status === 200, 'the address to be served again');
  });

  it('a trusted proxy, the peer of every client behind it, is not capped', async () => {
    held.push(...(await Promise.all(Array.from({ length: 8 }, () => open(t, '127.0.0.9')))));
    const last = held.at(-1)!;
    last.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => last.received.length > 0, 'the answer');
    expect(last.received).toMatch(/^HTTP\/1.1 200/);
    expect(held.every((connection) => !connection.closed)).toBe(true);
  });
});

describe('connections without a request', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ requestLimits: { requestTimeoutMs: 1_000, keepAliveTimeoutMs: 1_000 } });
    const answer = await t.admin('mutation { createBoard(input: { id: "idle", title: "idle", maxScore: 100 }) { id } }');
    expect(answer.errors).toBeUndefined();
  });

  it('a connection that sends nothing is answered 408 and closed at the request timeout', async () => {
    const silent = await open(t, '127.0.0.2');
    await until(() => silent.closed, 'the silent connection to close');
    expect(silent.received).toMatch(/^HTTP\/1.1 408/);
  });

  it('an idle keep-alive connection is closed after the keep-alive timeout it announced', async () => {
    const idle = await open(t, '127.0.0.3');
    idle.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => idle.received.includes('\r\n\r\n'), 'the answer');
    expect(idle.received).toMatch(/^HTTP\/1.1 200/);
    expect(idle.received).toMatch(/\r\nKeep-Alive: timeout=1\r\n/i);
    await until(() => idle.closed, 'the idle connection to close');
  });

  it('blank lines between requests do not keep a connection open, while a long answer and a WebSocket stay', async () => {
    // A server-sent event stream: one request, answered for as long as the client listens.
    const stream = await open(t, '127.0.0.4');
    const query = encodeURIComponent('subscription { topChanged(board: "idle", limit: 1) { size } }');
    stream.socket.write(`GET /graphql?query=${query} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n`);
    await until(() => stream.received.includes('event: next'), 'the stream to start');
    const socket = new WebSocket(`${t.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws', { localAddress: '127.0.0.4' });
    let acknowledged = false;
    let socketClosed = false;
    socket.on('message', (data: Buffer) => (acknowledged ||= String(data).includes('connection_ack')));
    socket.on('close', () => (socketClosed = true));
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'connection_init' }));
    await until(() => acknowledged, 'the ack');

    const chatty = await open(t, '127.0.0.5');
    chatty.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => chatty.received.includes('\r\n\r\n'), 'the answer');
    // Blank lines start no request, but restart Node's keep-alive timer on every byte.
    const blanks = setInterval(() => chatty.socket.writable && chatty.socket.write('\r\n'), 100);
    try {
      await until(() => chatty.closed, 'the connection sending blank lines to close');
    } finally {
      clearInterval(blanks);
    }
    // Opened before it, and still open after it was closed for being idle: the WebSocket answers a
    // ping, and the stream has not closed by the time another request is answered.
    socket.ping();
    await new Promise((resolve) => socket.once('pong', resolve));
    expect((await t.gql('{ __typename }')).data).toEqual({ __typename: 'Query' });
    expect(stream.closed).toBe(false);
    expect(socketClosed).toBe(false);
    stream.socket.destroy();
    socket.close();
  });
});
