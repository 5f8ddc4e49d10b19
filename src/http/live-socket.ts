import type { IncomingMessage, Server } from 'node:http';
import {
  type ExecutionArgs,
  type ExecutionResult,
  type FormattedExecutionResult,
  type GraphQLError,
  type GraphQLFormattedError,
  type GraphQLSchema,
  OperationTypeNode,
  getOperationAST,
} from 'graphql';
import { CloseCode, type ServerOptions, handleProtocols, makeServer } from 'graphql-ws';
import { type YogaServerInstance, createGraphQLError } from 'graphql-yoga';
import { WebSocket, WebSocketServer } from 'ws';
import type { PreparedContext } from './fast-graphql.js';
import type { PersistedDocuments } from './persisted-documents.js';
import { MAX_BODY_BYTES, type RequestLimits } from './request-limits.js';
import { createValidationCache } from './validation-cache.js';
import { paramsDepthProblem } from './json-depth.js';
import type { ClientAddressOf } from './client-address.js';
import type { Logger } from 'pino';
import type { Context, RequestFacts } from '../resolvers/context.js';
import { clientError } from '../errors.js';

type Run = (args: ExecutionArgs) => unknown;

/** What the graphql-ws transport takes of the service: how an operation's context is made, and where a socket's trouble is logged. */
export interface LiveSocketDeps {
  /** The request context of one operation (schema/context.ts). */
  contextOf(facts: RequestFacts): Promise<Context>;
  log: Pick<Logger, 'error' | 'warn'>;
}

/** What one socket has running: subscriptions and other operations, by operation id, for its caps. */
interface Running {
  subscriptions: number;
  operations: number;
  kinds: Map<string, 'subscriptions' | 'operations'>;
}
type Extra = { request: IncomingMessage; running: Running };

/** How often an idle client is pinged, and how long its pong may take before it is dropped (graphql-ws's useServer default). */
const KEEP_ALIVE_MS = 12_000;

/**
 * Bytes a socket may hold unsent before a send waits for the kernel to take them. Below it a send
 * returns at once, so that an operation's `next` and `complete` (and other operations' answers
 * ready in the same tick) leave in one write; above it a send waits, so a slow topChanged viewer
 * keeps only its latest view (see pubsub/top-feed.ts) instead of a growing buffer here.
 */
const SEND_HIGH_WATER_BYTES = 64 * 1024;

/**
 * graphql-ws (the graphql-transport-ws protocol) on `path` of an HTTP server, running every
 * operation through Yoga's envelop pipeline so that both transports share the schema, context,
 * plugins and error masking. Answers a function that closes every client with 1001 and the server.
 *
 * The glue between `ws` and graphql-ws's makeServer is graphql-ws's own useServer (use/ws) but for
 * sends: useServer waits for every message's write callback, so each answer costs two socket
 * writes (`next`, then `complete`); here the socket is corked until the end of the tick and a send
 * waits only past SEND_HIGH_WATER_BYTES. Writes are the largest item in the service's profile.
 */
