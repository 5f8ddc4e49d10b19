import type { IncomingMessage, Server } from 'node:http';
import type { DocumentNode, ExecutionArgs, GraphQLError, GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import type { YogaServerInstance } from 'graphql-yoga';
import { WebSocketServer } from 'ws';
import { type Context, type Services, createContext } from './resolvers/context.js';

/** What Yoga's context factory receives on a WebSocket: the request context is made here, not from a fetch Request. */
export interface SocketInitialContext {
  socketContext: Context;
}

type Run = (args: ExecutionArgs) => unknown;

/**
 * graphql-ws (the graphql-transport-ws protocol) on `path` of an HTTP server, running every
 * operation through Yoga's envelop pipeline so that both transports share the schema, context,
 * plugins and error masking. Answers a function that closes every client with 1001 and the server.
 */
export function attachGraphqlWs(
  server: Server,
  yoga: YogaServerInstance<Record<string, unknown>, Record<string, unknown>>,
  services: Services,
  path = '/graphql',
): () => Promise<void> {
  const wsServer = new WebSocketServer({ server, path });
  const handle = useServer<Record<string, unknown> | undefined, { request: IncomingMessage }>(
    {
      // The envelop pipeline's own execute and subscribe travel in rootValue (see onSubscribe).
      execute: (args) => (args.rootValue as { execute: Run }).execute(args) as never,
      subscribe: (args) => (args.rootValue as { subscribe: Run }).subscribe(args) as never,
      onSubscribe: async (ctx, _id, params) => {
        const authorization = ctx.connectionParams?.authorization;
        const socketContext = await createContext(services, {
          authorization: typeof authorization === 'string' ? authorization : ctx.extra.request.headers.authorization,
          client: ctx.extra.request.socket.remoteAddress,
        });
        const enveloped = yoga.getEnveloped<SocketInitialContext>({ socketContext });
        const schema = enveloped.schema as GraphQLSchema;
        const document = enveloped.parse(params.query) as DocumentNode;
        const errors = enveloped.validate(schema, document) as readonly GraphQLError[];
        if (errors.length > 0) return [...errors];
        return {
          schema,
          operationName: params.operationName,
          document,
          variableValues: params.variables ?? null,
          contextValue: (await enveloped.contextFactory()),
          rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
        };
      },
    },
    wsServer,
  );
  return async () => {
    await handle.dispose();
  };
}
