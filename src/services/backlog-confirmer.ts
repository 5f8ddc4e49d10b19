import type { Logger } from 'pino';
import type { Storage } from '../db/storage.js';

/**
 * Catch-up after the index fell behind: the index outbox (index_backlog, see db/index-backlog.ts).
 *
 * Why an outbox written in the submit transaction, rather than a checkpoint in the score log or
 * rows written only when an index write fails: it is exact by construction. A committed batch's
 * rows exist until something confirms the index holds its board scores, whatever happened after
 * the commit: Redis away (the write path's index write fails), or this process dying between the
 * commit and the index write, which a "write a row when the index write fails" scheme would lose.
 * A checkpoint would need commit-order timestamps PostgreSQL does not give, and a window of replay
 * wide enough to cover the slowest transaction. The cost: the rows ride in the statement that logs
 * the results (no extra round trip inside the transaction), and confirmations are deleted in
 * batches, one statement per {@link BacklogConfirmerOptions.flushMs} per process, off the path that
 * answers.
 */

export interface BacklogConfirmerOptions {
  /** How long confirmations gather before one DELETE takes them all. Default 100 ms. */
  flushMs?: number;
  /** Confirmations kept for a retry while PostgreSQL is away; beyond that they are left to the catch-up job. Default 100,000. */
  maxWaiting?: number;
}

export type BacklogConfirmer = ReturnType<typeof createBacklogConfirmer>;

/**
 * The write path's half of the outbox: once the index holds a batch's board scores, its backlog
 * rows are confirmed here and deleted in batches, one statement per `flushMs` whatever the number
 * of batches. A confirmation that is never deleted (a crash, PostgreSQL away) costs one harmless
 * replay by the catch-up job: the job writes the same board scores with ZADD GT/LT.
 */
export function createBacklogConfirmer(backlog: Storage['backlog'], log: Logger, options: BacklogConfirmerOptions = {}) {
  const flushMs = options.flushMs ?? 100;
  const maxWaiting = options.maxWaiting ?? 100_000;
  let waiting: number[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | undefined;

  async function flush(): Promise<void> {
    timer = undefined;
    await flushing;
    if (waiting.length === 0) return;
    const ids = waiting;
    waiting = [];
    flushing = backlog
      .delete(ids)
      .then(() => undefined)
      .catch((error: unknown) => {
        // Kept for the next flush while there is room; the catch-up job replays the rest.
        if (waiting.length + ids.length <= maxWaiting) waiting.push(...ids);
        log.warn({ err: error, rows: ids.length }, 'could not delete confirmed index backlog rows; retried');
        schedule();
      })
      .finally(() => {
        flushing = undefined;
      });
    await flushing;
  }

  function schedule(): void {
    if (timer) return;
    timer = setTimeout(() => void flush(), flushMs);
    timer.unref();
  }

  return {
    /** The index holds the board scores these rows stood for. O(1); the DELETE comes within flushMs. */
    confirm(ids: readonly number[]): void {
      if (ids.length === 0) return;
      waiting.push(...ids);
      schedule();
    },
    /** Deletes every confirmation now (at shutdown). */
    async flush(): Promise<void> {
      if (timer) clearTimeout(timer);
      await flush();
    },
  };
}
