/**
 * Single flight that stays fresh: a read shared by the callers that ask while it is being made, but never answered to a caller
 * who asked before it was sent: every caller gets a read started after it asked. So it stays as
 * exact as one read per caller (whatever was written before the ask is seen) while at most two
 * reads are out at once, one in flight and one waiting for it, whatever the number of callers.
 * Why not plain single flight: a caller joining a read already in flight would get a value read
 * before its ask, and miss a change acknowledged just before it.
 *
 * A failed read fails the callers that shared it; the next ask reads again.
 */
export function freshSingleFlight<T>(read: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | undefined;
  let waiting: Promise<T> | undefined;
  const start = (): Promise<T> => {
    const started = read();
    inFlight = started;
    const done = () => {
      if (inFlight === started) inFlight = undefined;
    };
    started.then(done, done);
    return started;
  };
  return () => {
    if (!inFlight) return start();
    // Sent once the read in flight is answered: after every caller that waits for it asked.
    waiting ??= inFlight
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        waiting = undefined;
        return start();
      });
    return waiting;
  };
}
