import { BREAK, type DocumentNode, type ExecutionResult, type GraphQLSchema, Kind, OperationTypeNode, TypeInfo, visit, visitWithTypeInfo } from 'graphql';
import { type Plugin, isAsyncIterable } from 'graphql-yoga';
import type { Board } from '../model/board.js';
import type { TopRead } from '../reads/views.js';
import type { Context } from '../resolvers/context.js';

export interface ResponseCacheOptions {
  /** Which read of a bucket's top the top cache would answer now without reading the index (see TopCache.currentRead). */
  currentRead(bucket: string): number | undefined;
  /**
   * The definition of a board a read of it would be served with now (BoardDirectory.known, which
   * hands out a new object only when the definition changed): its settings shape a top answer as
   * much as the read does (the rank style its ranks are served in).
   */
  currentBoard(id: string): Board | undefined;
  /** The token of the last change of any player's profile (ProfileCache.changes); null when Redis holds none yet or does not answer. */
  profileChanges(): Promise<string | null>;
  /** Answers kept per document, one per set of variables; the oldest kept goes first. Default 100. */
  answersPerDocument?: number;
}

/** A cached answer: the result, and what it was built from. */
interface Shared {
  result: ExecutionResult;
  /** The profile-change token read before the execution. */
  profiles: string;
  /** Per top read, the top cache's read and the board definition it was served with. */
  reads: TopRead[];
}

/** Results answered from a cached answer, with what each was built from: the same object for every caller, so transports may serialise it once (fast-graphql.ts). */
const sharedResults = new WeakMap<object, Shared>();

/** Whether this result is a cached answer, the same object (and bytes) for every caller until its views change. O(1). */
export const isCachedResult = (result: unknown): boolean => typeof result === 'object' && result !== null && sharedResults.has(result);

export interface ResponseCache {
  /** Keeps the results of queries of shared tops, and hands them to the next callers while current. */
  plugin: Plugin;
  /**
   * Whether a cached answer (see isCachedResult) is still the one the plugin would hand out now:
   * no profile changed since it was built, the top cache answers each bucket it read from the
   * same read, each board it read is the same definition, and its arguments name the same buckets.
   * One Redis GET, shared with
   * concurrent callers (ProfileCache.changes); false when Redis does not answer it, or for any
   * other result.
   */
  isCurrent(result: ExecutionResult): Promise<boolean>;
}

/** Whether a field or type is limited to some callers (Pothos scope-auth keeps its scopes in the schema's extensions). */
const scoped = (thing: { extensions?: unknown } | null | undefined) =>
  Boolean((thing?.extensions as { pothosOptions?: { authScopes?: unknown } } | undefined)?.pothosOptions?.authScopes);

/** readsOnlyTops's decisions, per schema and document (a document is walked once). */
const decisions = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, boolean>>();

/**
 * Whether every operation of a document reads only shared tops: queries whose root fields are
 * `top` (or `__typename`), selecting nothing limited to some callers. Such an answer depends on
 * its variables and the views it read, never on who asks: the one definition of an answer that
 * may be handed to every caller, by cached answers here and by a CDN (cache-control.ts). O(1) for
 * a document decided before; O(document size) the first time.
 */
export function readsOnlyTops(schema: GraphQLSchema, document: DocumentNode): boolean {
  let bySchema = decisions.get(schema);
  if (!bySchema) decisions.set(schema, (bySchema = new WeakMap()));
  let decided = bySchema.get(document);
  if (decided === undefined) bySchema.set(document, (decided = walkForTops(schema, document)));
  return decided;
}

function walkForTops(schema: GraphQLSchema, document: DocumentNode): boolean {
  const queryType = schema.getQueryType();
  const typeInfo = new TypeInfo(schema);
  let shared = true;
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      OperationDefinition(node) {
        if (node.operation !== OperationTypeNode.QUERY) shared = false;
        return shared ? undefined : BREAK;
      },
      Field(node) {
        const parent = typeInfo.getParentType();
        const field = typeInfo.getFieldDef();
        const root = parent === queryType && node.name.value !== '__typename';
        if (!field || (root && node.name.value !== 'top') || scoped(field) || scoped(parent)) shared = false;
        return shared ? undefined : BREAK;
      },
      // A directive's arguments come from the variables, which key the answer; the directives themselves are the document's.
      Directive(node) {
        if (node.name.value !== 'include' && node.name.value !== 'skip') shared = false;
        return shared ? undefined : BREAK;
      },
    }),
  );
  return shared && document.definitions.some((definition) => definition.kind === Kind.OPERATION_DEFINITION);
}

