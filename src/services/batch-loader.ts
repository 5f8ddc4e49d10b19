import DataLoader from 'dataloader';

/** The loads of a batch loader; every load's answer is its own (an Error rejects that load alone). */
export interface BatchLoader<K, V> {
  load(key: K): Promise<V>;
}

export interface BatchLoaderOptions {
  /**
   * A batch that holds this many loads is sent as soon as the job that filled it, and the jobs
   * already queued behind it, are done (a microtask later), rather than at the turn's end. Why:
   * under load a turn holds dozens of requests; sent only at its end, their one call leaves after
   * the last is read, and the store idles while the process reads them and the process idles while
   * the store answers them all. Sent early, the store answers the first requests while the process
   * reads the rest. The loads of one job (a request's root fields, which reach their loads together)
   * still go together: the batch takes loads past this number until it is sent. Default
   * {@link MAX_BATCH_LOADS}: a batch leaves before the turn's end only once it is full.
   */
  sendAt?: number;
}

/**
 * A process-wide DataLoader whose batch is every load asked for in one pass of the event loop
 * (sent at setImmediate), by whichever requests ask it. Why: under load the requests of a turn reach the same fields together
 * (their reads come back from Redis on one connection, in one reply chunk), and a look-up's cost is
 * nearly all the call's (a round trip, a statement), hardly its size. Sent at setImmediate, after
 * the turn's I/O callbacks and their promise jobs, so a lone request waits no more than that turn,
 * or earlier once it holds `sendAt` loads (BatchLoaderOptions). Nothing is cached: a load reads the
 * store as of the batch it is sent in. A turn's loads beyond {@link MAX_BATCH_LOADS} go as further
 * batches, so that a burst (thousands of requests landing in one turn) is several short calls, none
 * holding Redis or a statement long.
 */
export function createBatchLoader<K, V>(batch: DataLoader.BatchLoadFn<K, V>, { sendAt = MAX_BATCH_LOADS }: BatchLoaderOptions = {}): BatchLoader<K, V> {
  /** The batch loads join (the latest made: a sent one takes no more), how many it holds, and its send (which sends it once). */
  let filling: { size: number; send: () => void } | null = null;
  const loader = new DataLoader<K, V>(batch, {
    cache: false,
    maxBatchSize: MAX_BATCH_LOADS,
    // DataLoader asks for a batch's schedule when the batch is made, that is, at its first load.
    batchScheduleFn: (dispatch) => {
      let sent = false;
      const current = {
        size: 0,
        send: () => {
          if (sent) return;
          sent = true;
          dispatch();
        },
      };
      filling = current;
      setImmediate(current.send);
    },
  });
  return {
    load(key) {
      const answer = loader.load(key);
      // The load joined `filling`: DataLoader makes (and schedules) a batch when none takes loads.
      const current = filling!;
      if (++current.size === sendAt) queueMicrotask(current.send);
      return answer;
    },
  };
}

/** The most loads one batch of a batch loader carries. */
export const MAX_BATCH_LOADS = 1_000;
