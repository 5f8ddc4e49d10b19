import { setTimeout as pause } from 'node:timers/promises';

/**
 * Waiting for a condition, never for time: polls `check` every `everyMs` until it holds, and fails
 * with `what` once `timeoutMs` passes without it (a function: asked then, so that it can say what
 * the last check found). Answers how long it took (tests report it).
 */
export async function until(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string | (() => string), everyMs = 100): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${typeof what === 'function' ? what() : what}: not within ${timeoutMs} ms`);
    await pause(everyMs);
  }
  return Date.now() - started;
}

/**
 * Reads `read` every `everyMs` until `done` holds of what it answered, or `timeoutMs` passed;
 * answers the last value read either way, so that the caller's expect shows what it was when it
 * is still wrong (a diff says more than "not within").
 */
export async function settle<T>(read: () => Promise<T> | T, done: (value: T) => boolean, timeoutMs: number, everyMs = 100): Promise<T> {
  const started = Date.now();
  let value = await read();
  while (!done(value) && Date.now() - started <= timeoutMs) {
    await pause(everyMs);
    value = await read();
  }
  return value;
}
