import { createClient as createSseClient } from 'graphql-sse';
import { type Client as WsClient, createClient as createWsClient } from 'graphql-ws';
import { WebSocket } from 'ws';
import type { GraphQLResponse } from './test-app.js';

/**
 * Every way a client reaches the service's GraphQL, each behind one interface, so that one suite
 * body runs over all of them (graphql-ws's tests/utils/tservers.ts pattern): the fast POST path
 * (src/http/fast-graphql.ts), POST bodies the fast path leaves to Yoga's own pipeline, GET,
 * server-sent events (Yoga's, through the graphql-sse client and as a plain GET) and graphql-ws.
 */

/** One operation as a client sends it: its text, or (`documentId`) a registered document's id. */
export interface Payload {
  query?: string;
  /** A registered document (client/persisted-documents.json), sent as each transport names one. */
  documentId?: string;
  variables?: Record<string, unknown>;
  operationName?: string;
}

/** What one transport answered: the GraphQL result, and for plain HTTP answers their status. */
export interface Answered extends GraphQLResponse {
  /** The HTTP status, for transports whose status follows the result (not event streams, not sockets). */
  status?: number;
  /** Access-Control-Allow-Origin, for HTTP answers (every request says it comes from TEST_ORIGIN). */
  allowOrigin?: string | null;
}

export interface Transport {
  readonly name: string;
  /** Whether it carries mutations (GET may not change anything) and subscriptions. */
  readonly carries: { mutation: boolean; subscription: boolean };
  /** One query or mutation: its answer, a refusal included (thrown GraphQL errors become the answer's errors). */
  execute(payload: Payload, key?: string): Promise<Answered>;
  /** A subscription's results, in order; `return()` ends it. Only where `carries.subscription`. */
  subscribe(payload: Payload, key?: string): AsyncIterableIterator<GraphQLResponse>;
  /** A request body (or WebSocket message) of `bytes` bytes holding `payload`: what the transport does with one too large. */
  oversized?(bytes: number): Promise<{ status?: number; closeCode?: number; answer?: GraphQLResponse }>;
  /** Closes what it opened (its socket). */
  close(): Promise<void>;
}

export type TransportFactory = (url: string) => Transport;

const bearer = (key?: string): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {});

/** The Origin every HTTP request carries, so that the CORS answer is compared too. */
export const TEST_ORIGIN = 'https://game.example';

/** What a client's HTTP request asks for, as Apollo Client, urql and the typed client ask it. */
const REGULAR_ACCEPT = 'application/graphql-response+json, application/json';

/** The parameters of a POST body or a GET's search: a registered document by `documentId`, as the service takes it over HTTP. */
function httpParams(payload: Payload): Record<string, unknown> {
  const { query, documentId, variables, operationName } = payload;
  return { ...(documentId ? { documentId } : { query }), variables, operationName };
}

/** A graphql-ws or server-sent events payload: a registered document as the APQ extension with an empty query (what the typed client sends). */
function streamParams(payload: Payload): { query: string; variables?: Record<string, unknown>; operationName?: string; extensions?: Record<string, unknown> } {
  const { query, documentId, variables, operationName } = payload;
  return {
    query: documentId ? '' : query!,
    ...(variables ? { variables } : {}),
    ...(operationName ? { operationName } : {}),
    ...(documentId ? { extensions: { persistedQuery: { version: 1, sha256Hash: documentId } } } : {}),
  };
}

async function jsonAnswer(response: Response): Promise<Answered> {
  const text = await response.text();
  let parsed: GraphQLResponse;
  try {
    parsed = JSON.parse(text) as GraphQLResponse;
  } catch {
    throw new Error(`${response.status}: not JSON: ${text.slice(0, 300)}`);
  }
  return { ...parsed, status: response.status, allowOrigin: response.headers.get('access-control-allow-origin') };
}

/** A POST of `body` with `contentType`; `batched`: the payload alone in a JSON array, its one answer taken out. */
function httpPost(name: string, contentType: string, encode: (params: Record<string, unknown>) => string, batched = false): TransportFactory {
  return (url) => {
    const post = (body: string, key?: string) =>
      fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': contentType, accept: REGULAR_ACCEPT, origin: TEST_ORIGIN, ...bearer(key) }, body });
    return {
      name,
      carries: { mutation: true, subscription: false },
      async execute(payload, key) {
        const params = httpParams(payload);
        const response = await post(batched ? JSON.stringify([params]) : encode(params), key);
        if (!batched) return jsonAnswer(response);
        // A batch's answer is a list; a refusal of the whole request (Yoga's 4xx) is one result.
        const answered = (await response.json()) as GraphQLResponse | GraphQLResponse[];
        return { ...(Array.isArray(answered) ? answered[0]! : answered), allowOrigin: response.headers.get('access-control-allow-origin') };
      },
      subscribe() {
        throw new Error(`${name} carries no subscriptions`);
      },
      async oversized(bytes) {
        const padding = 'x'.repeat(bytes);
        const body = encode({ query: '{ __typename }', variables: { padding } });
        const response = await post(body);
        return { status: response.status, answer: (await response.json()) as GraphQLResponse };
      },
      close: async () => undefined,
    };
  };
}

