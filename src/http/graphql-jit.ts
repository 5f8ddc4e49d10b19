import {
  type ASTNode,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  type OperationDefinitionNode,
  OperationTypeNode,
  type SelectionSetNode,
  type Source,
  type ValueNode,
  getOperationAST,
  valueFromASTUntyped,
  visit,
} from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';

/**
 * What one operation compiled to, with the defaults its variable definitions declare (as a client
 * would send them); false when graphql-jit could not compile it (graphql-js runs it).
 */
type Plan = { compiled: CompiledQuery; defaults: [name: string, value: unknown][]; locate: (result: ExecutionResult) => ExecutionResult } | false;

/**
 * The variables as sent, with each declared default in place of a variable not sent. graphql-js
 * does this as it coerces; graphql-jit refuses a non-null variable with a default that was not sent
 * (`$withMetadata: Boolean! = false`, as our generated documents declare it). Sent values,
 * null included, stay as they are.
 */
function withDefaults(variables: Record<string, unknown> | null | undefined, defaults: readonly [name: string, value: unknown][]) {
  if (defaults.length === 0 || defaults.every(([name]) => variables?.[name] !== undefined)) return variables;
  const filled: Record<string, unknown> = { ...variables };
  for (const [name, value] of defaults) if (filled[name] === undefined) filled[name] = value;
  return filled;
}

/**
 * A compiled answer as Yoga's executor (@graphql-tools/executor) writes it, so that the same
 * request answers the same bytes whether it ran compiled or not:
 * - keys in that executor's order (errors, then data); graphql-jit puts data first;
 * - each error a graphql-js error at the same place of `source`. graphql-jit's errors carry their
 *   locations as line and column only, and Yoga's result processing builds every error anew from
 *   its source and positions (or nodes), so they would reach the client without `locations`.
 *   An error that has nodes is left as it is.
 */
function asExecutorAnswer(source: Source | undefined): (result: ExecutionResult) => ExecutionResult {
  const lineStarts = [0];
  for (let i = 0; i < (source?.body.length ?? 0); i++) if (source!.body[i] === '\n') lineStarts.push(i + 1);
  const located = (error: GraphQLError) =>
    error.nodes || !error.locations || !source
      ? error
      : new GraphQLError(error.message, {
          source,
          positions: error.locations.map(({ line, column }) => (lineStarts[line - 1] ?? 0) + column - 1),
          path: error.path,
          originalError: error.originalError,
          extensions: error.extensions,
        });
  // An answer without errors is graphql-jit's `{ data }` alone, already as the executor writes it.
  return (result) => {
    const { errors, data, extensions } = result;
    if (!errors) return result;
    return { errors: errors.map(located), ...(data === undefined ? {} : { data }), ...(extensions ? { extensions } : {}) };
  };
}

/** Whether a selection carries `@skip` or `@include`. */
const isConditional = (node: { directives?: readonly { name: { value: string } }[] | undefined }) =>
  node.directives?.some((directive) => directive.name.value === 'skip' || directive.name.value === 'include') ?? false;

/**
 * Whether some field of these selection sets (copies of one field merged into one answer key, or
 * an operation's root) is selected more than once at one place of the answer with at least one
 * copy under `@skip`/`@include` (on itself, or on a fragment that holds it). graphql-jit places
 * such a key where its first copy stands whether or not that copy is skipped, where graphql-js
 * places it where the first included copy stands: the same answer with its keys in another order.
 * Fragments are written out where they are spread (each at most once on a path: a cycle is
 * refused by validation anyway). Bounded by the document's fields (document-limits.ts).
 */
function mergesUnderCondition(sets: readonly SelectionSetNode[], fragments: ReadonlyMap<string, FragmentDefinitionNode>): boolean {
  const copies = new Map<string, { times: number; conditional: boolean; sets: SelectionSetNode[] }>();
  const spreading = new Set<string>();
  const collect = (set: SelectionSetNode, underCondition: boolean) => {
    for (const selection of set.selections) {
      const conditional = underCondition || isConditional(selection);
      if (selection.kind === Kind.FIELD) {
        const key = (selection.alias ?? selection.name).value;
        let copy = copies.get(key);
        if (!copy) copies.set(key, (copy = { times: 0, conditional: false, sets: [] }));
        copy.times += 1;
        copy.conditional ||= conditional;
        if (selection.selectionSet) copy.sets.push(selection.selectionSet);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        collect(selection.selectionSet, conditional);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || spreading.has(name)) continue;
        spreading.add(name);
        collect(fragment.selectionSet, conditional);
        spreading.delete(name);
      }
    }
  };
  for (const set of sets) collect(set, false);
  for (const copy of copies.values()) {
    if (copy.times > 1 && copy.conditional) return true;
    if (copy.sets.length > 0 && mergesUnderCondition(copy.sets, fragments)) return true;
  }
  return false;
}

/** Whether a variable stands inside a list or object literal (`{ replay: $r }`, `[$r, "fixed"]`). */
function hasNestedVariable(node: ASTNode): boolean {
  let nested = false;
  const inside = (value: ValueNode) => {
    visit(value, {
      Variable() {
        nested = true;
      },
    });
  };
  visit(node, {
    ListValue(value) {
      inside(value);
      return false;
    },
    ObjectValue(value) {
      inside(value);
      return false;
    },
  });
  return nested;
}

