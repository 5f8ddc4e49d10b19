import { createGraphQLError } from 'graphql-yoga';

/** The codes of the contract (api.graphql): what a client may branch on. */
export type ErrorCode = 'BAD_USER_INPUT' | 'UNAUTHENTICATED' | 'FORBIDDEN' | 'NOT_FOUND' | 'RATE_LIMITED' | 'UNAVAILABLE';

export function clientError(code: ErrorCode, message: string) {
  return createGraphQLError(message, { extensions: { code } });
}

export const badInput = (message: string) => clientError('BAD_USER_INPUT', message);
export const notFound = (message: string) => clientError('NOT_FOUND', message);
export const unavailable = (message = 'A backing store is not answering; nothing was recorded. Retry later.') => clientError('UNAVAILABLE', message);
