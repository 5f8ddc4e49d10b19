import type { IncomingMessage } from 'node:http';
import { type DocumentNode, type ExecutionResult, GraphQLError, type GraphQLSchema } from 'graphql';
import type { OperationObserver } from './observe.js';
import type { ReadBudget } from './read-limit.js';
import { type ResponseCache, isCachedResult } from './response-cache.js';

export interface CachedBodiesOptions {
  /** Where cached answers are kept, and whether one is still current (response-cache.ts). */
  shared: ResponseCache;
  /** The read budget every query spends (read-limit.ts). */
  budget: ReadBudget;
  /** The observation every operation gets (observe.ts). */
  observe: OperationObserver;
  /** Who a request is from, as the request context says (client-address.ts). */
  clientOf: (req: IncomingMessage) => string;
  /** Request bodies kept; the oldest kept goes first. Default 1,000. */
  maxBodies?: number;
  /** The longest body kept, in characters: a longer one always runs the pipeline. Default 4,096. */
  maxBodyLength?: number;
}

/** The operation a body was run as (fast-graphql.ts), for its answer to be kept. */
export interface RanOperation {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName: string | undefined;
  variables: Record<string, unknown> | undefined;
}

/** The operation a kept body runs, and its last cached answer. */
type Kept = RanOperation & { result: ExecutionResult };

export interface CachedBodies {
  /**
   * The answer to this request body without the pipeline, or undefined (then or once the promise
   * settles) when it must run: its body last answered a cached answer that is still current, and
   * the request is anonymous. Synchronous undefined for a body not kept. O(body) for the lookup.
   */
  answer(req: IncomingMessage, body: string): Promise<ExecutionResult | undefined> | undefined;
  /** Keeps the body of a single operation whose answer was a shared one (anything else is ignored). O(1). */
  keep(req: IncomingMessage, body: string, operation: RanOperation, result: ExecutionResult): void;
}

/**
 * Shared tops answered before the pipeline: a body whose last answer was a cached answer (a query
 * of shared tops only, response-cache.ts) is answered that same result again, without a context,
 * envelop's orchestration or execution, while the cached answer is current. The pipeline's
 * guarantees that such a request would meet are kept here, each by the same code:
 * - the read budget: the operation's cost is checked and spent from its client's budgets, and
 *   RATE_LIMITED answered past them (ReadBudget.admit), then settled to the rows the answer holds;
 * - currency: the cached answer's own check (ResponseCache.isCurrent: one GET of the profile-change
 *   token, and the top cache's reads), so a rename, a refresh or an emptied Redis shows exactly as
 *   on the pipeline;
 * - metrics and logs: the operation is observed as the plugin observes it (observe.ts);
 * - masking and serialisation: the result is the pipeline's own, serialised by the transport.
 * What the pipeline would do differently for a caller is never skipped: only anonymous requests
 * are answered here (a key is identified, and its failures budgeted, by the context), and a body
 * is kept only after the pipeline took it (document limits, persisted documents, validation).
 *
 * Why: the profile of `top` (bench/RESULTS.md) put envelop's orchestration of a request, up to the
 * plugin that hands out the kept result, at about a third of the service's work for it.
 */
export function createCachedBodies(options: CachedBodiesOptions): CachedBodies {
  const { shared, budget, observe, clientOf, maxBodies = 1_000, maxBodyLength = 4_096 } = options;
  const bodies = new Map<string, Kept>();

  async function serve(req: IncomingMessage, body: string, kept: Kept): Promise<ExecutionResult | undefined> {
    const { document, operationName, variables } = kept;
    const done = observe({ document, operationName, variableValues: variables }, 'execute');
    if (!(await shared.isCurrent(kept.result))) {
      // The pipeline answers it, and keeps its new answer.
      if (bodies.get(body) === kept) bodies.delete(body);
      return undefined;
    }
    const verdict = await budget.admit({ schema: kept.schema, document, operationName, variables, client: clientOf(req) });
    const result = verdict instanceof GraphQLError ? { errors: [verdict] } : kept.result;
    // Charged what the answer returned, as on the pipeline (read-limit.ts).
    if (verdict && !(verdict instanceof GraphQLError)) verdict.settle(result);
    done(result.errors, result);
    return result;
  }

  return {
    answer(req, body) {
      if (req.headers.authorization !== undefined) return undefined;
      const kept = bodies.get(body);
      return kept && serve(req, body, kept);
    },
    keep(req, body, operation, result) {
      if (req.headers.authorization !== undefined || body.length > maxBodyLength || !isCachedResult(result)) return;
      bodies.delete(body);
      bodies.set(body, { ...operation, result });
      if (bodies.size > maxBodies) bodies.delete(bodies.keys().next().value!);
    },
  };
}
