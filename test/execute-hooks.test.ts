import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { type Plugin, createGraphQLError, createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { executeHooksTogether } from '../src/http/execute-hooks.js';

/**
 * executeHooksTogether (src/http/execute-hooks.ts) against envelop itself: the same plugins given
 * to stock Yoga one by one are the oracle. Each request's answer and the order of every hook call
 * (before execution, the execute functions they set, after it) must be the same both ways, for an
 * operation that runs, one a hook stops with its own result (a refusal), one whose result the
 * done hooks replace, and one with a hook that answers a promise among synchronous ones.
 */

/** Plugins that log each call and change what the request asks them to (its `x-case` header). */
function loggingPlugins(log: string[]): Plugin[] {
  const caseOf = (args: ExecutionArgs) => (args.contextValue as { request: Request }).request.headers.get('x-case');
  const wrapping =
    (name: string): NonNullable<Plugin['onExecute']> =>
    ({ executeFn, setExecuteFn }) => {
      log.push(`${name} before`);
      setExecuteFn(async (args: ExecutionArgs) => {
        log.push(`${name} execute`);
        const result = (await executeFn(args)) as ExecutionResult;
        return { ...result, data: { ...result.data, hello: `${String(result.data?.hello)}+${name}` } };
      });
      return {
        onExecuteDone({ result, setResult }) {
          log.push(`${name} done ${JSON.stringify(result)}`);
          // The first's change is what the later ones see.
          if (name === 'first') setResult({ ...(result as ExecutionResult), extensions: { seenBy: name } });
        },
      };
    };
  return [
    { onExecute: wrapping('first') },
    // No execute hook: left as it is, its other hooks with it.
    { onValidate: () => void log.push('validate') },
    {
      // A hook answering a promise, among synchronous ones.
      async onExecute({ args, setResultAndStopExecution }) {
        log.push('async before');
        await new Promise((resolve) => setImmediate(resolve));
        if (caseOf(args) === 'refuse') {
          setResultAndStopExecution({ errors: [createGraphQLError('Refused.', { extensions: { code: 'RATE_LIMITED' } })] });
        }
      },
    },
    { onExecute: wrapping('second') },
    {
      onExecute({ args }) {
        log.push('last before');
        if (caseOf(args) !== 'replace') return;
        return { onExecuteDone: ({ setResult }) => setResult({ data: { hello: 'replaced' } }) };
      },
    },
  ];
}

function served(together: boolean) {
  const log: string[] = [];
  const plugins = loggingPlugins(log);
  const yoga = createYoga({
    schema: createSchema({ typeDefs: 'type Query { hello: String! }', resolvers: { Query: { hello: () => 'wörld' } } }),
    plugins: together ? executeHooksTogether(plugins) : plugins,
    logging: false,
  });
  return {
    log,
    async ask(kind: string) {
      log.length = 0;
      const response = await yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-case': kind },
        body: JSON.stringify({ query: 'query Hello { __typename hello }', operationName: 'Hello' }),
      });
      return { status: response.status, body: (await response.json()) as unknown, log: [...log] };
    },
  };
}

describe('execute hooks run together', () => {
  it.each(['run', 'refuse', 'replace'])('answer and call the hooks as envelop does, one by one (%s)', async (kind) => {
    const oracle = await served(false).ask(kind);
    const together = await served(true).ask(kind);
    expect(together).toEqual(oracle);
    // The oracle did what the case asks, so the comparison covers it.
    if (kind === 'run') expect(oracle.body).toEqual({ data: { __typename: 'Query', hello: 'wörld+first+second' }, extensions: { seenBy: 'first' } });
    if (kind === 'refuse') expect(oracle.log).not.toContain('first execute');
    if (kind === 'replace') expect(oracle.body).toMatchObject({ data: { hello: 'replaced' } });
  });

  it('leaves plugins without execute hooks as they are, and answers them alone when none has one', () => {
    const onValidate = () => undefined;
    expect(executeHooksTogether<Plugin>([{ onValidate }])).toEqual([{ onValidate }]);
  });
});
