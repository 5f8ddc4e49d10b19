import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  GraphQLError,
  GraphQLIncludeDirective,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  GraphQLSkipDirective,
  Kind,
  type OperationDefinitionNode,
  SchemaMetaFieldDef,
  type SelectionSetNode,
  TypeMetaFieldDef,
  type ValueNode,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  getNullableType,
  getOperationAST,
  getVariableValues,
  isAbstractType,
  isCompositeType,
  isLeafType,
  isListType,
  isObjectType,
} from 'graphql';
import { MAX_COHORT_SIZE, MAX_TIERS } from '../model/league.js';
import { MAX_REWARD_BANDS } from '../model/rewards.js';
import { MAX_TIE_BREAKS } from '../model/board.js';
import { MAX_WEBHOOKS } from '../model/webhooks.js';
import { MAX_FRIENDS, MAX_REGIONS } from '../model/contract.js';

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
  // A page of standings (and of seasonResults) holds `last` rows going backwards (issue 25), else
  // `first` (`first` keeps its default beside `last`, so it says nothing then).
  'StandingConnection.edges': (_args, parent) => count(parent.last ?? parent.first),
  // A period's buckets (Board.periodBuckets) and a player's history, each page sized by its first.
  'BucketConnection.edges': (_args, parent) => count(parent.first),
  'BucketStandingConnection.edges': (_args, parent) => count(parent.first),
  // A closed bucket's awards (issue 58), a page sized by its first.
  'AwardConnection.edges': (_args, parent) => count(parent.first),
  'Query.scoreDistribution': (args) => count(args.bins),
  // Leagues (issue 57): a cohort holds at most MAX_COHORT_SIZE players; a league at most MAX_TIERS tiers.
  'Cohort.entries': () => MAX_COHORT_SIZE,
  'Query.leagueTiers': () => MAX_TIERS,
  // Issue 58: a board's prize bands, at most MAX_REWARD_BANDS; at most MAX_WEBHOOKS webhooks; a
  // webhook's deliveries, a page sized by its first.
  'Board.rewards': () => MAX_REWARD_BANDS,
  // Issue 59: a board's tie-break columns, at most MAX_TIE_BREAKS.
  'Board.tieBreaks': () => MAX_TIE_BREAKS,
  'Query.webhooks': () => MAX_WEBHOOKS,
  'WebhookDeliveryConnection.edges': (_args, parent) => count(parent.first),
  'Mutation.submitScores': (args) => (Array.isArray(args.inputs) ? args.inputs.length : 0),
  'SubmitScorePayload.standings': () => MAX_BUCKETS_PER_RESULT,
  // The console's admin reads (see src/console/): sized by their own argument, or taken at 100 rows
  // (a board's buckets and a player's board scores are capped there; key lists are short).
  'Board.buckets': () => 100,
  'Player.boardScores': () => 100,
  'Player.recentResults': (args) => count(args.first),
  'Query.flaggedPlayers': (args) => count(args.first),
  // Issue 25: the removeEntry calls recorded, sized by their own first (at most 200).
  'Query.entryRemovals': (args) => count(args.first),
  'Query.searchPlayers': (args) => count(args.first),
  'Query.apiKeys': () => 100,
  'Mutation.revokeApiKey': () => UNSIZED_LIST_ROWS,
};

/**
 * Scalar fields whose resolvers read a store themselves, once for each place they are asked (an
 * alias with other arguments is another read): each costs a row, as an object does, so twenty
 * aliases of `Board.size` cost twenty. The other scalars cost nothing of their own: they are read
 * with the object that holds them (a standing's recorded time and metadata are looked up once a
 * standing, whatever aliases ask for them, and in one query a list).
 */
export const STORE_READING_SCALARS: ReadonlySet<string> = new Set(['Board.size', 'Board.nextReset']);

/** The meta fields introspection answers at the query root, which no type lists among its fields. */
const META_FIELDS: Record<string, GraphQLField<unknown, unknown>> = { __schema: SchemaMetaFieldDef, __type: TypeMetaFieldDef };

interface Walk {
  schema: GraphQLSchema;
  fragments: Record<string, FragmentDefinitionNode>;
  variables: Args;
  /** The variables whose values the walk has read so far (see OperationCost.variablesRead). */
  read: Set<string>;
  /** Introspection objects counted so far, and past how many the count stops (see introspectionRows). */
  introspected: number;
  stopAbove: number;
}

