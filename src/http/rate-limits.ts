import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { clientError } from '../resolvers/errors.js';

export interface RateLimitOptions {
  /** Results a second one API key may submit (submitScores counts each input). 0 turns the limit off. Default 20,000. */
  submissionsPerSecond?: number;
  /** Read operations a second one client address may make. 0 turns the limit off. Default 200. */
  readsPerSecond?: number;
}

/**
 * Per-process token buckets (rate-limiter-flexible, in memory): cheap, and with N processes behind
 * a balancer the effective limit is about N times the setting, which the README says.
 */
export function createRateLimits({ submissionsPerSecond = 20_000, readsPerSecond = 200 }: RateLimitOptions = {}) {
  const limiter = (points: number) => (points > 0 ? new RateLimiterMemory({ points, duration: 1 }) : null);
  const submissions = limiter(submissionsPerSecond);
  const reads = limiter(readsPerSecond);

  async function consume(which: RateLimiterMemory | null, key: string, points: number, what: string): Promise<void> {
    if (!which) return;
    try {
      await which.consume(key, points);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      throw clientError('RATE_LIMITED', `Too many ${what}; retry in ${Math.max(1, Math.ceil(rejection.msBeforeNext))} ms.`);
    }
  }

  return {
    /** Takes `count` results from the key's budget; RATE_LIMITED when it is spent. O(1). */
    submissions: (apiKeyId: string, count: number) => consume(submissions, apiKeyId, Math.max(1, count), 'submissions for this API key'),
    /** Takes one read from the client's budget; RATE_LIMITED when it is spent. O(1). */
    read: (client: string) => consume(reads, client, 1, 'reads from this client'),
  };
}

export type RateLimits = ReturnType<typeof createRateLimits>;
