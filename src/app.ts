import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GraphQLError } from 'graphql';
import { createYoga, maskError } from 'graphql-yoga';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createKeyring } from './auth/keys.js';
import type { Database } from './db/client.js';
import { createRankingIndex } from './ranking/index.js';
import { createBoardDirectory } from './resolvers/board-directory.js';
import { type Services, createContext } from './resolvers/context.js';
import { createCursorCodec } from './resolvers/cursor.js';
import { unavailable } from './resolvers/errors.js';
import { isStoreUnavailable } from './resolvers/store-errors.js';
import { type SocketInitialContext, attachGraphqlWs } from './live-socket.js';
import { schema } from './schema/index.js';

export interface AppDeps {
  database: Database;
  redis: Redis;
  log: Logger;
  /** The admin key. Default: none, so admin operations are refused. */
  adminKey?: string | undefined;
  /** Game-server keys. Default: none. */
  serverKeys?: readonly string[];
  /**
   * The key page cursors are signed with; every process of a deployment needs the same one.
   * Default: derived from the admin key, which those processes share already.
   */
  cursorSecret?: string | undefined;
  /** Where to listen. Default 127.0.0.1. */
  host?: string;
  /** Default 4000; 0 picks a free port. */
  port?: number;
  /** How long stop() waits for requests in flight before closing them. Default 10,000 ms. */
  shutdownTimeoutMs?: number;
  /** The clock. Default: the system's. */
  now?: () => Date;
}

export interface App {
  /** Listens; answers the port it listens on. */
  start(): Promise<{ port: number; url: string }>;
  /** Stops in order: WebSocket clients (1001), then the HTTP server once in-flight requests finish. Stores are the caller's to close. */
  stop(): Promise<void>;
  services: Services;
}

/** Builds the service around clients it is given. Nothing listens or connects until start(). */
export function buildApp(deps: AppDeps): App {
  const log = deps.log;
  const services: Services = {
    database: deps.database,
    index: createRankingIndex(deps.redis),
    boards: createBoardDirectory(deps.database.db),
    keyring: createKeyring({ adminKey: deps.adminKey, serverKeys: deps.serverKeys ?? [] }),
    cursors: createCursorCodec(deps.cursorSecret ?? `cursor:${deps.adminKey ?? 'leaderboard'}`),
    log,
    now: deps.now ?? (() => new Date()),
  };

  const yoga = createYoga<{ req: IncomingMessage; res: ServerResponse }>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    context: (initial) =>
      'socketContext' in initial
        ? (initial as unknown as SocketInitialContext).socketContext
        : createContext(services, initial.request.headers.get('authorization'), initial.request.signal),
    logging: {
      debug: (...args) => log.debug(args),
      info: (...args) => log.info(args),
      warn: (...args) => log.warn(args),
      error: (...args) => log.error(args),
    },
    maskedErrors: {
      maskError(error, message, isDev) {
        const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
        // A store that does not answer is the client's business (retry later); any other
        // unexpected error stays masked and is logged with its stack for us.
        if (isStoreUnavailable(original)) return unavailable();
        if (!(original instanceof GraphQLError)) log.error({ err: original }, 'unexpected error');
        return maskError(error, message, isDev);
      },
    },
  });

  const server: Server = createServer((req, res) => {
    if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    void yoga(req, res);
  });

  const closeSockets = attachGraphqlWs(server, yoga as never, services);

  return {
    services,
    async start() {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(deps.port ?? 4000, deps.host ?? '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
      const { port } = server.address() as AddressInfo;
      const url = `http://${deps.host ?? '127.0.0.1'}:${port}`;
      log.info({ url }, 'listening');
      return { port, url };
    },
    async stop() {
      // Closes every WebSocket client with 1001 (going away), then the WebSocket server.
      await closeSockets();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timeout = setTimeout(() => server.closeAllConnections(), deps.shutdownTimeoutMs ?? 10_000);
      await closed;
      clearTimeout(timeout);
      log.info('stopped');
    },
  };
}
