import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { createHash } from 'node:crypto';
import {
  type DefinitionNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  Lexer,
  type OperationDefinitionNode,
  type SelectionSetNode,
  Source,
  TokenKind,
  type validate,
} from 'graphql';
import { type Plugin, createGraphQLError, createLRUCache } from 'graphql-yoga';

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
  /**
   * Fields one document selects, in all its operations, each fragment counted where it is spread
   * (so the operations as they run, whose fields a fragment spread many times multiplies).
   * Default 1,000.
   */
  fields?: number;
  /**
   * Times one field may be selected at one place of an operation's answer (one response path, such
   * as `top.entries.player`), fragments written out where they are spread. graphql-js checks that
   * such copies can be merged by comparing every pair of them (and their selections, pair by pair),
   * so this bounds the one validation rule whose work grows with the square of a document's size.
   * Generated clients repeat a field a few times at most (`__typename` and `id` in each fragment of
   * a type). Default 20.
   */
  repeatedFields?: number;
  /** Who pays for validating a document, and who has nothing left to pay with. Default: nobody (validation is free). */
  budget?: ValidationBudget;
  /**
   * Documents whose validation is remembered (by a digest of their text, so that a large one costs
   * its key and errors, not its text), so that one sent again is not validated again, whatever its
   * size (Yoga's caches keep documents of up to 16 kB). Default 4,096.
   */
  remembered?: number;
}

/**
 * The client's share of the work of validating its documents (see validation-budget.ts). Both are
 * called only for a document that is actually validated, never for an answer from a cache.
 */
export interface ValidationBudget {
  /** Before validating, with the request's initial context: throws the refusal (RATE_LIMITED) when its client has spent its budget. */
  before(context: object): void;
  /** After validating, with how long it took. */
  spent(context: object, ms: number): void;
}

/**
 * Which limit a refusal names, in `extensions.limit`, beside the maximum and what was found. The
 * cost (rows an operation can return) is checked as the operation starts, with its variables (see
 * read-limit.ts), and refused in the same words.
 */
export type DocumentLimitName = 'aliases' | 'depth' | 'tokens' | 'directives' | 'cost' | 'bytes' | 'fields' | 'repeatedFields';

const WHAT: Record<DocumentLimitName, (found: string, field?: string) => string> = {
  aliases: (found) => `The operation has ${found} aliases`,
  depth: (found) => `The operation nests fields ${found} deep`,
  tokens: (found) => `The document has ${found} tokens`,
  directives: (found) => `The operation has ${found} directives`,
  cost: (found) => `The operation can return ${found} rows`,
  bytes: (found) => `The document is ${found} bytes long`,
  fields: (found) => `The document selects ${found} fields, each fragment counted where it is spread`,
  repeatedFields: (found, field = 'one field') => `The operation selects ${field} ${found} times at one place`,
};

const format = (n: number) => n.toLocaleString('en-US');

/**
 * The refusal of a document over one of the limits: `BAD_USER_INPUT` (do not retry it unchanged),
 * naming the limit and by how much the document is over it. The same on every transport.
 */
export function documentLimitError(limit: DocumentLimitName, maximum: number, found: number, field?: string): GraphQLError {
  const over = Math.round((found - maximum) * 100) / 100;
  return createGraphQLError(`${WHAT[limit](format(found), field)}; the limit is ${format(maximum)} (${format(over)} over).`, {
    extensions: { code: 'BAD_USER_INPUT', limit, maximum, found },
  });
}

/** What one selection set holds, its fragments and inline fragments written out where they are spread. */
interface SelectionShape {
  /** Fields nested on its deepest branch: a field is a level, a fragment is not, and `__schema` counts nothing (as in GraphQL Armor). */
  depth: number;
  /** Aliased fields (an alias of or to `__typename` is free, as in GraphQL Armor). */
  aliases: number;
  directives: number;
  /** Field selections. */
  fields: number;
}

/** The fragments of a document by name. */
function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const isFragment = (definition: DefinitionNode): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION;
  return new Map(document.definitions.filter(isFragment).map((fragment) => [fragment.name.value, fragment]));
}

