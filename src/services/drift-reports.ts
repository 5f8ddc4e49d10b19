import type { RedisClient } from '../redis.js';

/** One live bucket's drift as last measured: durable board scores minus the sorted set's members. */
export interface BucketDriftEntry {
  board: string;
  period: string;
  bucket: string;
  /** Empty for the global list. */
  region: string;
  drift: number;
}

/** The deployment's last measurement of the index's drift (see jobs/index-drift.ts). */
export interface DriftReport {
  /** When the measurement started, epoch milliseconds by the measuring process's clock. */
  measuredAt: number;
  /** How long it took, milliseconds: the next one waits at least ten times this. */
  durationMs: number;
  buckets: BucketDriftEntry[];
}

export interface DriftReportsOptions {
  /**
   * How long a process's claim to measure holds when it never says it is done (it died while
   * counting): no other process measures meanwhile. Default 900,000 ms (15 minutes), longer than
   * the counts of a 50,000,000-player board take.
   */
  claimMs?: number;
}

// One hash tag: on a Redis Cluster both keys live on one node, like every other key of one thing.
const REPORT_KEY = 'lb:{drift}:report';
const CLAIM_KEY = 'lb:{drift}:measuring';

/**
 * The index's drift as the deployment last measured it, kept in Redis so that whichever process a
 * scrape reaches serves the same figures, and the claim that lets one process of the deployment
 * measure at a time. O(1) commands each; the report is O(buckets measured) bytes.
 */
export function createDriftReports(redis: RedisClient, options: DriftReportsOptions = {}) {
  const claimMs = options.claimMs ?? 900_000;
  return {
    /** The last report; null when none was saved (or Redis lost it with the index). */
    async latest(): Promise<DriftReport | null> {
      const text = await redis.get(REPORT_KEY);
      return text === null ? null : (JSON.parse(text) as DriftReport);
    },

    /** Claims the next measurement for this process; false when another process holds the claim. */
    async claim(): Promise<boolean> {
      return (await redis.set(CLAIM_KEY, String(process.pid), 'PX', claimMs, 'NX')) === 'OK';
    },

    /** Saves `report` as the latest and lets the claim go. */
    async save(report: DriftReport): Promise<void> {
      await redis.multi().set(REPORT_KEY, JSON.stringify(report)).del(CLAIM_KEY).exec();
    },

    /** Lets the claim go without a report (the measurement failed), so another process may try. */
    async release(): Promise<void> {
      await redis.del(CLAIM_KEY);
    },
  };
}

export type DriftReports = ReturnType<typeof createDriftReports>;
