import type { GraphQLError } from 'graphql';
import { type Plugin, createGraphQLError } from 'graphql-yoga';
import { jsonProblem } from '../model/json-depth.js';

/**
 * The most levels of objects and arrays a request's variables (and extensions) may nest, the
 * variables object itself being the first. The deepest the contract needs is a submitScores
 * batch's metadata: variables, the list, an input, then the metadata's own levels (at most
 * MAX_METADATA_DEPTH, 32), so 35; 64 leaves room for any client's way of sending them. It follows
 * from the contract's shapes, not from a deployment's load, so it is no setting.
 * @default 64
 */
export const MAX_VARIABLES_DEPTH = 64;

/** The GraphQL parameters a transport receives, as far as this check reads them. */
interface JsonParams {
  variables?: unknown;
  extensions?: unknown;
}

/**
 * What is wrong with a request's variables or extensions, before anything walks them recursively
 * (see model/json-depth.ts): a message for the client, or undefined. Every transport calls it where
 * it first holds the parsed parameters: the fast path (fast-graphql.ts leaves such a request to
 * Yoga), Yoga's onParams (useJsonDepth), and graphql-ws's onSubscribe (live-socket.ts).
 */
export function paramsDepthProblem(params: JsonParams): string | undefined {
  for (const part of ['variables', 'extensions'] as const) {
    const problem = jsonProblem(params[part], MAX_VARIABLES_DEPTH);
    if (problem !== undefined) return `The request's ${part} ${problem}; nothing was run.`;
  }
  return undefined;
}

/** A refusal of the client's parameters: BAD_USER_INPUT, and HTTP 400 as Yoga answers other malformed requests. */
const refusal = (message: string): GraphQLError => createGraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } });

/** Yoga's side (GET, server-sent events, batches, and POST bodies the fast path leaves to Yoga): refuses each too-deep operation before anything else reads it. */
export function useJsonDepth(): Plugin {
  return {
    onParams({ params, setResult }) {
      const problem = paramsDepthProblem(params);
      if (problem !== undefined) setResult({ errors: [refusal(problem)] });
    },
  };
}
