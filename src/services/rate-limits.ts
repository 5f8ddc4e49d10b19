import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { clientError } from '../errors.js';

export interface RateLimitOptions {
  /** Results a second one API key may submit (submitScores counts each input). 0 turns the limit off. Default 20,000. */
  submissionsPerSecond?: number;
  /** Read operations (queries and subscriptions) a second one client address may make, however small. 0 turns the limit off. Default 200. */
  readsPerSecond?: number;
  /**
   * Rows a second one client address may be sent by reads: each query and subscription is charged
   * the rows it can return (see http/operation-cost.ts), so a heavy read spends what it costs.
   * 0 turns the limit off. Default 10,000.
   */
  readRowsPerSecond?: number;
  /** Authentications with an unknown key a second one client address may make; past it, RATE_LIMITED before any lookup. 0 turns the limit off. Default 5. */
  authFailuresPerSecond?: number;
}

/**
 * Per-process token buckets (rate-limiter-flexible, in memory): cheap, and with N processes behind
 * a balancer the effective limit is about N times the setting, which the README says.
 */
export function createRateLimits({
  submissionsPerSecond = 20_000,
  readsPerSecond = 200,
  readRowsPerSecond = 10_000,
  authFailuresPerSecond = 5,
}: RateLimitOptions = {}) {
  const limiter = (points: number) => (points > 0 ? new RateLimiterMemory({ points, duration: 1 }) : null);
  const submissions = limiter(submissionsPerSecond);
  const reads = limiter(readsPerSecond);
  const readRows = limiter(readRowsPerSecond);
  const authFailures = limiter(authFailuresPerSecond);

  async function consume(which: RateLimiterMemory | null, key: string, points: number, what: string): Promise<void> {
    if (!which) return;
    try {
      // Never more than a whole second's budget, so that anything the other limits let through can run.
      await which.consume(key, Math.min(Math.max(1, points), which.points));
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      throw clientError('RATE_LIMITED', `Too many ${what}; retry in ${Math.max(1, Math.ceil(rejection.msBeforeNext))} ms.`);
    }
  }

  return {
    /** Takes `count` results from the key's budget; RATE_LIMITED when it is spent. O(1). */
    submissions: (apiKeyId: string, count: number) => consume(submissions, apiKeyId, count, 'submissions for this API key'),
    /**
     * Takes one read, and the rows it can return, from the client's budgets; RATE_LIMITED when
     * either is spent. Nothing to wait for (undefined) when both are off, so that a read then
     * waits no turn for them. O(1).
     */
    read(client: string, rows = 1): Promise<void> | undefined {
      if (!reads && !readRows) return undefined;
      return consume(reads, client, 1, 'reads from this client').then(() => consume(readRows, client, rows, 'rows read by this client'));
    },
    /** RATE_LIMITED when the client has spent its failed authentications. O(1). */
    async authFailureAllowed(client: string): Promise<void> {
      if (!authFailures) return;
      const spent = await authFailures.get(client);
      if (spent && spent.consumedPoints >= authFailures.points) {
        throw clientError('RATE_LIMITED', `Too many failed authentications from this client; retry in ${Math.max(1, Math.ceil(spent.msBeforeNext))} ms.`);
      }
    },
    /** Records one failed authentication of the client. O(1). */
    async authFailed(client: string): Promise<void> {
      await authFailures?.penalty(client, 1);
    },
  };
}

export type RateLimits = ReturnType<typeof createRateLimits>;