/**
 * Why an operation is not run compiled, or undefined when it may be: graphql-jit answers it with
 * the bytes graphql-js would, as far as test/graphql-jit.test.ts and the contract-wide
 * comparison in test/client-libraries.test.ts show. Only queries: a mutation records what it is
 * sent, and graphql-jit hands a custom scalar's parseLiteral no variables, so a variable inside a
 * JSON literal reached the store as null; a subscription has its own executor. Not a query that
 * puts a variable inside a list or object literal, for the same reason, nor one that merges a
 * field with a copy under `@skip`/`@include` (see mergesUnderCondition).
 */
export function notCompiledBecause(document: DocumentNode, operation: OperationDefinitionNode): string | undefined {
  if (operation.operation !== OperationTypeNode.QUERY) return `a ${operation.operation} runs on graphql-js`;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  if (hasNestedVariable(operation) || [...fragments.values()].some(hasNestedVariable)) return 'a variable inside a list or object literal';
  if (mergesUnderCondition([operation.selectionSet], fragments)) return 'a field merged with a copy under @skip or @include';
  return undefined;
}

export interface GraphqlJitOptions {
  /** Where a document graphql-jit refuses is reported (it then runs on graphql-js, as before). */
  log: Pick<Logger, 'warn'>;
  /** Runs of a document before it is compiled. Default 2: the second run compiles, and runs compiled. */
  runsBeforeCompiling?: number;
  /** The compiler. Default graphql-jit's compileQuery (tests count its calls). */
  compile?: typeof compileQuery;
}

/**
 * Queries a client repeats run from a compiled plan: graphql-jit turns the document into one
 * function that resolves and completes its selections without graphql-js's per-field walk (the
 * executor, its argument coercion and completion are a large part of a many-field read's service
 * CPU; bench/RESULTS.md has the figures, compiled and not). The resolvers are the schema's own, so
 * Pothos's validation and auth, the deadline, the read budget, the cached answers and error
 * masking (all envelop hooks around execution) run as before.
 *
 * Which documents:
 * - queries graphql-jit answers as graphql-js does (notCompiledBecause): never a mutation or a
 *   subscription.
 * - from their second run (`runsBeforeCompiling`): a document sent once (GraphiQL, a probe) is
 *   never compiled, so a client sending ever new documents makes the service compile at most once
 *   for every two runs of a document it has also parsed, validated and cost-checked. The plans are
 *   kept per parsed document (weakly), so they go when the parse caches (bounded: see
 *   document-limits.ts, validation-cache.ts) let the document go.
 *
 * A request error (an answer without data: graphql-jit raises them only while coercing the
 * variables, before any resolver runs) is answered by graphql-js instead, so it reads as graphql-js
 * words it. That also covers the one coercion graphql-jit gets wrong: it refuses an input object
 * sent as a variable without a non-null field that has a default (createBoard's `order`), where
 * graphql-js fills the default in.
 *
 * Must come before any plugin that wraps the execute function (the deadline's): it replaces the
 * function it is given.
 */
export function useGraphqlJit({ log, runsBeforeCompiling = 2, compile = compileQuery }: GraphqlJitOptions): Plugin {
  const runs = new WeakMap<DocumentNode, number>();
  /** Per document, per operation name ('' for none): a document may hold several operations. */
  const plans = new WeakMap<DocumentNode, Map<string, Plan>>();

  function planOf({ schema, document, operationName }: ExecutionArgs): Plan {
    let ofDocument = plans.get(document);
    if (!ofDocument) plans.set(document, (ofDocument = new Map<string, Plan>()));
    const key = operationName ?? '';
    let plan = ofDocument.get(key);
    if (plan === undefined) ofDocument.set(key, (plan = compiledPlan(schema, document, operationName)));
    return plan;
  }

  /** The plan of one operation; false for one graphql-js runs (see notCompiledBecause) or graphql-jit refuses. */
  function compiledPlan(schema: ExecutionArgs['schema'], document: DocumentNode, operationName: ExecutionArgs['operationName']): Plan {
    const operation = getOperationAST(document, operationName);
    if (!operation || notCompiledBecause(document, operation) !== undefined) return false;
    const compiled = compile(schema, document, operationName ?? undefined, {
      // Our generated documents put @include on fields inside fragments; this is the mode that honours it there.
      useExperimentalPathBasedSkipInclude: true,
    });
    if (!isCompiledQuery(compiled)) {
      log.warn({ errors: compiled.errors?.map((error) => error.message), operationName }, 'graphql-jit could not compile an operation; it runs on graphql-js');
      return false;
    }
    const defaults = (operation.variableDefinitions ?? []).flatMap((definition): [string, unknown][] =>
      definition.defaultValue ? [[definition.variable.name.value, valueFromASTUntyped(definition.defaultValue)]] : [],
    );
    return { compiled, defaults, locate: asExecutorAnswer(document.loc?.source) };
  }

  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const { document } = args as ExecutionArgs;
      const run = (runs.get(document) ?? 0) + 1;
      if (run < runsBeforeCompiling) {
        runs.set(document, run);
        return;
      }
      const plan = planOf(args);
      if (!plan) return;
      const { compiled, defaults, locate } = plan;
      // A query or a mutation: graphql-js answers it with one result, never a stream.
      const uncompiled = executeFn as (execution: ExecutionArgs) => Promise<ExecutionResult> | ExecutionResult;
      setExecuteFn(async (execution: ExecutionArgs) => {
        const result = await compiled.query(execution.rootValue, execution.contextValue, withDefaults(execution.variableValues, defaults));
        // No resolver ran (see above): graphql-js answers the request from the start.
        if (result.data === undefined && result.errors) return uncompiled(execution);
        return locate(result);
      });
    },
  };
}
