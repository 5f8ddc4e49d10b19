export interface MovableClockOptions {
  /** Where the clock starts. Default: the system's time when it is made. */
  startsAt?: Date;
  /**
   * Whether the clock runs with the system's between moves (true), or stands still at the time it
   * was made (false: only advance() moves it, for a test that counts milliseconds). Default true.
   */
  runs?: boolean;
}

/**
 * A clock for an app (TestAppOptions.now) that the test moves on: what reads it (the top cache's
 * max age, say) sees the time pass at once, without the test sleeping.
 */
export function movableClock({ startsAt, runs = true }: MovableClockOptions = {}) {
  const madeAt = Date.now();
  let movedMs = (startsAt?.getTime() ?? madeAt) - madeAt;
  return {
    now: () => new Date((runs ? Date.now() : madeAt) + movedMs),
    /** Moves the clock on by `ms`. */
    advance(ms: number): void {
      movedMs += ms;
    },
  };
}
