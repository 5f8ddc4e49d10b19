import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { clientError } from '../errors.js';

export interface RateLimitOptions {
  /** Results a second one API key may submit (submitScores counts each input). 0 turns the limit off. Default 20,000. */
  submissionsPerSecond?: number;
  /** Read operations (queries and subscriptions) a second one client address may make, however small. 0 turns the limit off. Default 200. */
  readsPerSecond?: number;
  /**
   * Rows a second one client address may be sent by reads: each query and subscription is charged
   * the rows it can return as it starts (see http/operation-cost.ts), and a query is given back,
   * once answered, what its answer did not hold (refund), so a read spends what it returned. 0
   * turns the limit off. Default 10,000.
   */
  readRowsPerSecond?: number;
  /** Authentications with an unknown key a second one client address may make; past it, RATE_LIMITED before any lookup. 0 turns the limit off. Default 5. */
  authFailuresPerSecond?: number;
  /**
   * Milliseconds a second one client address may have the service spend validating its documents
   * (those not answered from a cache; see http/validation-budget.ts); past it, its next documents
   * are refused RATE_LIMITED before they are validated. What a client repeats is validated once,
   * so this only meets a client sending new documents faster than any real one does. 0 turns the
   * limit off. Default 100.
   */
  validationMsPerSecond?: number;
}

/** What a read was charged from its client's rows budget, as `refund` needs it. */
export interface ReadCharge {
  client: string;
  /** The rows taken. */
  rows: number;
  /** When the second they were taken in ends (Date.now() milliseconds). */
  until: number;
}

/** How close to the end of its second a charge is no longer refunded (see refund). */
const REFUND_MARGIN_MS = 5;

/**
 * Per-process token buckets (rate-limiter-flexible, in memory): cheap, and with N processes behind
 * a balancer the effective limit is about N times the setting, which the README says.
 */
export function createRateLimits({
  submissionsPerSecond = 20_000,
  readsPerSecond = 200,
  readRowsPerSecond = 10_000,
  authFailuresPerSecond = 5,
  validationMsPerSecond = 100,
}: RateLimitOptions = {}) {
  const limiter = (points: number) => (points > 0 ? new RateLimiterMemory({ points, duration: 1 }) : null);
  const submissions = limiter(submissionsPerSecond);
  const reads = limiter(readsPerSecond);
  const readRows = limiter(readRowsPerSecond);
  const authFailures = limiter(authFailuresPerSecond);
  const validation = validationMsPerSecond > 0 ? createSecondBudget(validationMsPerSecond) : null;
  // More than a row charged, within the second it was charged in: a margin against the two clocks
  // read a moment apart (here and in the limiter's store).
  const refundable = (charge: ReadCharge): boolean => readRows !== null && charge.rows > 1 && Date.now() + REFUND_MARGIN_MS < charge.until;

  /** Takes `points` (at least 1, at most a whole second's budget) from the key's budget; answers what it took and until when its second lasts. */
  async function consume(which: RateLimiterMemory | null, key: string, points: number, what: string): Promise<ReadCharge | undefined> {
    if (!which) return undefined;
    // Never more than a whole second's budget, so that anything the other limits let through can run.
    const taken = Math.min(Math.max(1, points), which.points);
    try {
      const spent = await which.consume(key, taken);
      return { client: key, rows: taken, until: Date.now() + spent.msBeforeNext };
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
     * either is spent. Answers the rows taken (undefined when rows are not limited), for
     * `refund`. Nothing to wait for (undefined) when both are off, so that a read then waits no
     * turn for them. O(1).
     */
    read(client: string, rows = 1): Promise<ReadCharge | undefined> | undefined {
      if (!reads && !readRows) return undefined;
      return consume(reads, client, 1, 'reads from this client').then(() => consume(readRows, client, rows, 'rows read by this client'));
    },
    /**
     * Gives back `rows` of what `charge` took (never more than it took), the way Shopify's GraphQL
     * API refunds the requested cost an answer did not use: a read is charged the rows it
     * returned. Only while the second it was charged in lasts: the budget is a count per fixed
     * second, and a refund into the next one would give the client more than its budget. O(1).
     */
    refund(charge: ReadCharge, rows: number): void {
      const back = Math.min(Math.max(0, Math.floor(rows)), charge.rows);
      if (back === 0 || !refundable(charge)) return;
      void readRows!.reward(charge.client, back);
    },
    /** Whether anything of this charge could still be given back, so that a caller counts what to give back only then. O(1). */
    refundable,
    /**
     * How many milliseconds the client must wait before another of its documents is validated: 0
     * while its validation budget lasts (and when it is off). Synchronous, as validation is. O(1).
     */
    validationWait: (client: string): number => validation?.wait(client) ?? 0,
    /** Takes `ms` of validation (at least one: each document costs its parse and checks too) from the client's budget. O(1). */
    validated(client: string, ms: number): void {
      validation?.spend(client, Math.max(1, ms));
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

/** Clients whose second is counted at once, past which the seconds that are over are forgotten. */
const COUNTED_CLIENTS = 10_000;

/**
 * A budget per key and fixed second, like the others but answered synchronously (for validation,
 * which cannot wait for a promise): work is counted once done, and refused once the second's
 * budget is spent, until the second is over.
 */
function createSecondBudget(points: number) {
  const seconds = new Map<string, { until: number; spent: number }>();
  return {
    wait(key: string): number {
      const second = seconds.get(key);
      const left = second ? Math.ceil(second.until - performance.now()) : 0;
      return second && left > 0 && second.spent >= points ? left : 0;
    },
    spend(key: string, amount: number): void {
      const now = performance.now();
      let second = seconds.get(key);
      if (!second || second.until <= now) {
        if (seconds.size >= COUNTED_CLIENTS) {
          for (const [other, { until }] of seconds) if (until <= now) seconds.delete(other);
        }
        second = { until: now + 1_000, spent: 0 };
        seconds.set(key, second);
      }
      second.spent += amount;
    },
  };
}