/**
 * The shape of each operation of a document, in one walk of it (each fragment walked once, however
 * often it is spread, and counted each time): linear in the document, so it can run before
 * validation, whose rules are not. A fragment that is unknown or spreads itself counts as empty;
 * validation refuses it.
 */
function operationShapes(document: DocumentNode, fragments: Map<string, FragmentDefinitionNode>): [OperationDefinitionNode, SelectionShape][] {
  const walked = new Map<string, SelectionShape>();
  const walking = new Set<string>();

  function fragmentShape(name: string): SelectionShape | undefined {
    const known = walked.get(name);
    const fragment = fragments.get(name);
    if (known || !fragment || walking.has(name)) return known;
    walking.add(name);
    const shape = setShape(fragment.selectionSet);
    shape.directives += fragment.directives?.length ?? 0;
    walking.delete(name);
    walked.set(name, shape);
    return shape;
  }

  function setShape(set: SelectionSetNode): SelectionShape {
    const shape: SelectionShape = { depth: 0, aliases: 0, directives: 0, fields: 0 };
    // A fragment's fields are selected at the level it is spread at.
    const add = (inner: SelectionShape, depth: number) => {
      shape.depth = Math.max(shape.depth, depth);
      shape.aliases += inner.aliases;
      shape.directives += inner.directives;
      shape.fields += inner.fields;
    };
    for (const selection of set.selections) {
      shape.directives += selection.directives?.length ?? 0;
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        const alias = selection.alias?.value;
        if (alias !== undefined && alias !== '__typename' && name !== '__typename') shape.aliases += 1;
        shape.fields += 1;
        const inner = selection.selectionSet ? setShape(selection.selectionSet) : undefined;
        if (inner) add(inner, 0);
        if (name !== '__schema') shape.depth = Math.max(shape.depth, 1 + (inner?.depth ?? 0));
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const inner = setShape(selection.selectionSet);
        add(inner, inner.depth);
      } else {
        const inner = fragmentShape(selection.name.value);
        if (inner) add(inner, inner.depth);
      }
    }
    return shape;
  }

  return document.definitions.flatMap((definition) => {
    if (definition.kind !== Kind.OPERATION_DEFINITION) return [];
    const shape = setShape(definition.selectionSet);
    shape.directives += definition.directives?.length ?? 0;
    return [[definition, shape]];
  });
}

/**
 * The field an operation selects most often at one place of its answer (one response path, such
 * as `top.entries.player`), with its fragments written out where they are spread, and how often.
 * graphql-js checks that the copies of a field at one place can be merged by comparing them in
 * pairs, each pair's selections in pairs in turn, so its work grows with the square of these
 * counts. Walks the operation as written out: bounded by its `fields`, checked before.
 */
function mostRepeatedField(operation: OperationDefinitionNode, fragments: Map<string, FragmentDefinitionNode>): { field: string; times: number } {
  const times = new Map<string, number>();
  const spreading = new Set<string>();
  let most = { field: '', times: 0 };
  const walk = (set: SelectionSetNode, path: string) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const at = `${path}${(selection.alias ?? selection.name).value}`;
        const count = (times.get(at) ?? 0) + 1;
        times.set(at, count);
        if (count > most.times) most = { field: at, times: count };
        if (selection.selectionSet) walk(selection.selectionSet, `${at}.`);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(selection.selectionSet, path);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || spreading.has(name)) continue;
        spreading.add(name);
        walk(fragment.selectionSet, path);
        spreading.delete(name);
      }
    }
  };
  walk(operation.selectionSet, '');
  return most;
}

/** What a valid document's validation answers. */
const VALID: readonly GraphQLError[] = Object.freeze([]);

/** The longest stand-in text a remembered refusal keeps for its locations (see {@link detached}). */
const MAX_STAND_IN_CHARS = 4_096;

/**
 * A refusal without its document: the same message and extensions, and its locations kept as
 * positions in a stand-in text of blank lines and spaces (Yoga makes every error it answers anew
 * from its source and positions), so neither the document's text nor its syntax tree stays in
 * memory. Undefined when the stand-in would be long (a location far into a long line, or many
 * lines down): such a refusal is not remembered.
 */