/** GET with the parameters in the URL, answered in JSON. */
const httpGet: TransportFactory = (url) => ({
  name: 'GET',
  carries: { mutation: false, subscription: false },
  async execute(payload, key) {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(httpParams(payload))) {
      if (value !== undefined) search.set(name, typeof value === 'string' ? value : JSON.stringify(value));
    }
    return jsonAnswer(await fetch(`${url}/graphql?${search}`, { headers: { accept: REGULAR_ACCEPT, origin: TEST_ORIGIN, ...bearer(key) } }));
  },
  subscribe() {
    throw new Error('GET carries no subscriptions');
  },
  close: async () => undefined,
});

/** The `next` events of a server-sent event stream, as they come, until `complete` or the stream's end. */
async function* eventsOf(response: Response): AsyncGenerator<GraphQLResponse> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const lines = event.split('\n');
        const type = lines
          .find((line) => line.startsWith('event:'))
          ?.slice(6)
          .trim();
        const data = lines.find((line) => line.startsWith('data:'))?.slice(5);
        if (type === 'complete') return;
        if (type === 'next' && data !== undefined) yield JSON.parse(data) as GraphQLResponse;
      }
      const chunk = await reader.read();
      if (chunk.done) return;
      buffer += decoder.decode(chunk.value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * Yoga's server-sent events asked for by a plain GET (`Accept: text/event-stream`), as a browser's
 * EventSource asks: queries and subscriptions, never mutations (a GET).
 */
const sseGet: TransportFactory = (url) => {
  const open = (payload: Payload, key: string | undefined, signal?: AbortSignal) => {
    const search = new URLSearchParams();
    const params = streamParams(payload);
    if (payload.documentId) search.set('documentId', payload.documentId);
    else search.set('query', params.query);
    if (params.variables) search.set('variables', JSON.stringify(params.variables));
    if (params.operationName) search.set('operationName', params.operationName);
    return fetch(`${url}/graphql?${search}`, { headers: { accept: 'text/event-stream', origin: TEST_ORIGIN, ...bearer(key) }, signal: signal ?? null });
  };
  return {
    name: 'SSE GET',
    carries: { mutation: false, subscription: true },
    async execute(payload, key) {
      const response = await open(payload, key);
      // A refusal before the stream (Yoga answers some in JSON whatever was asked).
      if (!response.headers.get('content-type')?.startsWith('text/event-stream')) return jsonAnswer(response);
      for await (const event of eventsOf(response)) return event;
      throw new Error('SSE GET: the stream ended without an event');
    },
    subscribe(payload, key) {
      const abort = new AbortController();
      let events: AsyncGenerator<GraphQLResponse> | undefined;
      return {
        [Symbol.asyncIterator]() {
          return this;
        },
        async next() {
          events ??= eventsOf(await open(payload, key, abort.signal));
          return events.next();
        },
        async return() {
          abort.abort();
          await events?.return(undefined).catch(() => undefined);
          return { done: true, value: undefined };
        },
      };
    },
    close: async () => undefined,
  };
};

/**
 * The graphql-sse client (distinct connections mode, as the typed client subscribes): a POST with
 * `Accept: text/event-stream` per operation, mutations included.
 */
const sseClient: TransportFactory = (url) => {
  const clientFor = (key?: string) => createSseClient({ url: `${url}/graphql`, headers: { origin: TEST_ORIGIN, ...bearer(key) }, retryAttempts: 0 });
  const iterate = (payload: Payload, key?: string) => clientFor(key).iterate(streamParams(payload)) as AsyncIterableIterator<GraphQLResponse>;
  return {
    name: 'SSE (graphql-sse)',
    carries: { mutation: true, subscription: true },
    execute(payload, key) {
      // A sink rather than iterate(): the stream of a query or mutation ends by itself after its one
      // result, and ending an iterator early aborts its request (an unhandled AbortError).
      return new Promise<Answered>((resolve, reject) => {
        let first: GraphQLResponse | undefined;
        clientFor(key).subscribe(streamParams(payload), {
          next: (result) => void (first ??= result as unknown as GraphQLResponse),
          complete: () => (first ? resolve(first) : reject(new Error('graphql-sse: the stream ended without an event'))),
          error: (error: unknown) => {
            // A refusal before the stream: graphql-sse hands over the response's GraphQL errors.
            if (Array.isArray(error)) return resolve({ errors: error as GraphQLResponse['errors'] });
            // A request error (variables, limits) is answered 400 with the event stream holding it,
            // which graphql-sse reports as a NetworkError with the response: its event is the answer.
            const response = (error as { response?: Response }).response;
            if (!response) return reject(error instanceof Error ? error : new Error(String(error)));
            if (!response.headers.get('content-type')?.startsWith('text/event-stream')) return resolve(jsonAnswer(response));
            void (async () => {
              for await (const event of eventsOf(response)) return resolve({ ...event, status: response.status });
              reject(new Error(`graphql-sse: ${response.status} without an event`));
            })();
          },
        });
      });
    },
    subscribe: iterate,
    async oversized(bytes) {
      const response = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: '{ __typename }', variables: { padding: 'x'.repeat(bytes) } }),
      });
      return { status: response.status, answer: (await response.json()) as GraphQLResponse };
    },
    close: async () => undefined,
  };
};

