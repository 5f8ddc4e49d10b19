import { createGraphQLError } from 'graphql-yoga';

/** The codes of the contract (api.graphql): what a client may branch on. */
export type ErrorCode = 'BAD_USER_INPUT' | 'UNAUTHENTICATED' | 'FORBIDDEN' | 'NOT_FOUND' | 'RATE_LIMITED' | 'UNAVAILABLE';

/**
 * Why a tournament refused an input (issue 57), beside BAD_USER_INPUT as extensions.reason: a
 * finer code a game server may branch on.
 */
export type RefusalReason = 'NOT_JOINED' | 'NO_ATTEMPTS_LEFT' | 'BOARD_FULL';

export function clientError(code: ErrorCode, message: string, reason?: RefusalReason) {
  return createGraphQLError(message, { extensions: reason ? { code, reason } : { code } });
}

/** A tournament's refusal: BAD_USER_INPUT with extensions.reason. */
export const refused = (reason: RefusalReason, message: string) => clientError('BAD_USER_INPUT', message, reason);

export const badInput = (message: string) => clientError('BAD_USER_INPUT', message);
/** RATE_LIMITED with extensions.retryAfterMs: how long until the same call may pass (a board's resultRate). */
export const rateLimited = (message: string, retryAfterMs: number) => createGraphQLError(message, { extensions: { code: 'RATE_LIMITED', retryAfterMs } });
export const notFound = (message: string) => clientError('NOT_FOUND', message);
export const unavailable = (message = 'A backing store is not answering; nothing was recorded. Retry later.') => clientError('UNAVAILABLE', message);