function detached(error: GraphQLError): GraphQLError | undefined {
  const locations = error.locations ?? [];
  if (locations.length === 0) return new GraphQLError(error.message, { extensions: error.extensions });
  const widths = new Map<number, number>();
  for (const { line, column } of locations) widths.set(line, Math.max(widths.get(line) ?? 0, column));
  const lastLine = Math.max(...widths.keys());
  const lineStarts: number[] = [];
  let standIn = '';
  for (let line = 1; line <= lastLine; line += 1) {
    lineStarts[line] = standIn.length;
    standIn += `${' '.repeat(widths.get(line) ?? 0)}\n`;
    if (standIn.length > MAX_STAND_IN_CHARS) return undefined;
  }
  return new GraphQLError(error.message, {
    source: new Source(standIn, error.source?.name),
    positions: locations.map(({ line, column }) => lineStarts[line]! + column - 1),
    extensions: error.extensions,
  });
}

/** The text of what the parser is given. */
const textOf = (source: string | Source) => (typeof source === 'string' ? source : source.body);

/** Whether a parse error is graphql-js's refusal of a document past `maxLexicalTokens`. */
const isTokenLimit = (error: unknown) => error instanceof GraphQLError && error.message.endsWith('tokens. Parsing aborted.');

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

type ShapeLimits = Required<Pick<DocumentLimits, 'aliases' | 'depth' | 'directives' | 'fields' | 'repeatedFields'>>;

/** The refusals of each operation over a limit on its shape, none when it is within them all. */
function shapeRefusals(document: DocumentNode, limits: ShapeLimits): GraphQLError[] {
  const fragments = fragmentsOf(document);
  const shapes = operationShapes(document, fragments);
  const refusals = shapes.flatMap(([, shape]) =>
    (['aliases', 'depth', 'directives'] as const)
      .filter((limit) => shape[limit] > limits[limit])
      .map((limit) => documentLimitError(limit, limits[limit], shape[limit])),
  );
  // Every operation's, so that the walks below (which write them out) are bounded however many operations there are.
  const fields = shapes.reduce((sum, [, shape]) => sum + shape.fields, 0);
  if (fields > limits.fields) refusals.push(documentLimitError('fields', limits.fields, fields));
  if (refusals.length > 0) return refusals;
  return shapes.flatMap(([operation]) => {
    const repeated = mostRepeatedField(operation, fragments);
    return repeated.times > limits.repeatedFields ? [documentLimitError('repeatedFields', limits.repeatedFields, repeated.times, repeated.field)] : [];
  });
}

/**
 * The limits on a document's shape (bytes, tokens, aliases, depth, directives, fields, repeated
 * fields), set so that nothing a code generator or a normalising client writes for an operation
 * of the contract is refused: depth counts fields, not fragment spreads, so Relay's and
 * graphql-codegen's fragment per type, nested, costs what the same selection written inline
 * costs; `__typename` is a leaf like any other. A refused document is a GraphQL error with
 * `extensions.code` BAD_USER_INPUT and `extensions.limit`, never Armor's "Syntax Error".
 *
 * Cheap checks go before expensive ones, so that a document refused for its shape costs what
 * reading it costs, never what validating it would: the bytes before parsing; the tokens while
 * parsing (graphql-js's parser stops at the limit); aliases, depth, directives and fields in one
 * linear walk of the parsed document, then repeated fields in a walk of it written out (bounded
 * by its fields), both as part of parsing, so long before graphql-js's rules run (as validation
 * rules, GraphQL Armor's limits ran beside them, the quadratic one included), and a refusal is
 * cached as a parse error, without its syntax tree. Then a document validated before (by a digest of
 * its text and the rules, so that one of any size is remembered for its key) is answered from
 * memory; only then is it validated, its client charged for the time it took (`budget`). Yoga's
 * parse and validation caches (which answer repeats of documents up to 16 kB before any of this)
 * keep these refusals as they keep any other result.
 *
 * Armor's cost limit is off: it cannot see variables (a `limit` in one cost nothing) and charges
 * nesting rather than rows; read-limit.ts counts rows instead.
 */
