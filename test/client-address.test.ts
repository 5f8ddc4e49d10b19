import type { IncomingMessage } from 'node:http';
import { type Client, createClient } from 'graphql-ws';
import { beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createClientAddressOf, isAddressOrRange } from '../src/http/client-address.js';
import { loadConfig } from '../src/config.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * TRUSTED_PROXIES: behind a trusted proxy each player has their own read budget (the rightmost
 * untrusted address of X-Forwarded-For or Forwarded), over HTTP POST (the fast path), GET (Yoga),
 * server-sent events and graphql-ws alike; from an untrusted peer the headers change nothing.
 */

const request = (peer: string, headers: Record<string, string | string[]> = {}) =>
  ({ socket: { remoteAddress: peer }, headers }) as unknown as Pick<IncomingMessage, 'headers' | 'socket'>;

describe('the client address of a request', () => {
  const clientOf = createClientAddressOf(['10.0.0.0/8', '192.168.1.7', 'fd00::/8']);

  it('is the peer when the peer is not a trusted proxy, whatever the headers say', () => {
    expect(clientOf(request('203.0.113.9', { 'x-forwarded-for': '198.51.100.1' }))).toBe('203.0.113.9');
    expect(clientOf(request('::ffff:203.0.113.9', { forwarded: 'for=198.51.100.1' }))).toBe('203.0.113.9');
    expect(createClientAddressOf()(request('10.0.0.1', { 'x-forwarded-for': '198.51.100.1' }))).toBe('10.0.0.1');
  });

  it('is the rightmost untrusted hop of X-Forwarded-For behind trusted proxies, never a spoofed one left of it', () => {
    expect(clientOf(request('10.0.0.1', { 'x-forwarded-for': '198.51.100.1' }))).toBe('198.51.100.1');
    expect(clientOf(request('10.0.0.1', { 'x-forwarded-for': '6.6.6.6, 198.51.100.1, 192.168.1.7' }))).toBe('198.51.100.1');
    expect(clientOf(request('::ffff:10.0.0.1', { 'x-forwarded-for': ['6.6.6.6, 198.51.100.1', '10.1.2.3'] }))).toBe('198.51.100.1');
    expect(clientOf(request('fd00::1', { 'x-forwarded-for': '2001:DB8::7, fd00::2' }))).toBe('2001:db8::7');
    // Every hop trusted: the leftmost one is the nearest thing to a client.
    expect(clientOf(request('10.0.0.1', { 'x-forwarded-for': '10.9.9.9, 192.168.1.7' }))).toBe('10.9.9.9');
    // Nothing forwarded, or a hop the proxy could not name: the request counts against the nearest proxy.
    expect(clientOf(request('10.0.0.1'))).toBe('10.0.0.1');
    expect(clientOf(request('10.0.0.1', { 'x-forwarded-for': '198.51.100.1, unknown, 10.0.0.5' }))).toBe('10.0.0.5');
  });

  it('reads Forwarded (RFC 7239) when there is no X-Forwarded-For', () => {
    expect(clientOf(request('10.0.0.1', { forwarded: 'for=6.6.6.6, for=198.51.100.1;proto=https, for=10.0.0.2' }))).toBe('198.51.100.1');
    expect(clientOf(request('10.0.0.1', { forwarded: 'proto=https;for="[2001:db8::1]:4711"' }))).toBe('2001:db8::1');
    expect(clientOf(request('10.0.0.1', { forwarded: 'for=198.51.100.1:80;by=10.0.0.1' }))).toBe('198.51.100.1');
  });

  it('is configured from TRUSTED_PROXIES, which refuses anything but addresses and ranges', () => {
    expect(loadConfig({}).TRUSTED_PROXIES).toEqual([]);
    expect(loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1,::1' }).TRUSTED_PROXIES).toEqual(['10.0.0.0/8', '127.0.0.1', '::1']);
    for (const bad of ['nginx', '10.0.0.0/33', '10.0.0/8', 'fd00::/129', '10.0.0.1/8/2']) {
      expect(isAddressOrRange(bad), bad).toBe(false);
      expect(() => loadConfig({ TRUSTED_PROXIES: bad })).toThrow(/TRUSTED_PROXIES/);
    }
  });
});

const TOP = '{ top(board: "global") { size } }';
const READS_PER_SECOND = 3;

async function post(t: TestApp, forwardedFor: string) {
  const response = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
    body: JSON.stringify({ query: TOP }),
  });
  return JSON.stringify(await response.json());
}

