/**
 * Group commit: callers that arrive while a group is being committed wait, and go together in the
 * next group, so that N concurrent submissions cost one transaction (and one COMMIT's fsync) rather
 * than N. Knows nothing of what a group does: `run` gets the items of one group and answers one
 * outcome per item, each an answer or that item's own error (one bad item never fails the others);
 * a throw from `run` fails every item of the group. `run` calls `committed()` once its transaction
 * is over: the group's slot goes to the next group then, while this one finishes what follows the
 * commit (its index write), so that work never holds a transaction back.
 */

export interface GroupCommitOptions {
  /**
   * Most results (the sum of the items' weights) one group takes. A single item heavier than this
   * still goes alone, as one group. Bounds a transaction's length, and the advisory locks it holds
   * (one per board and player, each an entry of PostgreSQL's shared lock table: 64 ×
   * max_connections by default, shared by every process). Default 500.
   */
  maxGroupWeight?: number;
  /**
   * Groups committing at the same time (up to their COMMIT), each on its own connection of the pool. 1 is classic group
   * commit; a few let groups of different players overlap their statements and COMMITs (the
   * random page reads of board scores dominate, and they overlap well). Default 4.
   */
  maxInFlight?: number;
}

/** One item's outcome from a group: its answer, or its own error. */
export type ItemOutcome<R> = { ok: R } | { error: unknown };

export interface GroupCommit<T, R> {
  /** Queues `item` for the next group; settles once its group is done. O(1) plus its share of the group. */
  submit(item: T, weight: number): Promise<R>;
}

interface Waiting<T, R> {
  item: T;
  weight: number;
  resolve(value: R): void;
  reject(error: unknown): void;
}

export function createGroupCommit<T, R>(
  run: (items: T[], committed: () => void) => Promise<ItemOutcome<R>[]>,
  options: GroupCommitOptions = {},
): GroupCommit<T, R> {
  const maxGroupWeight = options.maxGroupWeight ?? 500;
  const maxInFlight = options.maxInFlight ?? 4;
  const queue: Waiting<T, R>[] = [];
  let inFlight = 0;

  function takeGroup(): Waiting<T, R>[] {
    const group = [queue.shift()!];
    let weight = group[0]!.weight;
    while (queue.length > 0 && weight + queue[0]!.weight <= maxGroupWeight) {
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
    try {
      const outcomes = await run(group.map((waiting) => waiting.item), release);
      group.forEach((waiting, i) => {
        const outcome = outcomes[i]!;
        if ('ok' in outcome) waiting.resolve(outcome.ok);
        else waiting.reject(outcome.error);
      });
    } catch (error) {
      for (const waiting of group) waiting.reject(error);
    } finally {
      release();
    }
  }

  function pump(): void {
    while (inFlight < maxInFlight && queue.length > 0) {
      inFlight += 1;
      void commit(takeGroup());
    }
  }

  return {
    submit(item, weight) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, weight, resolve, reject });
        pump();
      });
    },
  };
}