/** graphql-ws (graphql-transport-ws): one socket per key, as a game client or server keeps one. */
const graphqlWs: TransportFactory = (url) => {
  const sockets = new Map<string, WsClient>();
  const socket = (key?: string) => {
    let client = sockets.get(key ?? '');
    if (!client) {
      client = createWsClient({
        url: `${url.replace('http', 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        connectionParams: key ? { authorization: `Bearer ${key}` } : undefined,
      });
      sockets.set(key ?? '', client);
    }
    return client;
  };
  const iterate = (payload: Payload, key?: string) => socket(key).iterate(streamParams(payload)) as AsyncIterableIterator<GraphQLResponse>;
  return {
    name: 'graphql-ws',
    carries: { mutation: true, subscription: true },
    async execute(payload, key) {
      const results = iterate(payload, key);
      try {
        const first = await results.next();
        if (first.done) throw new Error('graphql-ws: completed without a result');
        return first.value;
      } catch (error) {
        // An `error` message: the operation's GraphQL errors, refused before it ran.
        if (Array.isArray(error)) return { errors: error as GraphQLResponse['errors'] };
        throw error;
      } finally {
        await results.return?.();
      }
    },
    subscribe: iterate,
    async oversized(bytes) {
      const raw = new WebSocket(`${url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
      await new Promise((resolve, reject) => raw.once('open', resolve).once('error', reject));
      raw.send(JSON.stringify({ type: 'connection_init' }));
      const closed = new Promise<number>((resolve) => raw.once('close', (code) => resolve(code)));
      raw.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{ __typename }', variables: { padding: 'x'.repeat(bytes) } } }));
      return { closeCode: await closed };
    },
    async close() {
      for (const client of sockets.values()) await client.dispose();
      sockets.clear();
    },
  };
};

/**
 * A form body as Yoga reads one: each parameter a field, objects as JSON. Yoga's form parser reads
 * query, variables, operationName and extensions only, so a registered document goes as the APQ
 * extension (a `documentId` field is dropped: see the matrix's known differences).
 */
const formEncoded = (params: Record<string, unknown>) => {
  const form = new URLSearchParams();
  const { documentId, ...rest } = params;
  const fields = documentId ? { ...rest, extensions: { persistedQuery: { version: 1, sha256Hash: documentId } } } : params;
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined) form.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return form.toString();
};

/**
 * Every transport, the fast path first (the others are compared with it). Which POST bodies go
 * to Yoga's own pipeline: src/http/fast-graphql.ts takes `application/json` only (single
 * operations and batches), so `application/graphql+json` (which Yoga's JSON parser takes) and a
 * form body reach Yoga.
 */
export const TRANSPORTS: readonly TransportFactory[] = [
  httpPost('fast POST', 'application/json', JSON.stringify),
  httpPost('fast POST, batched', 'application/json', JSON.stringify, true),
  httpPost('Yoga POST (application/graphql+json)', 'application/graphql+json', JSON.stringify),
  httpPost('Yoga POST, batched', 'application/graphql+json', JSON.stringify, true),
  httpPost('Yoga POST (form)', 'application/x-www-form-urlencoded', formEncoded),
  httpGet,
  sseClient,
  sseGet,
  graphqlWs,
];
