import { type DocumentNode, Kind, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Metrics } from './metrics.js';

function describe(document: DocumentNode, operationName: string | undefined) {
  const operation = getOperationAST(document, operationName);
  const fields = operation?.selectionSet.selections.flatMap((s) => (s.kind === Kind.FIELD ? [s.name.value] : [])) ?? [];
  return { type: operation?.operation ?? 'unknown', field: [...new Set(fields)].sort().join(',') || 'none', name: operation?.name?.value };
}

/**
 * One structured log line and one latency observation per operation: its type, root fields, name,
 * outcome and duration. Variables, keys and results are never logged.
 */
export function useObservability(metrics: Metrics, log: Logger): Plugin {
  const observe = (args: { document: unknown; operationName?: unknown }, kind: 'execute' | 'subscribe') => {
    const started = performance.now();
    const { type, field, name } = describe(args.document as DocumentNode, args.operationName as string | undefined);
    return (errors: readonly { extensions?: Record<string, unknown> }[] | undefined) => {
      const ms = performance.now() - started;
      const codes = [...new Set((errors ?? []).map((e) => (typeof e.extensions?.code === 'string' ? e.extensions.code : 'INTERNAL')))];
      const outcome = codes.length === 0 ? 'ok' : codes.join(',');
      metrics.operationSeconds.observe({ type, field, outcome }, ms / 1000);
      log.info({ operation: name, type, field, outcome, ms: Math.round(ms * 100) / 100, kind }, 'operation');
    };
  };
  return {
    onExecute({ args }) {
      const done = observe(args, 'execute');
      return {
        onExecuteDone({ result }) {
          done('errors' in result ? result.errors : undefined);
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
