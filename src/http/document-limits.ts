import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { type DocumentNode, type GraphQLError, Lexer, Source, TokenKind, type ValidationContext } from 'graphql';
import { type Plugin, createGraphQLError } from 'graphql-yoga';

/** The shape of a document, bounded before it runs (see {@link useDocumentLimits}). */
export interface DocumentLimits {
  /** Aliased fields in one operation (its fragments included). Default 20. */
  aliases?: number;
  /** Fields nested in one operation, counted through fragments (a spread is not a level). Default 8. */
  depth?: number;
  /** Lexical tokens in one document. Default 2,000. */
  tokens?: number;
  /** Directives in one operation. Default 10. */
  directives?: number;
  /** Bytes one document may have, checked before it is parsed (or looked up in the parse cache). Default 100,000. */
  bytes?: number;
}

/**
 * Which limit a refusal names, in `extensions.limit`, beside the maximum and what was found. The
 * cost (rows an operation can return) is checked as the operation starts, with its variables (see
 * read-limit.ts), and refused in the same words.
 */
export type DocumentLimitName = 'aliases' | 'depth' | 'tokens' | 'directives' | 'cost' | 'bytes';

const WHAT: Record<DocumentLimitName, (found: string) => string> = {
  aliases: (found) => `The operation has ${found} aliases`,
  depth: (found) => `The operation nests fields ${found} deep`,
  tokens: (found) => `The document has ${found} tokens`,
  directives: (found) => `The operation has ${found} directives`,
  cost: (found) => `The operation can return ${found} rows`,
  bytes: (found) => `The document is ${found} bytes long`,
};

const format = (n: number) => n.toLocaleString('en-US');

/**
 * The refusal of a document over one of the limits: `BAD_USER_INPUT` (do not retry it unchanged),
 * naming the limit and by how much the document is over it. The same on every transport.
 */
export function documentLimitError(limit: DocumentLimitName, maximum: number, found: number): GraphQLError {
  const over = Math.round((found - maximum) * 100) / 100;
  return createGraphQLError(`${WHAT[limit](format(found))}; the limit is ${format(maximum)} (${format(over)} over).`, {
    extensions: { code: 'BAD_USER_INPUT', limit, maximum, found },
  });
}

/** What Armor found, from its message (`... limit of 8 exceeded, found 9.`): Armor's callbacks get nothing else. */
function foundIn(error: GraphQLError): number | undefined {
  const found = /found (\d+(?:\.\d+)?)/.exec(error.message)?.[1];
  return found === undefined ? undefined : Math.round(Number(found) * 100) / 100;
}

/**
 * Armor's rules report their refusal to the validation context instead of throwing it (a thrown
 * rule error escapes graphql-js's validate, and with it every transport's error handling).
 */
function reportAs(limit: DocumentLimitName, maximum: number) {
  return {
    propagateOnRejection: false,
    onReject: [
      (context: ValidationContext | null, error: GraphQLError) => {
        context?.reportError(documentLimitError(limit, maximum, foundIn(error) ?? maximum + 1));
      },
    ],
  };
}

/** Marks Armor's token refusal so that the parse wrapper below can count what it stopped at. */
class TokenLimitReached extends Error {}

/** The document's tokens, up to the first the lexer cannot read (a syntax error past the limit). */
function countTokens(source: string | Source): number {
  const lexer = new Lexer(typeof source === 'string' ? new Source(source) : source);
  let count = 0;
  try {
    while (lexer.advance().kind !== TokenKind.EOF) count += 1;
  } catch {
    // Counted as far as it lexes.
  }
  return count;
}

/**
 * GraphQL Armor's limits on a document's shape (aliases, depth, tokens, directives), set so that
 * nothing a code generator or a normalising client writes for an operation of the contract is
 * refused: depth counts fields, not fragment spreads (`flattenFragments`), so Relay's and
 * graphql-codegen's fragment per type, nested, costs what the same selection written inline costs;
 * `__typename` is a leaf and adds no depth. A refused document is a GraphQL error with
 * `extensions.code` BAD_USER_INPUT and `extensions.limit`, never Armor's "Syntax Error".
 *
 * The token count runs in the parser (Armor stops it at the limit), the others are validation
 * rules; so the parse and validation caches remember refusals as they remember any other result.
 * Armor's cost limit is off: it cannot see variables (a `limit` in one cost nothing) and charges
 * nesting rather than rows; read-limit.ts counts rows instead.
 */
export function useDocumentLimits({ aliases = 20, depth = 8, tokens = 2_000, directives = 10, bytes = 100_000 }: DocumentLimits = {}): (
  Plugin | ReturnType<typeof EnvelopArmorPlugin>
)[] {
  const armor = EnvelopArmorPlugin({
    maxAliases: { n: aliases, ...reportAs('aliases', aliases) },
    maxDepth: { n: depth, flattenFragments: true, ...reportAs('depth', depth) },
    maxDirectives: { n: directives, ...reportAs('directives', directives) },
    costLimit: { enabled: false },
    maxTokens: {
      n: tokens,
      propagateOnRejection: false,
      onReject: [
        () => {
          throw new TokenLimitReached();
        },
      ],
    },
  });
  const documentSize: Plugin = {
    // Before Armor's parser and Yoga's parse cache (which runs after every plugin given to Yoga), so
    // an oversized document is neither lexed nor kept.
    onParse({ params }) {
      const source = params.source as string | Source;
      const size = Buffer.byteLength(typeof source === 'string' ? source : source.body);
      if (size > bytes) throw documentLimitError('bytes', bytes, size);
    },
  };
  const namedTokenRefusal: Plugin = {
    // After Armor's onParse (plugins run in order), so parseFn here is Armor's token-counting parser.
    onParse({ parseFn, setParseFn }) {
      setParseFn((source: string | Source, options) => {
        try {
          return parseFn(source, options) as DocumentNode;
        } catch (error) {
          if (!(error instanceof TokenLimitReached)) throw error;
          // Only a refused document is counted to its end, to say by how much it is over.
          throw documentLimitError('tokens', tokens, countTokens(source));
        }
      });
    },
  };
  // Armor's is an envelop plugin, which Yoga takes as it is.
  return [documentSize, armor, namedTokenRefusal];
}

/** A document cache (Yoga's parserAndValidationCache) holding only documents up to `maxKeyBytes`. */
export interface DocumentCache<T> {
  get(key: string): T | undefined;
  set(key: string, value: T): unknown;
}

/**
 * Yoga's parse caches (documents and parse errors), keeping only documents of up to
 * `maxCachedDocumentBytes`: what clients send over and over is short (the deepest document a
 * generated client writes is about 1.5 kB), and a cache of every large document is memory a client
 * could fill at will. At most `entries` entries, so at most entries × maxCachedDocumentBytes of text.
 */
export function boundedDocumentCache<T>(
  cache: { get(key: string): unknown; set(key: string, value: T): unknown },
  maxCachedDocumentBytes = 16_384,
): DocumentCache<T> {
  return {
    get: (key) => cache.get(key) as T | undefined,
    set: (key, value) => {
      if (Buffer.byteLength(key) <= maxCachedDocumentBytes) cache.set(key, value);
    },
  };
}
