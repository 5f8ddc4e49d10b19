import { setImmediate as nextPass } from 'node:timers/promises';

/** Lists longer than this are completed a chunk at a time, each chunk in a pass of the event loop of its own. */
export const ROWS_PER_CHUNK = 250;

/**
 * A long list's items for GraphQL to complete in chunks: the first ROWS_PER_CHUNK as they are, the
 * next ones each behind one more pass of the event loop. graphql-js completes a list's ready items
 * in one go, so a thousand-row page (with its names and times, all looked up before) would hold
 * the event loop for its whole completion, and every other request of the process (a game's
 * `top(limit: 1)` probe) would wait behind it; in chunks, they are answered between them.
 * Short lists, what games read, are returned untouched. O(n), one promise per item past the first chunk.
 */
export function inChunks<T>(items: readonly T[]): readonly (T | Promise<T>)[] {
  if (items.length <= ROWS_PER_CHUNK) return items;
  const chunked: (T | Promise<T>)[] = items.slice(0, ROWS_PER_CHUNK);
  let pass: Promise<unknown> = Promise.resolve();
  for (let start = ROWS_PER_CHUNK; start < items.length; start += ROWS_PER_CHUNK) {
    pass = pass.then(() => nextPass());
    const ready = pass;
    for (const item of items.slice(start, start + ROWS_PER_CHUNK)) chunked.push(ready.then(() => item));
  }
  return chunked;
}
