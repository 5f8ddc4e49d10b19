/**
 * Lean GraphQL clients for the load generator, which shares two cores with everything it
 * measures: HTTP through an undici Pool (keep-alive, one request per connection at a time), and
 * the graphql-transport-ws protocol over `ws` with many operations in flight per socket. Both
 * check each answer for errors without parsing it whole where they can.
 */
import { Pool } from 'undici';
import WebSocket from 'ws';

/** A GraphQL request body: the query is serialised once, the variables per request. */
export function graphqlBody(query: string): (variables?: Record<string, unknown>) => string {
  const head = `{"query":${JSON.stringify(query)}`;
  return (variables) => (variables ? `${head},"variables":${JSON.stringify(variables)}}` : `${head}}`);
}

export interface HttpGraphql {
  /** POSTs a body built by {@link graphqlBody}; answers the response text; throws on a non-200 or an `errors` entry. */
  post(body: string): Promise<string>;
  close(): Promise<void>;
}

export interface HttpClientOptions {
  /** The address it connects from: another loopback address (e.g. 127.0.0.2) is another client to the service's per-client limits. Default: the system's choice. */
  localAddress?: string;
  /** Keep connections open between requests. False: a new connection for each request, as a client that arrives, asks and leaves. Default true. */
  keepAlive?: boolean;
}

/** The headers every bench HTTP client sends: the Accept header the client libraries send (Apollo Client, urql and the typed client list application/graphql-response+json first). */
export const GRAPHQL_HEADERS = { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' };

/** An undici Pool of up to `connections` connections to `origin`, one request on each at a time. */
export function graphqlPool(origin: string, connections: number, { localAddress, keepAlive = true }: HttpClientOptions = {}): Pool {
  // pipelining 0 is undici's way of asking for a connection per request.
  return new Pool(origin, { connections, pipelining: keepAlive ? 1 : 0, keepAliveTimeout: 60_000, ...(localAddress ? { localAddress } : {}) });
}

/** An HTTP GraphQL client of `connections` keep-alive connections to `url` (its origin and path), sending {@link GRAPHQL_HEADERS}. */
export function httpGraphql(url: string, connections: number, headers: Record<string, string> = {}, options: HttpClientOptions = {}): HttpGraphql {
  const target = new URL(url);
  const pool = graphqlPool(target.origin, connections, options);
  const allHeaders = { ...GRAPHQL_HEADERS, ...headers };
  return {
    async post(body) {
      const response = await pool.request({ path: target.pathname, method: 'POST', headers: allHeaders, body });
      const text = await response.body.text();
      if (response.statusCode !== 200 || text.includes('"errors":')) {
        throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 300)}`);
      }
      return text;
    },
    close: () => pool.close(),
  };
}

export interface WsGraphql {
  /** Runs one query or mutation on socket `socket % sockets`; answers the payload; throws on errors. */
  run(socket: number, query: string, variables?: Record<string, unknown>): Promise<unknown>;
  readonly sockets: number;
  close(): Promise<void>;
}

interface Pending {
  resolve(payload: unknown): void;
  reject(error: Error): void;
}

type Message = { type: string; id?: string; payload?: { errors?: unknown[] } | unknown[] };

async function openSocket(url: string, connectionParams: Record<string, unknown>) {
  const socket = new WebSocket(url, 'graphql-transport-ws', { perMessageDeflate: false });
  const pending = new Map<string, Pending>();
  let nextId = 0;
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: connectionParams })));
    socket.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString()) as Message;
      switch (message.type) {
        case 'connection_ack':
          socket.off('error', reject);
          resolve();
          return;
        case 'next': {
          const waiting = pending.get(message.id!);
          if (!waiting) return;
          pending.delete(message.id!);
          const payload = message.payload as { errors?: unknown[] };
          if (payload.errors?.length) waiting.reject(new Error(`graphql-ws: ${JSON.stringify(payload.errors).slice(0, 300)}`));
          else waiting.resolve(payload);
          return;
        }
        case 'error': {
          const waiting = pending.get(message.id!);
          pending.delete(message.id!);
          waiting?.reject(new Error(`graphql-ws error: ${JSON.stringify(message.payload).slice(0, 300)}`));
          return;
        }
        case 'ping':
          socket.send('{"type":"pong"}');
          return;
        default:
          // complete (the answer came with next), pong.
          return;
      }
    });
    socket.once('close', (code, reason) => {
      const error = new Error(`socket closed: ${code} ${reason.toString()}`);
      reject(error);
      for (const waiting of pending.values()) waiting.reject(error);
      pending.clear();
    });
  });
  return {
    run(query: string, variables?: Record<string, unknown>): Promise<unknown> {
      const id = String(++nextId);
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        socket.send(
          `{"id":"${id}","type":"subscribe","payload":{"query":${JSON.stringify(query)}${variables ? `,"variables":${JSON.stringify(variables)}` : ''}}}`,
        );
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (socket.readyState === WebSocket.CLOSED) return resolve();
        socket.once('close', () => resolve());
        socket.close(1000);
      }),
  };
}

/** `sockets` graphql-transport-ws connections to `url` (ws://…/graphql), each acknowledged before this answers. */
export async function wsGraphql(url: string, sockets: number, connectionParams: Record<string, unknown> = {}): Promise<WsGraphql> {
  const opened: Awaited<ReturnType<typeof openSocket>>[] = [];
  // A few at a time: a burst of handshakes is not what is measured.
  for (let i = 0; i < sockets; i += 25) {
    opened.push(...(await Promise.all(Array.from({ length: Math.min(25, sockets - i) }, () => openSocket(url, connectionParams)))));
  }
  return {
    sockets,
    run: (socket, query, variables) => opened[socket % sockets]!.run(query, variables),
    close: async () => {
      await Promise.all(opened.map((socket) => socket.close()));
    },
  };
}
