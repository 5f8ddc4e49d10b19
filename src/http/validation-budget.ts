import type { IncomingMessage } from 'node:http';
import { clientError } from '../errors.js';
import type { RateLimits } from '../services/rate-limits.js';
import type { ClientAddressOf } from './client-address.js';
import type { ValidationBudget } from './document-limits.js';

/**
 * Charges the time each document validated (one not answered from a cache) took to the client
 * address that sent it (RATE_LIMIT_VALIDATION_MS_PER_SECOND, services/rate-limits.ts): once a
 * client's budget for the second is spent, its next documents are refused RATE_LIMITED before
 * they are validated. So a flood of new documents from one address costs about its own budget of
 * validation, and other clients nothing.
 *
 * The client is found from the request in the operation's initial context (`req`: Yoga's node
 * server context, the fast path's and graphql-ws's own); a document validated without one (the
 * registered documents, at start) is charged to nobody.
 */
export function createValidationBudget(limits: Pick<RateLimits, 'validationWait' | 'validated'>, clientOf: ClientAddressOf): ValidationBudget {
  const clientIn = (context: object) => {
    const req = (context as { req?: IncomingMessage }).req;
    return req && clientOf(req);
  };
  return {
    before(context) {
      const client = clientIn(context);
      const wait = client === undefined ? 0 : limits.validationWait(client);
      if (wait > 0) throw clientError('RATE_LIMITED', `Too many new documents to validate from this client; retry in ${wait} ms.`);
    },
    spent(context, ms) {
      const client = clientIn(context);
      if (client !== undefined) limits.validated(client, ms);
    },
  };
}
