import type { Plugin } from 'graphql-yoga';

type OnExecute = NonNullable<Plugin['onExecute']>;
type ExecutePayload = Parameters<OnExecute>[0];
type ExecuteHookResult = Exclude<Awaited<ReturnType<OnExecute>>, void>;
type OnExecuteDone = NonNullable<ExecuteHookResult['onExecuteDone']>;
type DonePayload = Parameters<OnExecuteDone>[0];
type StreamHooks = Exclude<Awaited<ReturnType<OnExecuteDone>>, void>;

const isPromise = (value: unknown): value is PromiseLike<unknown> => typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';

/**
 * The plugins as they are, but with their onExecute hooks run by one hook, in their order: the
 * same calls with the same arguments as envelop would make (each sees the execute function the
 * ones before it set; one that stops execution stops the rest; each onExecuteDone sees the
 * result the ones before it set, a stream's onNext and onEnd likewise), and their other hooks
 * untouched. Place the returned list where the plugins stood.
 *
 * Why: envelop runs each hook of a phase through its promise helpers, a few fake promises and
 * closures a hook and a phase (allocations that grow with each plugin that has an execute
 * hook: bench/RESULTS.md), and once a hook answers a promise the rest of the phase
 * waits a turn each. The service's own execute hooks (compiled plans, request error codes,
 * observation, the deadline, the read budget, cache control, cached answers) are seven, run for
 * every operation; here they cost one hook, and take a promise only where one of them answers one.
 *
 * Each hook gets a payload of its own, a plain object as envelop makes it. Not one object with an
 * accessor for the current execute function or result: such an object (a literal spread from
 * envelop's, with an accessor), made per operation, made the garbage collector's pauses several
 * times longer, though it allocated less (bench/RESULTS.md).
 */
export function executeHooksTogether<P extends { onExecute?: unknown }>(plugins: readonly P[]): P[] {
  // The hooks' context types differ (the service's Context, Yoga's): they run on what envelop hands them, as before.
  const hooks = plugins.flatMap((plugin) => (plugin.onExecute ? [plugin.onExecute as OnExecute] : []));
  const rest = plugins.map(({ onExecute: _together, ...plugin }) => plugin as P);
  return hooks.length === 0 ? rest : [{ onExecute: runTogether(hooks) } as P, ...rest];
}

function runTogether(hooks: readonly OnExecute[]): OnExecute {
  return (outer) => {
    let executeFn = outer.executeFn;
    let stopped = false;
    const done: OnExecuteDone[] = [];
    const setExecuteFn: ExecutePayload['setExecuteFn'] = (fn) => {
      executeFn = fn;
      outer.setExecuteFn(fn);
    };
    const setResultAndStopExecution: ExecutePayload['setResultAndStopExecution'] = (result) => {
      stopped = true;
      outer.setResultAndStopExecution(result);
    };
    const { args, context, extendContext } = outer;
    const keep = (returned: void | ExecuteHookResult) => {
      if (returned?.onExecuteDone) done.push(returned.onExecuteDone);
    };
    const answer = (): void | ExecuteHookResult => (done.length === 0 ? undefined : { onExecuteDone: (finished) => runDone(done, finished) });
    // Synchronous as long as every hook is: a promise only from the first hook that answers one.
    const from = (first: number): void | ExecuteHookResult | Promise<void | ExecuteHookResult> => {
      for (let i = first; i < hooks.length && !stopped; i++) {
        const returned = hooks[i]!({ args, context, extendContext, executeFn, setExecuteFn, setResultAndStopExecution });
        if (isPromise(returned)) return Promise.resolve(returned).then((value) => (keep(value), from(i + 1)));
        keep(returned);
      }
      return answer();
    };
    return from(0);
  };
}

/** The onExecuteDone hooks in order, each seeing the result the ones before it set; their stream hooks as one. */
function runDone(hooks: readonly OnExecuteDone[], outer: DonePayload): ReturnType<OnExecuteDone> {
  let result = outer.result;
  const streams: StreamHooks[] = [];
  const setResult: DonePayload['setResult'] = (next) => {
    result = next;
    outer.setResult(next);
  };
  const { args } = outer;
  const from = (first: number): ReturnType<OnExecuteDone> => {
    for (let i = first; i < hooks.length; i++) {
      const returned = hooks[i]!({ args, result, setResult });
      if (isPromise(returned)) return Promise.resolve(returned).then((value) => (value && streams.push(value), from(i + 1)));
      if (returned) streams.push(returned);
    }
    return streams.length === 0 ? undefined : streamHooks(streams);
  };
  return from(0);
}

/** A stream's onNext hooks in order (each seeing the value the ones before it set) and its onEnd hooks, as one. */
function streamHooks(streams: readonly StreamHooks[]): StreamHooks {
  return {
    async onNext(outer) {
      let result = outer.result;
      for (const { onNext } of streams) {
        await onNext?.({
          args: outer.args,
          result,
          setResult(next) {
            result = next;
            outer.setResult(next);
          },
        });
      }
    },
    onEnd() {
      for (const { onEnd } of streams) onEnd?.();
    },
  };
}