/** Thrown when introspection counts past the walk's stopAbove: the operation costs more than that. */
class PastTheCount extends Error {}

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
 * holds it): each object a field returns is one row, a list counts every row it may hold, and a
 * scalar that reads a store (STORE_READING_SCALARS) one row. Introspection counts the objects its
 * answer holds (introspectionRows). An argument or directive that does not coerce throws its
 * GraphQLError (see operationCost).
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
    } else if (isObjectType(type)) {
      const meta = type === walk.schema.getQueryType() ? META_FIELDS[selection.name.value] : undefined;
      if (meta && selection.selectionSet) {
        rows += times * introspectionRows(walk, { ...selection, selectionSet: selection.selectionSet }, meta, walk.schema);
        continue;
      }
      const field: GraphQLField<unknown, unknown> | undefined = type.getFields()[selection.name.value];
      if (!field) continue;
      if (!selection.selectionSet || !isCompositeType(getNamedType(field.type))) {
        if (STORE_READING_SCALARS.has(`${type.name}.${field.name}`)) {
          // Its arguments are coerced as it runs, as an object field's are: one that fails is refused here too.
          getArgumentValues(field, selection, walk.variables);
          rows += times;
        }
        continue;
      }
      const args = readNoting(walk, selection, getArgumentValues(field, selection, walk.variables));
      const length = isListType(getNullableType(field.type)) ? (LIST_LENGTHS[`${type.name}.${field.name}`]?.(args, parentArgs) ?? UNSIZED_LIST_ROWS) : 1;
      const fieldRows = times * length;
      rows += fieldRows + rowsUnder(walk, selection.selectionSet, getNamedType(field.type), fieldRows, args);
    }
  }
  return rows;
}

/**
 * The objects an introspection field's answer holds under `selection`, counted by resolving it
 * as execution will (graphql-js's own introspection resolvers, on the schema itself): the answer
 * is the schema's, so its size is known before it runs, however the selection nests or aliases.
 * O(objects counted); the count stops past the walk's stopAbove (it is refused then anyway).
 */
function introspectionRows(
  walk: Walk,
  selection: FieldNode & { selectionSet: SelectionSetNode },
  field: GraphQLField<unknown, unknown>,
  source: unknown,
): number {
  const args = readNoting(walk, selection, getArgumentValues(field, selection, walk.variables));
  const info = { schema: walk.schema } as GraphQLResolveInfo;
  const value: unknown = field.resolve ? field.resolve(source, args, undefined, info) : (source as Args | null)?.[field.name];
  const type = getNamedType(field.type);
  let rows = 0;
  for (const item of Array.isArray(value) ? (value as unknown[]) : [value]) {
    if (item === null || item === undefined) continue;
    rows += 1;
    walk.introspected += 1;
    if (walk.introspected > walk.stopAbove) throw new PastTheCount();
    if (isObjectType(type)) rows += introspectedUnder(walk, selection.selectionSet, type, item);
  }
  return rows;
}

/** The objects introspection returns under one selection set of an introspection object (`source`, of `type`). */
function introspectedUnder(walk: Walk, selectionSet: SelectionSetNode, type: GraphQLObjectType, source: unknown): number {
  let rows = 0;
  for (const selection of selectionSet.selections) {
    if (!included(walk, selection)) continue;
    if (selection.kind === Kind.INLINE_FRAGMENT) rows += introspectedUnder(walk, selection.selectionSet, type, source);
    else if (selection.kind === Kind.FRAGMENT_SPREAD) {
      const fragment = walk.fragments[selection.name.value];
      if (fragment) rows += introspectedUnder(walk, fragment.selectionSet, type, source);
    } else if (selection.selectionSet) {
      const field = type.getFields()[selection.name.value];
      if (field) rows += introspectionRows(walk, selection as FieldNode & { selectionSet: SelectionSetNode }, field, source);
    }
  }
  return rows;
}

export interface OperationCost {
  operation: OperationDefinitionNode;
  /** The document's fragments by name, for counting what an answer returned (rowsReturned). */
  fragments: Readonly<Record<string, FragmentDefinitionNode>>;
  /** The rows the operation can return at most: every object it names, lists at their largest, aliases each counted. At least 1. */
  rows: number;
  /**
   * The variables whose values decided `rows` (a list's size, a `@skip`): the same operation with
   * the same values of these costs the same whatever the other variables hold, so a cost can be
   * kept per these alone (read-limit.ts), as long as the variables sent as null are the same too
   * (a null can make an argument fail, see `refusal`).
   */
  variablesRead: ReadonlySet<string>;
  /**
   * Why the operation is refused before it runs, when an argument or directive of it does not
   * coerce with these variables (a nullable variable with a default, sent as null into a non-null
   * argument, passes the variables' own coercion): graphql-js would fail that one field as it runs
   * and run the rest, which its cost could not be worked out for. BAD_USER_INPUT.
   */
  refusal?: GraphQLError;
}

export interface OperationCostOptions {
  /**
   * Past how many rows the count of introspection stops: an operation that costs more is refused
   * anyway, and a selection nested through `ofType` and `fields` can hold exponentially many.
   * `rows` is then this plus one. Default: no stop.
   */
  stopAbove?: number;
}