async function get(t: TestApp, forwarded: string) {
  const response = await fetch(`${t.url}/graphql?query=${encodeURIComponent(TOP)}`, { headers: { forwarded } });
  return JSON.stringify(await response.json());
}

/** The first event of an answer over server-sent events (what Yoga streams topChanged on, here a query). */
async function sse(t: TestApp, forwardedFor: string) {
  const controller = new AbortController();
  const response = await fetch(`${t.url}/graphql?query=${encodeURIComponent(TOP)}`, {
    headers: { accept: 'text/event-stream', 'x-forwarded-for': forwardedFor },
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  let text = '';
  while (!/^data:/m.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  controller.abort();
  return text;
}

async function overWebSocket(t: TestApp, forwardedFor: string) {
  class ForwardedWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers: { 'x-forwarded-for': forwardedFor } });
    }
  }
  const client: Client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: ForwardedWebSocket, retryAttempts: 0 });
  try {
    // At once, on one socket, so that the budget's one-second window cannot pass between them.
    return await Promise.all(
      Array.from({ length: READS_PER_SECOND + 1 }, async () => {
        const result = await client
          .iterate({ query: TOP })
          .next()
          .catch((errors: unknown) => ({ value: errors }));
        return JSON.stringify(result.value);
      }),
    );
  } finally {
    await client.dispose();
  }
}

const limited = (answers: string[]) => answers.filter((answer) => answer.includes('RATE_LIMITED')).length;

describe('read budgets behind a trusted proxy', () => {
  let t: TestApp;
  beforeAll(async () => {
    // The test's requests come from 127.0.0.1: that is the proxy here.
    t = await startTestApp({ rateLimits: { readsPerSecond: READS_PER_SECOND, submissionsPerSecond: 0 }, http: { trustedProxies: ['127.0.0.1', '::1'] } });
  });

  it('gives every forwarded client its own budget over POST, GET, server-sent events and graphql-ws', { timeout: 30_000 }, async () => {
    // Six players through the proxy, each within its budget: nobody is limited.
    const players = Array.from({ length: 6 }, (_, i) => `198.51.100.${i + 1}`);
    const answers = await Promise.all(
      players.map(async (player, i) => {
        const asked = [];
        for (let n = 0; n < READS_PER_SECOND; n++) {
          const via = (i + n) % 3;
          asked.push(via === 0 ? await post(t, `6.6.6.6, ${player}`) : via === 1 ? await get(t, `for=${player}`) : await sse(t, player));
        }
        return asked;
      }),
    );
    expect(limited(answers.flat())).toBe(0);
    expect(answers.flat().every((answer) => answer.includes('size'))).toBe(true);
    // One player over budget is limited, whatever address they put left of theirs (sent at once,
    // so that the budget's one-second window cannot pass between them).
    const greedy = '198.51.100.99';
    const burst = await Promise.all(
      Array.from({ length: READS_PER_SECOND + 2 }, (_, i) => (i % 2 ? post(t, `6.6.6.${i}, ${greedy}`) : get(t, `for=6.6.6.${i}, for=${greedy}`))),
    );
    expect(limited(burst)).toBe(2);
    // graphql-ws: the socket's handshake names the client for every operation on it.
    const socket = await overWebSocket(t, '203.0.113.50');
    expect(socket.filter((answer) => answer.includes('"size"')).length).toBe(READS_PER_SECOND);
    expect(limited(socket)).toBe(1);
  });
});

describe('read budgets from an untrusted peer', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ rateLimits: { readsPerSecond: READS_PER_SECOND, submissionsPerSecond: 0 }, http: { trustedProxies: ['10.0.0.0/8'] } });
  });

  it('ignores X-Forwarded-For and Forwarded: made-up addresses share the peer budget', async () => {
    // At once, so that the budget's one-second window cannot pass between them.
    const answers = await Promise.all(
      Array.from({ length: READS_PER_SECOND + 2 }, (_, i) => (i % 2 ? post(t, `198.51.100.${i}`) : get(t, `for=198.51.100.${i}`))),
    );
    expect(limited(answers)).toBe(2);
  });
});
