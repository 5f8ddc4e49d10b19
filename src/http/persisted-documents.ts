import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type DocumentNode, type GraphQLError, Kind, print } from 'graphql';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { clientError } from '../errors.js';

/** Registered documents by id: the SHA-256 (hex) of each document's text, as the client prints it. */
export type PersistedManifest = Record<string, string>;

/** The id a document is registered under: the SHA-256 of its text, hex (what APQ calls sha256Hash). */
export const documentIdOf = (text: string) => createHash('sha256').update(text).digest('hex');

const isOperationDocument = (value: unknown): value is DocumentNode =>
  typeof value === 'object' &&
  value !== null &&
  (value as DocumentNode).kind === Kind.DOCUMENT &&
  (value as DocumentNode).definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION);

/** The manifest of these operation documents (anything else in the list, fragments alone included, is skipped), sorted by id. */
export function persistedManifest(documents: readonly unknown[]): PersistedManifest {
  const texts = documents.filter(isOperationDocument).map((document) => print(document));
  return Object.fromEntries(texts.map((text) => [documentIdOf(text), text] as const).sort(([a], [b]) => a.localeCompare(b)));
}

/** The manifest the repository commits (npm run client:generate): the typed client's operations. */
export function loadClientManifest(): PersistedManifest {
  return JSON.parse(readFileSync(new URL('../../client/persisted-documents.json', import.meta.url), 'utf8')) as PersistedManifest;
}

export interface PersistedDocumentsOptions {
  /** The documents served by id. Default: the typed client's ({@link loadClientManifest}). */
  manifest?: PersistedManifest;
  /**
   * Whether only registered documents run (trusted documents, PERSISTED_DOCUMENTS_ONLY): a request
   * that sends its own `query` is refused BAD_USER_INPUT. Default false: both are served.
   */
  only?: boolean;
}

/** The GraphQL parameters a transport received, before the query is known. */
interface RawParams {
  query?: unknown;
  documentId?: unknown;
  extensions?: unknown;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The id a request names: `documentId`, or the APQ extension's `persistedQuery.sha256Hash`. */
function requestedId(params: RawParams): string | undefined {
  if (typeof params.documentId === 'string') return params.documentId;
  const persisted = isObject(params.extensions) ? params.extensions.persistedQuery : undefined;
  return isObject(persisted) && typeof persisted.sha256Hash === 'string' ? persisted.sha256Hash : undefined;
}

/**
 * Persisted documents: the typed client's operations, registered by hash at build time, run by
 * id over POST (`documentId`, or APQ's `extensions.persistedQuery.sha256Hash`), GET (the same as
 * search parameters) and graphql-ws (the same in the subscribe payload, with an empty `query`,
 * which the protocol requires). A registered document is the very text Yoga's parse and validation
 * caches hold, so it is parsed and validated once per process (at start: see {@link warm}), never
 * per request. With `only`, nothing else runs.
 */
export function createPersistedDocuments(options: PersistedDocumentsOptions = {}) {
  const manifest = new Map(Object.entries(options.manifest ?? loadClientManifest()));
  const only = options.only ?? false;

  return {
    only,
    /** The registered texts, to parse and validate once at start. */
    texts: () => [...manifest.values()],

    /**
     * The query a request runs: its registered document when it names one, else its own query.
     * An error (BAD_USER_INPUT) for an id nobody registered (message `PersistedQueryNotFound`, as
     * APQ clients expect), for an id beside a query of other text, and, with `only`, for a query
     * sent as text. Undefined when the request names nothing and sends no query (the transport
     * answers that). O(1) beside hashing a query sent with an APQ hash.
     */
    resolve(params: RawParams): string | GraphQLError | undefined {
      const id = requestedId(params);
      const text = typeof params.query === 'string' && params.query !== '' ? params.query : undefined;
      if (id === undefined) {
        if (only && text !== undefined)
          return clientError('BAD_USER_INPUT', 'This service runs registered documents only: send the documentId of one of the client’s operations.');
        return text;
      }
      const registered = manifest.get(id);
      if (registered === undefined) return clientError('BAD_USER_INPUT', 'PersistedQueryNotFound');
      if (text !== undefined && text !== registered) return clientError('BAD_USER_INPUT', 'The query sent is not the document its id names.');
      return registered;
    },
  };
}

export type PersistedDocuments = ReturnType<typeof createPersistedDocuments>;

/**
 * Yoga's side (GET, and POST bodies the fast path leaves to Yoga): fills in `query` from the
 * registered document a request names, from its parameters or, over GET, its search parameters,
 * as soon as the request is parsed (before Yoga checks that a query came). A refused request is
 * handed on with a placeholder query and answered its error before anything runs.
 */
export function usePersistedDocuments(documents: PersistedDocuments): Plugin {
  const refusals = new WeakMap<object, GraphQLError>();
  const placeholder = '{ __typename }';

  return {
    onRequestParse({ request }) {
      const documentId = request.method === 'GET' ? new URL(request.url).searchParams.get('documentId') : null;
      return {
        onRequestParseDone({ requestParserResult, setRequestParserResult }) {
          const fill = (params: GraphQLParams): GraphQLParams => {
            const resolved = documents.resolve(documentId === null ? params : { ...params, documentId });
            if (resolved === undefined || resolved === params.query) return params;
            if (typeof resolved === 'string') return { ...params, query: resolved };
            const refused = { ...params, query: placeholder };
            refusals.set(refused, resolved);
            return refused;
          };
          setRequestParserResult(Array.isArray(requestParserResult) ? requestParserResult.map(fill) : fill(requestParserResult));
        },
      };
    },
    onParams({ params, setResult }) {
      const refusal = refusals.get(params);
      if (refusal) setResult({ errors: [refusal] });
    },
  };
}