/**
 * What one operation of a document costs, from its arguments as it will run them (literals,
 * variables and the schema's defaults alike). O(size of the document), and O(answer) for
 * introspection. Undefined only when execution refuses the whole operation itself before running
 * any of it (no such operation, variables that do not coerce); an argument that does not coerce
 * is a `refusal`, never a cost left out.
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: Args | null | undefined,
  { stopAbove = Number.MAX_SAFE_INTEGER }: OperationCostOptions = {},
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
  const walk: Walk = { schema, fragments, variables: coerced.coerced, read: new Set(), introspected: 0, stopAbove };
  try {
    const rows = Math.max(1, rowsUnder(walk, operation.selectionSet, root, 1, {}));
    return { operation, fragments, rows, variablesRead: walk.read };
  } catch (error) {
    if (error instanceof PastTheCount) return { operation, fragments, rows: stopAbove + 1, variablesRead: walk.read };
    // Anything else is a fault of the walk's, not the client's: nothing runs uncosted.
    if (!(error instanceof GraphQLError)) throw error;
    const refusal = new GraphQLError(error.message, { ...(error.nodes ? { nodes: error.nodes } : {}), extensions: { code: 'BAD_USER_INPUT' } });
    return { operation, fragments, rows: 1, variablesRead: walk.read, refusal };
  }
}

/** The fields of `selectionSets` on an object of `type`, by response key, fragments followed (an answer's keys say what ran). */
function fieldsByKey(
  schema: GraphQLSchema,
  fragments: Readonly<Record<string, FragmentDefinitionNode>>,
  selectionSets: readonly SelectionSetNode[],
  type: GraphQLObjectType,
) {
  const byKey = new Map<string, FieldNode[]>();
  const applies = (condition: string | undefined) => {
    if (condition === undefined || condition === type.name) return true;
    const on = schema.getType(condition);
    return on !== undefined && isAbstractType(on) && schema.isSubType(on, type);
  };
  const collect = (selectionSet: SelectionSetNode) => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        const held = byKey.get(key);
        if (held) held.push(selection);
        else byKey.set(key, [selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (applies(selection.typeCondition?.name.value)) collect(selection.selectionSet);
      } else {
        const fragment = fragments[selection.name.value];
        if (fragment && applies(fragment.typeCondition.name.value)) collect(fragment.selectionSet);
      }
    }
  };
  for (const selectionSet of selectionSets) collect(selectionSet);
  return byKey;
}

/** The rows in one field's value: each object one, and what its selection returned under it. */
function rowsInValue(
  schema: GraphQLSchema,
  fragments: Readonly<Record<string, FragmentDefinitionNode>>,
  value: unknown,
  type: GraphQLNamedType,
  selectionSets: readonly SelectionSetNode[],
): number {
  if (value === null || typeof value !== 'object') return 0;
  const items = Array.isArray(value) ? (value as unknown[]) : [value];
  // Once a list: its items share a selection.
  const fields = isObjectType(type) ? fieldsByKey(schema, fragments, selectionSets, type) : undefined;
  let rows = 0;
  for (const item of items) {
    if (item === null || typeof item !== 'object') continue;
    // A list of lists: its items are counted the same way.
    if (Array.isArray(item)) rows += rowsInValue(schema, fragments, item, type, selectionSets);
    else rows += 1 + (fields && isObjectType(type) ? rowsInObject(schema, fragments, item as Args, type, fields) : 0);
  }
  return rows;
}

function rowsInObject(
  schema: GraphQLSchema,
  fragments: Readonly<Record<string, FragmentDefinitionNode>>,
  object: Args,
  type: GraphQLObjectType,
  fields: Map<string, FieldNode[]>,
): number {
  let rows = 0;
  for (const [key, nodes] of fields) {
    if (!(key in object)) continue;
    const name = nodes[0]!.name.value;
    const field = (type === schema.getQueryType() ? META_FIELDS[name] : undefined) ?? type.getFields()[name];
    if (!field) continue;
    const named = getNamedType(field.type);
    if (isLeafType(named)) {
      if (STORE_READING_SCALARS.has(`${type.name}.${name}`)) rows += 1;
      continue;
    }
    rows += rowsInValue(
      schema,
      fragments,
      object[key],
      named,
      nodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : [])),
    );
  }
  return rows;
}

/**
 * The rows an answer of the operation holds, counted as its cost counts them (each object one, a
 * scalar that reads a store one), from the answer's data itself: what a read is charged in the
 * end (read-limit.ts). Never more than the cost, for the same operation and variables. O(answer).
 */
export function rowsReturned(schema: GraphQLSchema, cost: Pick<OperationCost, 'operation' | 'fragments'>, data: unknown): number {
  const root = schema.getRootType(cost.operation.operation);
  if (!root || data === null || typeof data !== 'object') return 0;
  // The root object itself is no row: the cost counts only what its fields return.
  return rowsInObject(schema, cost.fragments, data as Args, root, fieldsByKey(schema, cost.fragments, [cost.operation.selectionSet], root));
}
