/**
 * Group commit: callers that arrive while a group is being committed wait, and go together in the
 * next group, so that N concurrent submissions cost one transaction (and one COMMIT's fsync) rather
 * than N. Knows nothing of what a group does: `run` gets the items of one group and answers one
 * outcome per item, each an answer or that item's own error (one bad item never fails the others);
 * a throw from `run` fails every item of the group. `run` calls `committed()` once its transaction
 * is over: the group's slot goes to the next group then, while this one finishes what follows the
 * commit (its index write), so that work never holds a transaction back.
 *
 * Each item may carry a deadline; a group's is its earliest item's. `run` gets it as a signal and
 * must settle by then, and the slot goes to the next group when it fires whatever `run` is still
 * waiting for: a store that hangs costs its group's callers their answer, never the slots of the
 * groups after it.
 */
import { DeadlineExceededError, deadlineSignal } from '../deadline.js';

export interface GroupCommitOptions {
  /**
   * Most results (the sum of the items' weights) one group takes. A single item heavier than this
   * still goes alone, as one group. Bounds a transaction's length, and the advisory locks it holds
   * (one per board and player, each an entry of PostgreSQL's shared lock table: 64 ×
   * max_connections by default, shared by every process). Default 500.
   */
  maxGroupWeight?: number;
  /**
   * Groups committing at the same time (up to their COMMIT), each on its own connection of the
   * pool. 1 is classic group commit; a second lets the next group's statements overlap this one's
   * COMMIT (its fsync). More made each group smaller, and so each result dearer, for no more
   * throughput on two cores: with 4, single submissions from 50 connections went 0.82 statements a
   * result and 1,365–1,453 a second, against 0.49 and 1,619–1,769 with 2 (bench/RESULTS.md).
   * Default 2.
   */
  maxInFlight?: number;
}

/** One item's outcome from a group: its answer, or its own error. */
export type ItemOutcome<R> = { ok: R } | { error: unknown };

export interface GroupCommit<T, R> {
  /**
   * Queues `item` for the next group; settles once its group is done. `deadline` (in
   * performance.now() milliseconds; default none) bounds its group. O(1) plus its share of the group.
   */
  submit(item: T, weight: number, deadline?: number): Promise<R>;
}

interface Waiting<T, R> {
  item: T;
  weight: number;
  deadline: number;
  resolve(value: R): void;
  reject(error: unknown): void;
}

export function createGroupCommit<T, R>(
  run: (items: T[], committed: () => void, signal: AbortSignal) => Promise<ItemOutcome<R>[]>,
  options: GroupCommitOptions = {},
): GroupCommit<T, R> {
  const maxGroupWeight = options.maxGroupWeight ?? 500;
  const maxInFlight = options.maxInFlight ?? 2;
  const queue: Waiting<T, R>[] = [];
  let inFlight = 0;

  /**
   * Answers the items at the head of the queue whose deadline has passed while they waited: they
   * are never recorded, and never shorten the group of items that still have time.
   */
  function dropExpired(): void {
    const now = performance.now();
    while (queue.length > 0 && queue[0]!.deadline <= now) queue.shift()!.reject(new DeadlineExceededError('PostgreSQL', 0));
  }

  function takeGroup(): Waiting<T, R>[] {
    const group = [queue.shift()!];
    let weight = group[0]!.weight;
    for (dropExpired(); queue.length > 0 && weight + queue[0]!.weight <= maxGroupWeight; dropExpired()) {
      const next = queue.shift()!;
      weight += next.weight;
      group.push(next);
    }
    return group;
  }

  async function commit(group: Waiting<T, R>[]): Promise<void> {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      inFlight -= 1;
      pump();
    };
    const deadline = Math.min(...group.map((waiting) => waiting.deadline));
    const signal = Number.isFinite(deadline) ? deadlineSignal(deadline - performance.now(), 'PostgreSQL') : new AbortController().signal;
    signal.addEventListener('abort', release, { once: true });
    try {
      const outcomes = await run(
        group.map((waiting) => waiting.item),
        release,
        signal,
      );
      group.forEach((waiting, i) => {
        const outcome = outcomes[i]!;
        if ('ok' in outcome) waiting.resolve(outcome.ok);
        else waiting.reject(outcome.error);
      });
    } catch (error) {
      for (const waiting of group) waiting.reject(error);
    } finally {
      signal.removeEventListener('abort', release);
      release();
    }
  }

  function pump(): void {
    for (dropExpired(); inFlight < maxInFlight && queue.length > 0; dropExpired()) {
      inFlight += 1;
      void commit(takeGroup());
    }
  }

  return {
    submit(item, weight, deadline = Infinity) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, weight, deadline, resolve, reject });
        pump();
      });
    },
  };
}
