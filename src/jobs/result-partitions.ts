import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Storage } from '../db/storage.js';

export interface ResultPartitionsOptions {
  /** Months after the current one whose score-log partitions are kept ready. Default 2. */
  monthsAhead?: number;
  /** How often the partitions are looked at after the first pass. Default 24 h. */
  intervalMs?: number;
  /** How soon a pass that failed (PostgreSQL away) is tried again. Default 60 s. */
  retryMs?: number;
}

export interface ResultPartitions {
  /**
   * Settles once the first pass is over, made or failed (PostgreSQL away): a process starting
   * waits for it, so its first submissions find their month's partition instead of racing its
   * creation. Never rejects.
   */
  firstPass: Promise<void>;
  /** Stops the job and waits for a pass in progress. */
  stop(): Promise<void>;
}

/**
 * Keeps the score log's monthly partitions ahead of the clock (see db/partitions.ts): a pass at
 * start, then one a day, each creating what is missing of the previous, the current and the next
 * `monthsAhead` months. Every process runs it; creating a partition is idempotent and processes
 * take turns on the table's lock. Should it fall behind anyway, results land in the default
 * partition and the next pass moves them into their month's new partition: nothing is refused.
 */
export function startResultPartitions(
  deps: { storage: Pick<Storage, 'results'>; now(): Date; log: Logger },
  options: ResultPartitionsOptions = {},
): ResultPartitions {
  const monthsAhead = options.monthsAhead ?? 2;
  const intervalMs = options.intervalMs ?? 24 * 3_600_000;
  const retryMs = options.retryMs ?? 60_000;
  const stopping = new AbortController();
  let firstPassOver!: () => void;
  const firstPass = new Promise<void>((resolve) => (firstPassOver = resolve));
  const loop = (async () => {
    while (!stopping.signal.aborted) {
      let wait = intervalMs;
      try {
        const created = await deps.storage.results.partitions.ensure(deps.now(), monthsAhead);
        if (created.length > 0) deps.log.info({ months: created }, 'score log partitions created');
      } catch (error) {
        deps.log.error({ err: error }, 'creating score log partitions failed; tried again soon');
        wait = retryMs;
      }
      firstPassOver();
      await sleep(wait, undefined, { signal: stopping.signal, ref: false }).catch(() => {});
    }
  })();
  return {
    firstPass,
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}
