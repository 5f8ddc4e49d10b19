import { type DocumentNode, type ExecutionResult, GraphQLError, type GraphQLSchema, OperationTypeNode, getOperationAST } from 'graphql';
import { type Plugin, isAsyncIterable } from 'graphql-yoga';
import type { Context } from '../resolvers/context.js';
import { clientError } from '../errors.js';
import { documentLimitError } from './document-limits.js';
import { type OperationCost, operationCost, rowsReturned } from './operation-cost.js';
import type { RateLimits, ReadCharge } from '../services/rate-limits.js';

export interface ReadBudgetOptions {
  /** The most rows one query or subscription may return (see operation-cost.ts); more is refused with `extensions.limit` "cost". Default 5,000. */
  maxOperationRows?: number;
  /** topChanged subscriptions one client address may hold open at once in this process, over every socket and event stream. Default 1,000. */
  subscriptionsPerClient?: number;
}

/** The costs kept for one document: by the values of the variables any of its walks read. */
interface KeptCosts {
  deciding: string[];
  byKey: Map<string, OperationCost>;
}

/** One operation as it will run, and who sends it. */
export interface Admission {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName: string | undefined;
  variables: Record<string, unknown> | undefined;
  /** The client address whose budgets it spends. */
  client: string;
}

/** An admitted read, charged its largest cost as it started. */
export interface AdmittedRead {
  /**
   * Charges the read what `result` returned: gives back the rows of its charge that the answer
   * does not hold (operation-cost.ts rowsReturned). Call it once, with the answer sent. O(answer),
   * once per result object (a shared answer is counted once).
   */
  settle(result: ExecutionResult): void;
}

/** What admit answers: the refusal, or the admitted read to settle (undefined when there is nothing to settle). */
export type AdmitVerdict = GraphQLError | AdmittedRead | undefined;

export interface ReadBudget {
  /**
   * The refusal of an operation (its cost, or its client's budget spent), or, when it may run, its
   * budget then spent at its largest cost, what to settle once answered (or undefined when rows
   * are not budgeted). Mutations always may. A promise only when the budget is to be waited for
   * (a rate limit is on).
   */
  admit(operation: Admission): AdmitVerdict | Promise<AdmitVerdict>;
  /** Admits (and counts the subscriptions of) every operation Yoga runs. */
  plugin: Plugin;
}

/** An envelop hook's arguments as the operation they run. */
const admissionOf = (args: { schema: unknown; document: unknown; operationName?: unknown; variableValues?: unknown; contextValue: unknown }): Admission => ({
  schema: args.schema as GraphQLSchema,
  document: args.document as DocumentNode,
  operationName: args.operationName as string | undefined,
  variables: args.variableValues as Record<string, unknown> | undefined,
  client: (args.contextValue as Context).client,
});

/**
 * What a read may cost, checked as it starts, with its arguments as it will run them (variables
 * included, so a `limit` in a variable costs what a literal one does): an operation whose rows
 * pass `maxOperationRows` is refused, and so is one with an argument that does not coerce (its
 * cost could not be known; operation-cost.ts); any other query or subscription spends one read
 * and its largest rows from its client's budgets (rate-limits.ts), and a query is given back,
 * once answered, the rows its answer does not hold: a client is charged what it was sent, as
 * Shopify's API refunds requested minus actual cost. A client over its budget gets RATE_LIMITED
 * and costs the stores nothing. Subscriptions are charged their largest when they start (what
 * they send goes on) and counted while open, per client. Mutations are bounded by their own
 * inputs (1,000 results, 1,000 friends) and limited per API key where they are handled
 * (submissions count each result).
 */
