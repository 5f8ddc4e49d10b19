import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  GraphQLIncludeDirective,
  type GraphQLNamedType,
  type GraphQLSchema,
  GraphQLSkipDirective,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  getNullableType,
  getOperationAST,
  getVariableValues,
  isCompositeType,
  isListType,
  isObjectType,
} from 'graphql';
import { MAX_REGIONS } from '../operations/boards.js';
import { MAX_FRIENDS } from '../operations/reads.js';

/**
 * How many rows a list without a size argument (`boards`, a board's `seasons`) is taken to hold.
 * They are short in practice (a board list, a season list), and nothing else bounds them.
 */
export const UNSIZED_LIST_ROWS = 20;

/** The most buckets one result is written to (five periods, on the global board and one region), so the most PeriodStandings a submission answers. */
export const MAX_BUCKETS_PER_RESULT = 10;

type Args = Record<string, unknown>;
/** How many rows a list field returns at most, from its own arguments and those of the field above it. */
type ListLength = (args: Args, parentArgs: Args) => number;

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? Math.max(0, value) : 0);

/**
 * Every list of objects the schema serves, with the most rows it can hold. A test walks the schema
 * and fails on a list of objects missing here, so a new list cannot be free by omission.
 */
export const LIST_LENGTHS: Record<string, ListLength> = {
  'Query.boards': () => UNSIZED_LIST_ROWS,
  'Board.seasons': () => UNSIZED_LIST_ROWS,
  // At most one per region.
  'Board.regionTimeZones': () => MAX_REGIONS,
  'Query.around': (args) => 2 * count(args.radius) + 1,
  // The player and every friend.
  'Query.friends': () => MAX_FRIENDS + 1,
  'TopBoard.entries': (_args, parent) => count(parent.limit),
  'StandingConnection.edges': (_args, parent) => count(parent.first),
  'Mutation.submitScores': (args) => (Array.isArray(args.inputs) ? args.inputs.length : 0),
  'SubmitScorePayload.standings': () => MAX_BUCKETS_PER_RESULT,
  // The console's admin reads (see src/console/): sized by their own argument, or taken at 100 rows
  // (a board's buckets and a player's board scores are capped there; key lists are short).
  'Board.buckets': () => 100,
  'Player.boardScores': () => 100,
  'Player.recentResults': (args) => count(args.first),
  'Query.flaggedPlayers': (args) => count(args.first),
  'Query.searchPlayers': (args) => count(args.first),
  'Query.apiKeys': () => 100,
  'Mutation.revokeApiKey': () => UNSIZED_LIST_ROWS,
};

interface Walk {
  schema: GraphQLSchema;
  fragments: Record<string, FragmentDefinitionNode>;
  variables: Args;
  /** The variables whose values the walk has read so far (see OperationCost.variablesRead). */
  read: Set<string>;
}

/** Notes every variable `value` holds, at any depth, as read. */
function noteVariables(read: Set<string>, value: ValueNode): void {
  if (value.kind === Kind.VARIABLE) read.add(value.name.value);
  else if (value.kind === Kind.LIST) for (const item of value.values) noteVariables(read, item);
  else if (value.kind === Kind.OBJECT) for (const field of value.fields) noteVariables(read, field.value);
}

/** False for a selection that `@skip` or `@include` leaves out. */
function included(walk: Walk, node: Parameters<typeof getDirectiveValues>[1]): boolean {
  for (const directive of node.directives ?? []) {
    if (directive.name.value === 'skip' || directive.name.value === 'include') for (const arg of directive.arguments ?? []) noteVariables(walk.read, arg.value);
  }
  if (getDirectiveValues(GraphQLSkipDirective, node, walk.variables)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, walk.variables)?.if !== false;
}

/**
 * A field's argument values that note, as each is read, the variables it came from: the walk's
 * list lengths read one or two arguments of a field (a `limit`, not a `playerId`), so a cost
 * reused for other values of the rest stays exact.
 */
function readNoting(walk: Walk, selection: FieldNode, args: Args): Args {
  return new Proxy(args, {
    get(target, name) {
      const node = typeof name === 'string' ? selection.arguments?.find((arg) => arg.name.value === name) : undefined;
      if (node) noteVariables(walk.read, node.value);
      return target[name as string];
    },
  });
}

/**
 * The rows under one selection set of `type`, reached `times` times (the rows of the field that
 * holds it): each object a field returns is one row, a list counts every row it may hold.
 */
function rowsUnder(walk: Walk, selectionSet: SelectionSetNode, type: GraphQLNamedType, times: number, parentArgs: Args): number {
  let rows = 0;
  for (const selection of selectionSet.selections) {
    if (!included(walk, selection)) continue;
    if (selection.kind === Kind.INLINE_FRAGMENT) {
      const on = selection.typeCondition ? (walk.schema.getType(selection.typeCondition.name.value) ?? type) : type;
      rows += rowsUnder(walk, selection.selectionSet, on, times, parentArgs);
    } else if (selection.kind === Kind.FRAGMENT_SPREAD) {
      const fragment = walk.fragments[selection.name.value];
      if (fragment) rows += rowsUnder(walk, fragment.selectionSet, walk.schema.getType(fragment.typeCondition.name.value) ?? type, times, parentArgs);
    } else if (selection.selectionSet && isObjectType(type)) {
      const field: GraphQLField<unknown, unknown> | undefined = type.getFields()[selection.name.value];
      if (!field || !isCompositeType(getNamedType(field.type))) continue;
      const args = readNoting(walk, selection, getArgumentValues(field, selection, walk.variables));
      const length = isListType(getNullableType(field.type)) ? (LIST_LENGTHS[`${type.name}.${field.name}`]?.(args, parentArgs) ?? UNSIZED_LIST_ROWS) : 1;
      const fieldRows = times * length;
      rows += fieldRows + rowsUnder(walk, selection.selectionSet, getNamedType(field.type), fieldRows, args);
    }
  }
  return rows;
}

export interface OperationCost {
  operation: OperationDefinitionNode;
  /** The rows the operation can return at most: every object it names, lists at their largest, aliases each counted. At least 1. */
  rows: number;
  /**
   * The variables whose values decided `rows` (a list's size, a `@skip`): the same operation with
   * the same values of these costs the same whatever the other variables hold, so a cost can be
   * kept per these alone (read-limit.ts).
   */
  variablesRead: ReadonlySet<string>;
}

/**
 * What one operation of a document costs, from its arguments as it will run them (literals,
 * variables and the schema's defaults alike). O(size of the document). Undefined when the
 * operation or its variables are not valid: execution refuses those itself.
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: Args | null | undefined,
): OperationCost | undefined {
  const operation = getOperationAST(document, operationName ?? undefined);
  if (!operation) return undefined;
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], rawVariables ?? {});
  if (coerced.errors) return undefined;
  const root = schema.getRootType(operation.operation);
  if (!root) return undefined;
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  }
  const read = new Set<string>();
  try {
    const rows = Math.max(1, rowsUnder({ schema, fragments, variables: coerced.coerced, read }, operation.selectionSet, root, 1, {}));
    return { operation, rows, variablesRead: read };
  } catch {
    // An argument that does not coerce: execution answers it with its own error.
    return undefined;
  }
}