/**
 * Shared tops answered once per refresh: a query that reads only the top of buckets (the same
 * document, operation and variables, nothing limited to some callers) answers every caller the
 * same, so its result is kept and handed to the next callers, the very same object, for as long
 * as the top cache would answer each bucket from the same read, each board it read is the same
 * definition (updateBoard here, or this process's refresh of a definition another process
 * changed, makes a new one: see board-directory.ts), each read's arguments still name the same
 * bucket (a DAILY top past midnight, a SEASON top once another season is current: resolved again
 * as a read resolves them), and no profile changed anywhere (renames and erasures rewrite a token
 * every process reads per answer: one Redis GET). A refresh, a topChanged event, a board's change,
 * a new bucket or the second passing makes the next caller execute it again.
 *
 * Runs after the read budget (read-limit.ts: it charges and refuses first) and inside the
 * observability plugin's hooks, so limits, rate limits, metrics and logs see every request (and
 * cached-bodies.ts, which hands a current one out before the pipeline, does the same); an
 * answer with errors is never kept (masking applies as always), and after Redis lost the index
 * no cached answer outlives the view it came from. O(1) per request beside the GET; an execution
 * that is kept costs one walk of its document the first time.
 */
export function createResponseCache(options: ResponseCacheOptions): ResponseCache {
  const perDocument = options.answersPerDocument ?? 100;
  const answers = new WeakMap<DocumentNode, Map<string, Shared>>();

  /** Hooks that keep the execution's result when it may be shared: no errors, and every top it read recorded. */
  function keepAfter(contextValue: unknown, document: DocumentNode, key: string, profiles: string | null) {
    const reads: Shared['reads'] = [];
    (contextValue as Context).topReads = reads;
    return {
      onExecuteDone({ result }: { result: ExecutionResult | AsyncIterable<ExecutionResult> }) {
        if (profiles === null || isAsyncIterable(result) || result.errors?.length || reads.length === 0) return;
        let byKey = answers.get(document);
        if (!byKey) answers.set(document, (byKey = new Map<string, Shared>()));
        byKey.delete(key);
        const kept = { result, profiles, reads };
        byKey.set(key, kept);
        if (byKey.size > perDocument) byKey.delete(byKey.keys().next().value!);
        sharedResults.set(result, kept);
      },
    };
  }

  /**
   * Whether a kept answer is the one to hand out with this profile-change token: built from what
   * every read would be served from now. Synchronous unless a read's bucket moves with the clock
   * or its board's seasons (TopRead.stillNamed).
   */
  const current = (kept: Shared, profiles: string | null): boolean | Promise<boolean> => {
    if (profiles === null || kept.profiles !== profiles) return false;
    if (!kept.reads.every(({ bucket, read, board }) => options.currentRead(bucket) === read && options.currentBoard(board.id) === board)) return false;
    const named = kept.reads.flatMap(({ stillNamed }) => (stillNamed ? [stillNamed()] : []));
    return named.length === 0 || Promise.all(named).then((all) => all.every(Boolean));
  };

  const plugin: Plugin = {
    onExecute({ args, setResultAndStopExecution }) {
      const document = args.document as DocumentNode;
      // Every other operation passes without a wait (no promise in its pipeline from here).
      if (!readsOnlyTops(args.schema as GraphQLSchema, document)) return undefined;
      return options.profileChanges().then((profiles) => {
        const key = `${args.operationName ?? ''}\n${JSON.stringify(args.variableValues ?? {})}`;
        const kept = answers.get(document)?.get(key);
        const handOut = (isCurrent: boolean) => {
          if (!kept || !isCurrent) return keepAfter(args.contextValue, document, key, profiles);
          setResultAndStopExecution(kept.result);
          return undefined;
        };
        const now = kept ? current(kept, profiles) : false;
        return typeof now === 'boolean' ? handOut(now) : now.then(handOut);
      });
    },
  };

  return {
    plugin,
    async isCurrent(result) {
      const kept = sharedResults.get(result);
      return kept !== undefined && (await current(kept, await options.profileChanges()));
    },
  };
}