export function createReadBudget(limits: RateLimits, { maxOperationRows = 5_000, subscriptionsPerClient = 1_000 }: ReadBudgetOptions = {}): ReadBudget {
  const openSubscriptions = new Map<string, number>();
  // A document's cost per operation and the values of the variables that decide it, walked once:
  // the hot reads repeat both (the same few boards and limits, whoever the player), and Yoga's
  // parse cache hands every repeat the same document.
  const costs = new WeakMap<DocumentNode, KeptCosts>();
  const COSTS_PER_DOCUMENT = 100;
  const MAX_KEPT_KEY = 1_000;

  function costOf(schema: GraphQLSchema, document: DocumentNode, operationName: string | undefined, variables: Record<string, unknown> | undefined) {
    let kept = costs.get(document);
    if (!kept) costs.set(document, (kept = { deciding: [], byKey: new Map() }));
    // The variables sent as null, whatever the walk read: a null can make an argument fail to
    // coerce (operation-cost.ts, refusal) where the kept cost was walked with a value.
    let nulls = '';
    for (const name in variables) if (variables[name] === null) nulls += `${name},`;
    // An unset variable (its default) and a null one are told apart: [] and [null].
    const keyOf = (deciding: readonly string[]) =>
      `${operationName ?? ''}\n${nulls}\n${JSON.stringify(deciding.map((name) => (variables?.[name] === undefined ? [] : [variables[name]])))}`;
    const key = keyOf(kept.deciding);
    const known = kept.byKey.get(key);
    if (known) return known;
    // Counting introspection stops past the limit: the operation is refused then anyway.
    const cost = operationCost(schema, document, operationName, variables, { stopAbove: maxOperationRows });
    // Not runnable as sent (execution answers why), or refused: nothing is kept.
    if (!cost || cost.refusal) return cost;
    // Sound while `deciding` holds every variable any walk of this document read: two sets of
    // variables equal on it walk the same path, reading the same values (operation-cost.ts).
    const unread = [...cost.variablesRead].filter((name) => !kept.deciding.includes(name));
    if (unread.length > 0) {
      kept.deciding = [...kept.deciding, ...unread];
      kept.byKey.clear();
    }
    const keptKey = unread.length > 0 ? keyOf(kept.deciding) : key;
    // Large deciding values (a long list in a variable) are walked every time rather than kept.
    if (keptKey.length > MAX_KEPT_KEY) return cost;
    kept.byKey.set(keptKey, cost);
    if (kept.byKey.size > COSTS_PER_DOCUMENT) kept.byKey.delete(kept.byKey.keys().next().value!);
    return cost;
  }

  /** The rows each answer returned, counted once however often it is sent (a shared answer). */
  const returned = new WeakMap<ExecutionResult, number>();
  function settleWith(schema: GraphQLSchema, cost: OperationCost, charge: ReadCharge): AdmittedRead {
    return {
      settle(result) {
        // The answer is walked only when something of its charge could still come back.
        if (!limits.refundable(charge)) return;
        let rows = returned.get(result);
        if (rows === undefined) returned.set(result, (rows = rowsReturned(schema, cost, result.data)));
        // At least a row, as the charge was.
        limits.refund(charge, charge.rows - Math.max(1, rows));
      },
    };
  }

  function admit({ schema, document, operationName, variables, client }: Admission): AdmitVerdict | Promise<AdmitVerdict> {
    // Mutations first, before their variables are coerced a second time (a batch of 1,000 results).
    if (getOperationAST(document, operationName)?.operation === OperationTypeNode.MUTATION) return undefined;
    const cost = costOf(schema, document, operationName, variables);
    // Not runnable at all as it is (no such operation, bad variables): execution answers why, running none of it.
    if (!cost) return undefined;
    if (cost.refusal) return cost.refusal;
    if (cost.rows > maxOperationRows) return documentLimitError('cost', maxOperationRows, cost.rows);
    return limits.read(client, cost.rows)?.then(
      (charge) => charge && settleWith(schema, cost, charge),
      (error: unknown) => {
        if (error instanceof GraphQLError) return error;
        throw error;
      },
    );
  }

  const plugin: Plugin = {
    onExecute({ args, setResultAndStopExecution }) {
      const decide = (verdict: AdmitVerdict) => {
        if (verdict instanceof GraphQLError) return setResultAndStopExecution({ errors: [verdict] });
        if (!verdict) return;
        return {
          onExecuteDone: ({ result }: { result: unknown }) => {
            // A stream (not served by this schema) stays charged its largest.
            if (!isAsyncIterable(result)) verdict.settle(result as ExecutionResult);
          },
        };
      };
      // Synchronous unless the budget is waited for: the other execute hooks then wait no turn for it.
      const verdict = admit(admissionOf(args));
      return verdict instanceof Promise ? verdict.then(decide) : decide(verdict);
    },
    async onSubscribe({ args, setResultAndStopExecution }) {
      const client = (args.contextValue as unknown as Context).client;
      const open = openSubscriptions.get(client) ?? 0;
      const refusal =
        open >= subscriptionsPerClient
          ? clientError('RATE_LIMITED', `This client has ${open} subscriptions open, the most allowed; close one first.`)
          : await admit(admissionOf(args));
      // A subscription stays charged its largest: what it sends goes on after its first answer.
      if (refusal instanceof GraphQLError) return setResultAndStopExecution({ errors: [refusal] });
      openSubscriptions.set(client, (openSubscriptions.get(client) ?? 0) + 1);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        const left = (openSubscriptions.get(client) ?? 1) - 1;
        if (left > 0) openSubscriptions.set(client, left);
        else openSubscriptions.delete(client);
      };
      return {
        onSubscribeResult: ({ result }) => {
          // A subscription refused as it starts (no such board) never streams, so never ends.
          if (!isAsyncIterable(result)) return release();
          return { onEnd: release };
        },
        onSubscribeError: release,
      };
    },
  };
  return { admit, plugin };
}
