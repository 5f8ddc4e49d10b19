import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { peerAddressOf } from './client-address.js';

export interface ConnectionLimitsOptions {
  /** Connections one peer address may hold open at once (RequestLimits.maxConnectionsPerClient). */
  maxPerClient: number;
  /** Peers never counted against maxPerClient: the trusted proxies, each the peer of many clients. */
  isTrustedProxy: (address: string) => boolean;
  /** How long a new connection may go without a request (RequestLimits.requestTimeoutMs). */
  firstRequestMs: number;
  /** How long a connection may go without a request after its last answer (RequestLimits.keepAliveTimeoutMs). */
  keepAliveTimeoutMs: number;
  /** How often idle connections are looked for. */
  checkEveryMs: number;
}

/** What is known of one open HTTP connection. */
interface Connection {
  /** Requests whose answer has not closed yet (more than one when a client pipelines). */
  requests: number;
  /** performance.now() when it opened, or when its last answer closed. */
  idleSince: number;
  /** Whether it has had an answer: then the keep-alive timeout applies, not the first request's. */
  answered: boolean;
}

/**
 * What one peer address may hold of the server's connections, and how long any connection may go
 * without a request.
 *
 * - A peer past `maxPerClient` open connections (HTTP and WebSocket) has its new ones closed as
 *   they come, so that one address cannot take the process's MAX_CONNECTIONS from everyone (as
 *   server.maxConnections does, without a word: nothing of the request has been read). The peer is
 *   the socket's, since no header has arrived when a connection opens; behind a proxy that is the
 *   proxy, so trusted proxies are not counted (the proxy is the one to cap its clients).
 * - A connection with no request in flight is closed `firstRequestMs` after it opened, or
 *   `keepAliveTimeoutMs` (and Node's 1 s of slack) after its last answer. Node does both by itself
 *   for a client that sends nothing, but its keep-alive timer is a socket timeout that any byte
 *   restarts, and blank lines between requests start no request: a client sending "\r\n" every few
 *   seconds would hold its connection for ever. Here only a request counts.
 *
 * An upgraded connection (a WebSocket) leaves the idle rule, as graphql-ws and its pings look after
 * it, and stays counted until it closes. The idle sweep stops when the server closes.
 */
export function limitConnections(
  server: Server,
  { maxPerClient, isTrustedProxy, firstRequestMs, keepAliveTimeoutMs, checkEveryMs }: ConnectionLimitsOptions,
): void {
  const openBy = new Map<string, number>();
  const idle = new Map<Socket, Connection>();

  server.on('connection', (socket: Socket) => {
    const peer = peerAddressOf(socket);
    if (!isTrustedProxy(peer)) {
      const open = openBy.get(peer) ?? 0;
      if (open >= maxPerClient) return void socket.destroy();
      openBy.set(peer, open + 1);
      socket.once('close', () => {
        const left = openBy.get(peer)! - 1;
        if (left === 0) openBy.delete(peer);
        else openBy.set(peer, left);
      });
    }
    idle.set(socket, { requests: 0, idleSince: performance.now(), answered: false });
    socket.once('close', () => idle.delete(socket));
  });

  // First of the request listeners, so that an answer the service ends at once is still seen closing.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const connection = idle.get(req.socket);
    if (connection === undefined) return;
    connection.requests += 1;
    res.once('close', () => {
      connection.requests -= 1;
      if (connection.requests > 0) return;
      connection.idleSince = performance.now();
      connection.answered = true;
    });
  });
  server.on('upgrade', (req: IncomingMessage) => idle.delete(req.socket));

  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [socket, connection] of idle) {
      if (connection.requests > 0) continue;
      const allowedMs = connection.answered ? keepAliveTimeoutMs + NODE_KEEP_ALIVE_SLACK_MS : firstRequestMs + checkEveryMs;
      if (now - connection.idleSince > allowedMs) socket.destroy();
    }
  }, checkEveryMs);
  sweep.unref();
  server.once('close', () => clearInterval(sweep));
}

/**
 * Node keeps an idle connection this much past keepAliveTimeout, so that a client that reuses it
 * just before the announced `Keep-Alive: timeout=` does not meet it closing; the sweep does too.
 * Before the first request, Node answers 408 at the timeout; the sweep, a check later, catches
 * only what Node did not.
 */
const NODE_KEEP_ALIVE_SLACK_MS = 1_000;
