import { type DocumentNode, type ExecutionResult, Kind, type OperationDefinitionNode, getOperationAST } from 'graphql';
import { type Plugin, isAsyncIterable } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Metrics } from '../services/metrics.js';
import { duplicatesIn, submissionsIn } from './submission-count.js';

interface Description {
  operation: OperationDefinitionNode | null | undefined;
  type: string;
  field: string;
  name: string | undefined;
}

function describeNow(document: DocumentNode, operationName: string | undefined): Description {
  const operation = getOperationAST(document, operationName);
  const fields = operation?.selectionSet.selections.flatMap((s) => (s.kind === Kind.FIELD ? [s.name.value] : [])) ?? [];
  return { operation, type: operation?.operation ?? 'unknown', field: [...new Set(fields)].sort().join(',') || 'none', name: operation?.name?.value };
}

/**
 * Per document and operation name, described once: Yoga's parse cache hands every request of the
 * same query the same document, so a hot query costs a lookup here, not a walk of its selections.
 */
const descriptions = new WeakMap<DocumentNode, Map<string | undefined, Description>>();

function describe(document: DocumentNode, operationName: string | undefined): Description {
  let byName = descriptions.get(document);
  if (!byName) descriptions.set(document, (byName = new Map<string | undefined, Description>()));
  let description = byName.get(operationName);
  if (!description) byName.set(operationName, (description = describeNow(document, operationName)));
  return description;
}

/** Submission outcomes, counted in results: accepted and duplicate from the answer; a refused call counts every result it carried. */
function countSubmissions(metrics: Metrics, carried: number, result: ExecutionResult, outcome: string): void {
  if (carried === 0) return;
  if (outcome === 'ok') {
    const duplicates = duplicatesIn(result);
    const repeated = duplicates.filter(Boolean).length;
    metrics.submissions.inc({ outcome: 'accepted' }, duplicates.length - repeated);
    metrics.submissions.inc({ outcome: 'duplicate' }, repeated);
    return;
  }
  const label = /BAD_USER_INPUT|NOT_FOUND/.test(outcome)
    ? 'rejected'
    : /UNAVAILABLE/.test(outcome)
      ? 'unavailable'
      : /RATE_LIMITED/.test(outcome)
        ? 'rate_limited'
        : 'failed';
  metrics.submissions.inc({ outcome: label }, carried);
}

/** Starts the observation of one operation; the function it answers ends it, with the operation's errors and result. */
export type OperationObserver = (
  args: { document: unknown; operationName?: unknown; variableValues?: unknown },
  kind: 'execute' | 'subscribe',
) => (errors: readonly { extensions?: Record<string, unknown> }[] | undefined, result?: ExecutionResult) => void;

/**
 * One structured log line and one latency observation per operation: its type, root fields, name,
 * outcome and duration. Variables, keys and results are never logged. The plugin below and the
 * cached answers served before the pipeline (cached-bodies.ts) observe through it alike.
 */
export function createOperationObserver(metrics: Metrics, log: Logger): OperationObserver {
  return (args, kind) => {
    const started = performance.now();
    const { operation, type, field, name } = describe(args.document as DocumentNode, args.operationName as string | undefined);
    const carried = operation ? submissionsIn(operation, args.variableValues as Record<string, unknown> | undefined) : 0;
    return (errors, result) => {
      const ms = performance.now() - started;
      const outcome =
        !errors || errors.length === 0
          ? 'ok'
          : [...new Set(errors.map((e) => (typeof e.extensions?.code === 'string' ? e.extensions.code : 'INTERNAL')))].join(',');
      metrics.operationSeconds.observe({ type, field, outcome }, ms / 1000);
      if (result) countSubmissions(metrics, carried, result, outcome);
      // The line is made only when it is written: not at all when LOG_LEVEL is above info.
      if (log.isLevelEnabled('info')) log.info({ operation: name, type, field, outcome, ms: Math.round(ms * 100) / 100, kind }, 'operation');
    };
  };
}

/** Every operation Yoga runs, observed (see createOperationObserver). */
export function useObservability(metrics: Metrics, log: Logger): Plugin {
  const observe = createOperationObserver(metrics, log);
  return {
    onExecute({ args }) {
      const done = observe(args, 'execute');
      return {
        onExecuteDone({ result }) {
          if (isAsyncIterable(result)) return done(undefined);
          done(result.errors, result);
        },
      };
    },
    onSubscribe({ args }) {
      const done = observe(args, 'subscribe');
      return {
        onSubscribeResult({ result }) {
          done('errors' in result ? result.errors : undefined);
        },
      };
    },
  };
}
