import { type DocumentNode, type ExecutionArgs, type ExecutionResult, OperationTypeNode, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../resolvers/context.js';
import { unavailable } from '../errors.js';

/**
 * Every query and mutation is answered within the request's bound (REQUEST_TIMEOUT_MS), on every
 * transport (Yoga, the JSON fast path and graphql-ws all run this envelop pipeline), whatever a
 * store does: a store that hangs answers nothing and refuses nothing, so without a timer of our own
 * a request would wait as long as the hang. Past the bound the client gets UNAVAILABLE and the
 * execution's own result, should it come, is dropped.
 *
 * The write path bounds itself a little earlier (see submitScores), so a submission is answered
 * by it, saying exactly whether anything was recorded; this is the backstop for everything else.
 * When the backstop answers a mutation, the mutation may have been on its way to COMMIT (an event
 * loop that was too busy to run the write path's own timer first), so it says "not known" rather
 * than promise that nothing was recorded.
 * Subscriptions are not bounded: they are meant to last.
 */
export function useRequestDeadline(requestTimeoutMs: number): Plugin<Context> {
  return {
    onExecute({ executeFn, setExecuteFn }) {
      // One promise an operation, settled by whichever comes first: the execution, or the timer.
      setExecuteFn(
        (args: ExecutionArgs) =>
          new Promise<ExecutionResult>((resolve, reject) => {
            // Started first: an execute function that throws at once rejects this, no timer left behind.
            const execution = executeFn(args) as Promise<ExecutionResult> | ExecutionResult;
            const context = args.contextValue as Context;
            const ms = requestTimeoutMs;
            const left = context.startedAt + ms - performance.now();
            const timer = setTimeout(
              () => resolve({ data: null, errors: [unavailable(lateMessage(args.document, args.operationName, ms))] }),
              Math.max(0, left),
            );
            Promise.resolve(execution).then(
              (result) => (clearTimeout(timer), resolve(result)),
              (error: unknown) => (clearTimeout(timer), reject(error as Error)),
            );
          }),
      );
    },
  };
}

function lateMessage(document: DocumentNode, operationName: string | null | undefined, ms: number): string {
  const what = `A backing store did not answer within the request's bound of ${ms} ms (REQUEST_TIMEOUT_MS).`;
  return getOperationAST(document, operationName)?.operation === OperationTypeNode.MUTATION
    ? `${what} Whether the mutation took effect is not known; it is safe to send again where it is idempotent (a submission with the same matchId is recorded once, and answers duplicate: true).`
    : `${what} Try again shortly.`;
}
