import { type ExecutionResult, GraphQLError } from 'graphql';
import { type Plugin, isAsyncIterable } from 'graphql-yoga';

/** Yoga's code for a document that does not parse (usePreventMutationViaGET gives it, but only to a request it parses itself). */
const PARSE_FAILED = 'GRAPHQL_PARSE_FAILED';

/** The error again, with `code` in its extensions unless it has a code already. */
function withCode(error: GraphQLError, code: string, extra: Record<string, unknown> = {}): GraphQLError {
  if (typeof error.extensions.code === 'string') return error;
  return new GraphQLError(error.message, {
    nodes: error.nodes ?? null,
    source: error.source ?? null,
    positions: error.positions ?? null,
    path: error.path ?? null,
    originalError: error.originalError ?? null,
    extensions: { ...extra, ...error.extensions, code },
  });
}

/**
 * The errors of a result raised before execution began, each with BAD_USER_INPUT unless it has a
 * code; the result as it is otherwise. The GraphQL spec calls these request errors ("typically the
 * fault of the requesting client") and leaves `data` out of their result, which is how they are
 * told apart: graphql-js answers variables that fail coercion (a string or 2^31 for an Int, null
 * for an Int!, an input field the schema does not have) that way, and Yoga's executor marks them
 * 400 but gives them no code (it does for subscriptions). A plugin's refusal without data (the read budget's) has its own code and keeps it.
 */
function withRequestErrorCodes<R extends ExecutionResult>(result: R): R {
  if (result.data !== undefined || !result.errors?.some((error) => typeof error.extensions?.code !== 'string')) return result;
  return { ...result, errors: result.errors.map((error) => withCode(error, 'BAD_USER_INPUT')) };
}

/**
 * Names the client's mistakes that Yoga and graphql-js leave without a code, on every transport
 * (the fast POST path, Yoga's POST and GET, server-sent events and graphql-ws all run this
 * pipeline): variables that fail coercion and other request errors answer BAD_USER_INPUT, and a
 * document that does not parse answers GRAPHQL_PARSE_FAILED (400), as a request Yoga parses
 * itself does; without it a parse error first met over graphql-ws or the fast path was cached
 * without its code, and every later request for that text got it so. Then the operation's log line
 * and metrics count them as the client's (observe.ts), not as internal errors.
 *
 * Place it before the observation, so that the outcome it records has the code.
 */
export function useRequestErrorCodes(): Plugin {
  return {
    onParse: () => coderOfParseErrors,
    // The same hooks for every operation: nothing is made per operation that answers.
    onExecute: () => EXECUTE_HOOKS,
    onSubscribe: () => SUBSCRIBE_HOOKS,
  };
}

type AfterParse = Exclude<ReturnType<NonNullable<Plugin['onParse']>>, void>;

const coderOfParseErrors: AfterParse = ({ result, replaceParseResult }) => {
  // Replaced before Yoga's parse cache keeps the error, so a repeat is answered the same.
  if (result instanceof GraphQLError) replaceParseResult(withCode(result, PARSE_FAILED, { http: { spec: true, status: 400 } }));
};

type Done = { result: ExecutionResult | AsyncIterable<unknown>; setResult: (result: ExecutionResult) => void };

function codeRequestErrors({ result, setResult }: Done): void {
  if (isAsyncIterable(result)) return;
  const coded = withRequestErrorCodes(result);
  if (coded !== result) setResult(coded);
}

const EXECUTE_HOOKS = { onExecuteDone: codeRequestErrors };
const SUBSCRIBE_HOOKS = { onSubscribeResult: codeRequestErrors };
