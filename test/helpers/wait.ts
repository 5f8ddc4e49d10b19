/**
 * Waiting for a condition, never for time: polls `check` every `everyMs` until it holds, and fails
 * with `what` once `timeoutMs` passes without it. Answers how long it took (tests report it).
 */
export async function until(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string, everyMs = 100): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return Date.now() - started;
}
