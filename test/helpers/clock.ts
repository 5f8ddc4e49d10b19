export interface MovableClockOptions {
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
export function movableClock({ runs = true }: MovableClockOptions = {}) {
  const startedAt = Date.now();
  let movedMs = 0;
  return {
    now: () => new Date((runs ? Date.now() : startedAt) + movedMs),
    /** Moves the clock on by `ms`. */
    advance(ms: number): void {
      movedMs += ms;
    },
  };
}