export function attachGraphqlWs(
  server: Server,
  yoga: YogaServerInstance<Record<string, unknown>, Record<string, unknown>>,
  deps: LiveSocketDeps,
  {
    clientOf,
    documents,
    path = '/graphql',
    ...limits
  }: Required<Pick<RequestLimits, 'subscriptionsPerSocket' | 'operationsPerSocket' | 'maxSocketBufferedBytes'>> & {
    /** Who a socket's operations count against (see http/client-address.ts). */
    clientOf: ClientAddressOf;
    /** Registered documents, run by id: `documentId` or the APQ extension in the subscribe payload, with an empty `query`. */
    documents: PersistedDocuments;
    /** Default /graphql. */
    path?: string;
  },
): () => Promise<void> {
  const valid = createValidationCache();
  const options: ServerOptions<Record<string, unknown> | undefined, Extra> = {
    // The envelop pipeline's own execute and subscribe travel in rootValue (see onSubscribe).
    execute: (args) => (args.rootValue as { execute: Run }).execute(args) as never,
    subscribe: (args) => (args.rootValue as { subscribe: Run }).subscribe(args) as never,
    // Errors as HTTP clients see them (see withoutHttp): a refused document's, and a result's.
    onError: (_ctx, _id, _payload, errors) => errors.map(withoutHttp),
    onNext: (_ctx, _id, _payload, _args, result) => (result.errors?.some(hasHttp) ? resultWithoutHttp(result) : undefined),
    onSubscribe: (ctx, id, params) => {
      // Variables nested too deep are refused before anything walks them (see json-depth.ts).
      const tooDeep = paramsDepthProblem(params);
      if (tooDeep !== undefined) return [clientError('BAD_USER_INPUT', tooDeep)];
      const authorization = ctx.connectionParams?.authorization;
      // The request context is made here, not from a fetch Request, and only for a valid operation.
      const prepared = () =>
        deps.contextOf({
          authorization: typeof authorization === 'string' ? authorization : ctx.extra.request.headers.authorization,
          client: clientOf(ctx.extra.request),
        });
      // The upgrade request too, for whoever charges work to its client (see validation-budget.ts).
      const enveloped = yoga.getEnveloped<PreparedContext & { req: IncomingMessage }>({ prepared, req: ctx.extra.request });
      const schema = enveloped.schema as GraphQLSchema;
      // The registered document a payload names, or its own query (refused where only registered ones run).
      const query = documents.resolve(params);
      if (query !== undefined && typeof query !== 'string') return [query];
      // A syntax or validation error is the client's: an error message for the operation, not a closed socket.
      const checked = valid.check(enveloped, query ?? params.query);
      if (checked.errors) return [...checked.errors];
      const { document } = checked;
      // Each socket's share of the process: open subscriptions, and other operations running or
      // waiting to be sent; past either, the operation is refused and the socket kept.
      const operation = getOperationAST(document, params.operationName);
      // graphql-ws would throw "Unable to identify operation" without a code: the client's mistake, answered as Yoga answers it over HTTP.
      if (!operation) return [createGraphQLError('Could not determine what operation to execute.', { extensions: { code: 'OPERATION_RESOLUTION_FAILURE' } })];
      const kind = operation.operation === OperationTypeNode.SUBSCRIPTION ? 'subscriptions' : 'operations';
      const running = ctx.extra.running;
      const cap = kind === 'subscriptions' ? limits.subscriptionsPerSocket : limits.operationsPerSocket;
      if (running[kind] >= cap) {
        return [
          clientError(
            'RATE_LIMITED',
            kind === 'subscriptions'
              ? `This socket has ${cap} subscriptions open, the most allowed; close one first.`
              : `This socket has ${cap} operations running, the most allowed; wait for their answers.`,
          ),
        ];
      }
      running[kind] += 1;
      running.kinds.set(id, kind);
      return Promise.resolve(enveloped.contextFactory()).then((contextValue) => ({
        schema,
        operationName: params.operationName,
        document,
        variableValues: params.variables ?? null,
        contextValue,
        rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
      }));
    },
    // Every operation that onSubscribe let run ends here, however it ends (answered, completed by
    // the client, failed, or its socket closed).
    onComplete: (ctx, id) => {
      const kind = ctx.extra.running.kinds.get(id);
      if (kind === undefined) return;
      ctx.extra.running.kinds.delete(id);
      ctx.extra.running[kind] -= 1;
    },
  };
  const graphqlWs = makeServer(options);
  const wsServer = new WebSocketServer({ server, path, handleProtocols, maxPayload: MAX_BODY_BYTES });
  // ws re-emits the HTTP server's errors (a port in use) here; the server's own listener reports them.
  wsServer.on('error', () => undefined);

  wsServer.on('connection', (socket, request) => {
    // The upgraded request's TCP socket is the one `ws` writes to.
    const tcp = request.socket;
    let corked = false;
    const uncork = () => {
      corked = false;
      tcp.uncork();
    };
    const fail = (error: unknown) => {
      deps.log.error({ err: error }, 'WebSocket client failed');
      socket.close(CloseCode.InternalServerError, 'Internal server error');
    };
    socket.once('error', fail);
    // The other way out of backpressure (see send): the kernel took everything that was waiting.
    const resume = () => {
      if (socket.isPaused && socket.bufferedAmount < SEND_HIGH_WATER_BYTES) socket.resume();
    };
    tcp.on('drain', resume);
    let pongWait: NodeJS.Timeout | undefined;
    const pinging = setInterval(() => {
      if (socket.readyState !== WebSocket.OPEN) return;
      pongWait = setTimeout(() => socket.terminate(), KEEP_ALIVE_MS);
      socket.once('pong', () => clearTimeout(pongWait));
      socket.ping();
    }, KEEP_ALIVE_MS);
    const closed = graphqlWs.opened(
      {
        protocol: socket.protocol,
        send: (data) => {
          if (socket.readyState !== WebSocket.OPEN) return;
          if (socket.bufferedAmount > limits.maxSocketBufferedBytes) {
            // Its client has not read megabytes of answers: it is not reading, and holds our memory.
            deps.log.warn({ bufferedBytes: socket.bufferedAmount }, 'closing a WebSocket whose client does not read');
            return void socket.terminate();
          }
          if (!corked) {
            corked = true;
            tcp.cork();
            process.nextTick(uncork);
          }
          if (socket.bufferedAmount < SEND_HIGH_WATER_BYTES) return void socket.send(data);
          // Backpressure: no new operations from this client until the answers it has are taken.
          if (!socket.isPaused) socket.pause();
          return new Promise<void>((resolve, reject) =>
            socket.send(data, (error) => {
              // Written to the kernel: read the client's messages again once little is left unsent.
              resume();
              return error ? reject(error) : resolve();
            }),
          );
        },
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) =>
          socket.on('message', (message: Buffer) => {
            handle(String(message)).catch(fail);
          }),
      },
      { request, running: { subscriptions: 0, operations: 0, kinds: new Map() } },
    );
    socket.once('close', (code, reason) => {
      clearTimeout(pongWait);
      clearInterval(pinging);
      tcp.off('drain', resume);
      void closed(code, reason.toString());
    });
  });

  return async () => {
    for (const client of wsServer.clients) client.close(1001, 'Going away');
    wsServer.removeAllListeners('connection');
    await new Promise<void>((resolve, reject) => wsServer.close((error) => (error ? reject(error) : resolve())));
  };
}

const hasHttp = (error: GraphQLError): boolean => error.extensions?.http !== undefined;

/**
 * The error as HTTP clients see it: Yoga's parse, validation and variable errors carry
 * `extensions.http` (the status an HTTP answer takes), which Yoga's HTTP answers leave out of the
 * body; a message on a socket has no status to take, so it leaves it out too.
 */
function resultWithoutHttp({
  data,
  errors,
  extensions,
}: {
  data?: ExecutionResult['data'] | undefined;
  errors?: readonly GraphQLError[] | undefined;
  extensions?: ExecutionResult['extensions'] | undefined;
}): FormattedExecutionResult {
  return { ...(data !== undefined && { data }), errors: (errors ?? []).map(withoutHttp), ...(extensions !== undefined && { extensions }) };
}

function withoutHttp(error: GraphQLError): GraphQLFormattedError {
  const formatted = error.toJSON();
  if (!hasHttp(error)) return formatted;
  const { http: _status, ...extensions } = error.extensions;
  return { ...formatted, extensions };
}
