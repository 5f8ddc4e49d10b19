/**
 * Whether an error means a store did not answer (as opposed to a bug or a refused statement).
 * Such errors reach the client as UNAVAILABLE; every other unexpected error stays masked.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  // postgres.js
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  // PostgreSQL: admin shutdown, crash shutdown, cannot connect now, too many connections
  '57P01',
  '57P02',
  '57P03',
  '53300',
  // A write on a server that is (or became) a standby: read_only_sql_transaction. The statement
  // and its transaction failed there, so nothing was recorded; the pool finds the primary again
  // (see db/primary.ts).
  '25006',
  // No host of DATABASE_URL is a primary (db/primary.ts: NoPrimaryError)
  'NO_PRIMARY',
  // PostgreSQL ending what ran past a session timeout (see SessionTimeouts in db/client.ts):
  // statement_timeout, lock_timeout, idle_in_transaction_session_timeout
  '57014',
  '55P03',
  '25P03',
]);

const REDIS_DOWN = /Connection is closed|Stream isn't writeable|enableOfflineQueue|Reached the max retries|Command timed out|MaxRetriesPerRequest/;

/**
 * Errors of ours that mean the same: an index bucket not rebuilt yet, a COMMIT whose outcome is not
 * known yet, a store that did not answer within the request's bound, a shared secret not read yet,
 * no primary among DATABASE_URL's hosts.
 */
const OWN_UNAVAILABLE = new Set(['IndexRecoveringError', 'CommitInDoubtError', 'DeadlineExceededError', 'SecretNotLoadedError', 'NoPrimaryError']);

export function isStoreUnavailable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (OWN_UNAVAILABLE.has(cause.name)) return true;
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || code.startsWith('08'))) return true;
    if (cause.name === 'MaxRetriesPerRequestError' || REDIS_DOWN.test(cause.message)) return true;
    if (cause instanceof AggregateError && cause.errors.some(isStoreUnavailable)) return true;
  }
  return false;
}
