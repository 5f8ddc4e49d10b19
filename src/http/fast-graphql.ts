import type { IncomingMessage, ServerResponse } from 'node:http';
import { type DocumentNode, type ExecutionResult, GraphQLError, type GraphQLSchema, OperationTypeNode, getOperationAST } from 'graphql';
import { type YogaServerInstance, createGraphQLError, processRegularResult } from 'graphql-yoga';
import type { Logger } from 'pino';
import { NOT_CACHEABLE } from './cache-control.js';
import { type CorsOrigins, corsHeaders } from './cors.js';
import type { PersistedDocuments } from './persisted-documents.js';
import { isCachedResult } from './response-cache.js';
import { paramsDepthProblem } from './json-depth.js';
import type { CachedBodies } from './cached-bodies.js';
import { type Checked, createValidationCache } from './validation-cache.js';

/**
 * What Yoga's context factory receives from a transport that builds the request context itself
 * (this fast path, graphql-ws): a function answering the context, called at most once per request.
 */
export interface PreparedContext {
  prepared: () => Promise<object>;
}

export interface FastGraphqlOptions {
  /** The Yoga whose envelop pipeline (schema, plugins, parse and validation caches, masking) runs every operation. */
  yoga: YogaServerInstance<Record<string, unknown>, Record<string, unknown>>;
  /** The path served. Default '/graphql'. */
  endpoint?: string;
  /** Operations one batched request may carry; 0 refuses batches (Yoga answers them). Default 0. */
  batchingLimit?: number;
  /** The request's context, built once for every operation of the request. */
  context: (req: IncomingMessage) => Promise<object>;
  /** Yoga's maskedErrors.maskError, for errors thrown outside execution (the context factory). */
  maskError: (error: unknown, message: string) => Error;
  /** The CORS policy, the same as Yoga's (see cors.ts). Default '*': any origin, without credentials. */
  corsOrigins?: CorsOrigins;
  /** Registered documents, run by id (see persisted-documents.ts). Default: none, so only queries sent as text are taken here. */
  documents?: PersistedDocuments;
  /** Cached answers handed out before the pipeline (see cached-bodies.ts). Default: none, so every operation runs the pipeline. */
  cachedBodies?: CachedBodies;
  log: Logger;
}