export function useDocumentLimits({
  aliases = 20,
  depth = 8,
  tokens = 2_000,
  directives = 10,
  bytes = 100_000,
  fields = 1_000,
  repeatedFields = 20,
  budget,
  remembered: rememberedDocuments = 4_096,
}: DocumentLimits = {}): (Plugin | ReturnType<typeof EnvelopArmorPlugin>)[] {
  const armor = EnvelopArmorPlugin({
    // Checked before validation, below.
    maxAliases: { enabled: false },
    maxDepth: { enabled: false },
    maxDirectives: { enabled: false },
    costLimit: { enabled: false },
    // graphql-js's own parser counts them (maxLexicalTokens), without Armor's proxy around every token.
    maxTokens: { enabled: false },
  });
  const documentSize: Plugin = {
    // Before the parser and Yoga's parse cache (which runs after every plugin given to Yoga), so an
    // oversized document is neither lexed nor kept.
    onParse({ params }) {
      const size = Buffer.byteLength(textOf(params.source as string | Source));
      if (size > bytes) throw documentLimitError('bytes', bytes, size);
    },
  };
  const shapeLimits = { aliases, depth, directives, fields, repeatedFields };
  const parseWithinLimits: Plugin = {
    // The parser stops at the token limit; the shape is checked as soon as the document is parsed.
    // A refusal is a parse error, so Yoga's parse cache keeps the error alone, never the syntax
    // tree of a document that will not run (hundreds of kilobytes for a short text of repeats,
    // which a client sending new ones would pile up in the cache for the garbage collector).
    onParse({ parseFn, setParseFn }) {
      setParseFn((source: string | Source, options) => {
        let document: DocumentNode;
        try {
          document = parseFn(source, { ...options, maxLexicalTokens: tokens }) as DocumentNode;
        } catch (error) {
          if (!isTokenLimit(error)) throw error;
          // Only a refused document is counted to its end, to say by how much it is over.
          throw documentLimitError('tokens', tokens, countTokens(source));
        }
        const [overLimits] = shapeRefusals(document, shapeLimits);
        // HTTP 400, as when these limits were validation rules (Yoga answers a parse error 200 to an application/json client).
        if (overLimits) throw new GraphQLError(overLimits.message, { extensions: { ...overLimits.extensions, http: { status: 400 } } });
        return document;
      });
    },
  };
  // Each parsed document's text, for the validations remembered by it (the text is the request's own, not a copy).
  const texts = new WeakMap<DocumentNode, string>();
  // By schema too: one app has one, but nothing else then ties these plugins to it.
  const validationsBySchema = new WeakMap<object, ReturnType<typeof createLRUCache<readonly GraphQLError[]>>>();
  const validationsOf = (schema: object) => {
    let validations = validationsBySchema.get(schema);
    if (!validations) validationsBySchema.set(schema, (validations = createLRUCache<readonly GraphQLError[]>({ max: rememberedDocuments })));
    return validations;
  };
  const beforeValidation: Plugin = {
    onParse({ params }) {
      return ({ result }) => {
        if (result && !(result instanceof Error)) texts.set(result as DocumentNode, textOf(params.source as string | Source));
      };
    },
    onValidate({ context, validateFn, setValidationFn }) {
      const validateRules = validateFn as typeof validate;
      // The validation function itself, so that none of this runs when Yoga's validation cache answers.
      const validated: typeof validate = (schema, document, rules, ...rest) => {
        const text = texts.get(document);
        const key = text === undefined ? undefined : validationKey(text, rules);
        const validations = validationsOf(schema);
        const known = key === undefined ? undefined : validations.get(key);
        if (known) return known;
        budget?.before(context);
        const started = performance.now();
        const errors = validateRules(schema, document, rules, ...rest);
        budget?.spent(context, performance.now() - started);
        const kept = errors.length > 0 ? errors.map(detached) : VALID;
        if (key !== undefined && kept.every((error) => error !== undefined)) validations.set(key, kept);
        return errors;
      };
      setValidationFn(validated);
    },
  };
  // Armor's (which only keeps field suggestions out of validation errors now) is an envelop plugin, which Yoga takes as it is.
  return [documentSize, armor, parseWithinLimits, beforeValidation];
}

/** What a validation's outcome depends on besides the schema (the app's own): the text, and the rules run on it. */
function validationKey(text: string, rules: readonly { name: string }[] | undefined): string {
  return createHash('sha256')
    .update(rules?.map((rule) => rule.name).join(',') ?? '')
    .update('\n')
    .update(text)
    .digest('base64');
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
