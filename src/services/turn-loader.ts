import DataLoader from 'dataloader';

/**
 * A process-wide loader whose batch is every load asked for in one turn of the event loop, by
 * whichever requests ask it. Why: under load the requests of a turn reach the same fields together
 * (their reads come back from Redis on one connection, in one reply chunk), and a look-up's cost is
 * nearly all the call's (a round trip, a statement), hardly its size. Sent at setImmediate, after
 * the turn's I/O callbacks and their promise jobs, so a lone request waits no more than that turn.
 * Nothing is cached: a load reads the store as of the turn it is sent in. A turn's loads beyond
 * {@link MAX_TURN_BATCH} go as further batches, so that a burst (thousands of requests landing in
 * one turn) is several short calls, none holding Redis or a statement long.
 */
export function createTurnLoader<K, V>(batch: DataLoader.BatchLoadFn<K, V>): DataLoader<K, V> {
  return new DataLoader<K, V>(batch, { cache: false, batchScheduleFn: (send) => setImmediate(send), maxBatchSize: MAX_TURN_BATCH });
}

/** The most loads one batch of a turn loader carries. */
export const MAX_TURN_BATCH = 1_000;