/** The GraphQL parameters of one operation, as Yoga accepts them from a JSON body. */
interface Params {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

interface Prepared {
  params: Params;
  document: DocumentNode;
  enveloped: ReturnType<FastGraphqlOptions['yoga']['getEnveloped']>;
}

/** The parts of a Response processRegularResult builds, without building one. */
interface PlainResponse {
  body: string;
  status: number;
  headers: Record<string, string>;
}

/** A cached answer's response (see response-cache.ts), serialised once: the same bytes for every caller. */
interface Serialised {
  body: Buffer;
  status: number;
  headers: Record<string, string>;
}

/**
 * Yoga's own result serialisation (status from the errors, masked internals left out), handed a
 * "fetch API" whose Response is a plain record: the same bytes and status, no Fetch objects.
 */
const plainFetch = {
  Response: function PlainResponse(this: PlainResponse, body: string, init: { status: number; headers: Record<string, string> }) {
    this.body = body;
    this.status = init.status;
    this.headers = init.headers;
  },
} as unknown as Parameters<typeof processRegularResult>[1];

const PARAM_NAMES = new Set(['query', 'variables', 'operationName', 'extensions']);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Params Yoga would take as they are; anything else (Yoga's 400s included) is left to Yoga. */
function isPlainParams(value: unknown): value is Params {
  if (!isObject(value) || typeof value.query !== 'string') return false;
  for (const key in value) {
    if (value[key] != null && !PARAM_NAMES.has(key)) return false;
  }
  return (
    (value.variables == null || isObject(value.variables)) &&
    (value.extensions == null || isObject(value.extensions)) &&
    (value.operationName == null || typeof value.operationName === 'string')
  );
}

/** Yoga's JSON body parser takes `application/json`, first of a list, with parameters or without. */
function isJsonBody(contentType: string | undefined): boolean {
  const first = contentType?.split(',')[0];
  return first === 'application/json' || first?.startsWith('application/json;') === true;
}

/** The media types of Yoga's regular result processor, in its order. */
const REGULAR_MEDIA_TYPES = ['application/graphql-response+json', 'application/json'] as const;
type RegularMediaType = (typeof REGULAR_MEDIA_TYPES)[number];
const mediaTypeDecisions = new Map<string, RegularMediaType | null>();

/** Whether a listed media type (wildcards allowed) takes one of the processor's. */
const takes = (listed: string, mediaType: string) => {
  const [listedType, listedSubtype] = listed.split('/');
  const [type, subtype] = mediaType.split('/');
  return (listedType === '*' || listedType === type) && (listedSubtype === '*' || listedSubtype === subtype);
};

/**
 * The media type Yoga answers a query's or mutation's result in for this Accept header, or null
 * when its regular (JSON) processor would not answer it. Yoga's rule (useResultProcessors): of the
 * media types listed in UTF-8, q-values ignored, the first that the regular processor takes picks
 * it, and of the processor's two, the last it takes (so a wildcard gets application/json).
 * What real clients send: Apollo Client, urql and the typed client list
 * application/graphql-response+json first. Decisions are kept per header value (clients send a
 * few values).
 */
function regularMediaType(accept: string | undefined): RegularMediaType | null {
  if (accept === undefined || accept === '' || accept === 'application/json' || accept === '*/*') return 'application/json';
  let decided = mediaTypeDecisions.get(accept);
  if (decided === undefined) {
    decided = null;
    for (const entry of accept.replace(/\s/g, '').toLowerCase().split(',')) {
      const [listed = '', ...params] = entry.split(';');
      if ((params.find((param) => param.includes('charset=')) ?? 'charset=utf-8') !== 'charset=utf-8') continue;
      const taken = REGULAR_MEDIA_TYPES.filter((mediaType) => takes(listed, mediaType));
      if (taken.length > 0) {
        decided = taken[taken.length - 1]!;
        break;
      }
    }
    if (mediaTypeDecisions.size < 100) mediaTypeDecisions.set(accept, decided);
  }
  return decided;
}

/** The whole body, as Node's parser delivers it: never more than Content-Length (body-limit.ts bounds that). */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/**
 * POST /graphql with a JSON body, served straight from Yoga's envelop pipeline on node:http: the
 * same parse and validation caches, GraphQL Armor's limits, context, plugins (rate limit,
 * observability) and error masking as Yoga, and Yoga's own result serialisation, without the
 * Fetch Request and Response objects and the body stream Yoga builds for every request. The
 * bench's profile of standing reads (bench/RESULTS.md) put that layer at about a fifth of the
 * service's CPU.
 *
 * It takes only what it answers exactly as Yoga would: `application/json` in, out in the media type
 * Yoga's regular processor picks from the Accept header (application/json or
 * application/graphql-response+json, with Yoga's status codes for each: regularMediaType), on the
 * endpoint itself, and (after reading the body) parameters Yoga accepts as they are, queries that
 * parse and validate, queries and mutations (not subscriptions). Everything else, before a single
 * operation runs, goes to Yoga with the body already read (`req.body`, which Yoga's node adapter
 * takes in place of the stream): GET, server-sent events, multipart, other content types, CORS
 * preflights, malformed bodies, parse and validation errors. Answers false when it does not take
 * the request (Yoga should), true when it does (it answers it, one way or the other). O(body
 * size) beside the operations' own cost.
 *
 * Why it stays exact: Yoga's own hooks outside the envelop pipeline are request parsing (the JSON
 * parse here), parameter checks (isPlainParams), the batching limit, result processing
 * (processRegularResult itself) and the server adapter's response hooks: CORS (the
 * service's policy, http/cors.ts, shared with this path) and cache-control.ts (a POST answer is never cacheable). A plugin
 * added to the app with onRequest, onParams, onExecutionResult or onResponse hooks would be
 * skipped here and must be added to this path too. So would a plugin with onExecute hooks for the
 * anonymous repeats of a cached top that `cachedBodies` answers before the pipeline: what such a request
 * meets there (the read budget, the observation, the cached answer's currency) is called from
 * cached-bodies.ts, and anything new must be too.
 */
export function createFastGraphql(options: FastGraphqlOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { yoga, endpoint = '/graphql', batchingLimit = 0 } = options;
  const serialised = new Map(REGULAR_MEDIA_TYPES.map((mediaType) => [mediaType, new WeakMap<object, Serialised>()]));
  const valid = createValidationCache();

  /** The response of a result in a media type, as Yoga would write it; a cached answer's is made once per media type and kept with it. */
  function serialise(results: ExecutionResult | ExecutionResult[], mediaType: RegularMediaType): Serialised {
    const keep = !Array.isArray(results) && isCachedResult(results) ? serialised.get(mediaType)! : undefined;
    const kept = keep?.get(results);
    if (kept) return kept;
    const response = processRegularResult(results as never, plainFetch, mediaType) as unknown as PlainResponse;
    const made = { body: Buffer.from(response.body), status: response.status, headers: response.headers };
    keep?.set(results, made);
    return made;
  }

  /** Yoga's handling of an error thrown outside execution (handleError): an AggregateError split, each masked. */
  function thrownErrors(error: unknown): GraphQLError[] {
    if (typeof error === 'object' && error !== null && 'errors' in error && Array.isArray(error.errors)) {
      return (error.errors as unknown[]).flatMap(thrownErrors);
    }
    const masked = options.maskError(error, 'Unexpected error.');
    return [masked instanceof GraphQLError ? masked : createGraphQLError(masked.message, { originalError: masked })];
  }

  /** Parses and validates one operation through the pipeline; undefined when Yoga should answer it. */
  function prepare(params: Params, initial: PreparedContext & { req: IncomingMessage; res: ServerResponse }): Prepared | undefined {
    const enveloped = yoga.getEnveloped(initial as never);
    let checked: Checked;
    try {
      checked = valid.check(enveloped, params.query);
    } catch {
      // A rule that throws rather than reports (a plugin's) is Yoga's to answer too, never an unexpected error here.
      return undefined;
    }
    const { document } = checked;
    if (!document) return undefined;
    const operation = getOperationAST(document, params.operationName ?? undefined);
    if (!operation || operation.operation === OperationTypeNode.SUBSCRIPTION) return undefined;
    return { params, document, enveloped };
  }

  async function run({ params, document, enveloped }: Prepared): Promise<ExecutionResult> {
    try {
      const contextValue = await enveloped.contextFactory();
      return (await enveloped.execute({
        schema: enveloped.schema as GraphQLSchema,
        document,
        contextValue,
        variableValues: params.variables,
        operationName: params.operationName,
      })) as ExecutionResult;
    } catch (error) {
      return { errors: thrownErrors(error) };
    }
  }

  /**
   * Parameters naming a registered document, with its text as their query (and the id dropped);
   * anything else as it came; null for a refusal (an unknown id; a query where only registered
   * documents run), which Yoga then answers (its plugin refuses it the same way).
   */
  function withRegisteredQuery(params: unknown): unknown {
    if (!options.documents || !isObject(params)) return params;
    const resolved = options.documents.resolve(params);
    if (typeof resolved !== 'string') return resolved === undefined ? params : null;
    if (resolved === params.query) return params;
    const { documentId: _id, ...rest } = params;
    return { ...rest, query: resolved };
  }

  /** Writes a response with the service's headers, unless the client went away meanwhile. */
  function respond(req: IncomingMessage, res: ServerResponse, response: Serialised): void {
    if (res.destroyed) return;
    const headers: Record<string, string | number> = {
      ...response.headers,
      'content-length': response.body.length,
      'cache-control': NOT_CACHEABLE,
    };
    Object.assign(headers, corsHeaders(options.corsOrigins ?? '*', req.headers, false));
    res.writeHead(response.status, headers).end(response.body);
  }

  async function answer(req: IncomingMessage, res: ServerResponse, body: Buffer, mediaType: RegularMediaType): Promise<void> {
    const text = body.toString('utf8');
    const cached = options.cachedBodies?.answer(req, text);
    const cachedResult = cached && (await cached);
    if (cachedResult) return respond(req, res, serialise(cachedResult, mediaType));
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const batch = Array.isArray(parsed);
    const list: unknown[] = (batch ? (parsed as unknown[]) : [parsed]).map(withRegisteredQuery);
    let context: Promise<object> | undefined;
    const prepared = () => (context ??= options.context(req));
    const operations: Prepared[] = [];
    // Variables nested too deep are Yoga's to refuse (useJsonDepth), before anything here walks them.
    const takes =
      (!batch || (list.length > 0 && list.length <= batchingLimit)) &&
      list.every(isPlainParams) &&
      list.every((params) => paramsDepthProblem(params) === undefined);
    for (const params of takes ? list : []) {
      const operation = prepare(params, { req, res, prepared });
      if (!operation) break;
      operations.push(operation);
    }
    if (operations.length !== list.length || !takes) {
      // Nothing has run yet: Yoga answers the whole request, from the body read here.
      (req as IncomingMessage & { body?: Buffer }).body = body;
      void yoga(req, res);
      return;
    }
    if (batch) return respond(req, res, serialise(await Promise.all(operations.map(run)), mediaType));
    const [operation] = operations as [Prepared];
    const result = await run(operation);
    const { params, document, enveloped } = operation;
    options.cachedBodies?.keep(
      req,
      text,
      { schema: enveloped.schema as GraphQLSchema, document, operationName: params.operationName ?? undefined, variables: params.variables ?? undefined },
      result,
    );
    respond(req, res, serialise(result, mediaType));
  }

  return (req, res) => {
    if (req.method !== 'POST' || req.url !== endpoint) return false;
    const { headers } = req;
    const mediaType = regularMediaType(headers.accept);
    if (!isJsonBody(headers['content-type']) || mediaType === null) return false;
    // A preflight's headers on a POST: Yoga's CORS answer depends on them.
    if (headers['access-control-request-method'] !== undefined || headers['access-control-request-headers'] !== undefined) return false;
    // An empty body is Yoga's to refuse (and its stream is Yoga's to read).
    if (!(Number(headers['content-length']) > 0)) return false;
    readBody(req)
      .then(
        (body) => answer(req, res, body, mediaType),
        () => res.destroy(),
      )
      .catch((error: unknown) => {
        options.log.error({ err: error }, 'unexpected error answering a request');
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' }).end('{"errors":[{"message":"Unexpected error."}]}');
      });
    return true;
  };
}
