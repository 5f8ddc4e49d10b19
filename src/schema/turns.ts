import { setImmediate as nextTurn } from 'node:timers/promises';

/** Lists longer than this are completed a chunk of it at a time, each chunk in a turn of the event loop of its own. */
export const ROWS_PER_TURN = 250;

/**
 * A long list's items for GraphQL to complete in turns: the first ROWS_PER_TURN as they are, the
 * next ones each behind one more turn of the event loop. graphql-js completes a list's ready items
 * in one go, so a thousand-row page (with its names and times, all looked up before) would hold
 * the event loop for its whole completion, and every other request of the process (a game's
 * `top(limit: 1)` probe) would wait behind it; in turns, they are answered between the chunks.
 * Short lists, what games read, are returned untouched. O(n), one promise per item past the first chunk.
 */
export function inTurns<T>(items: readonly T[]): readonly (T | Promise<T>)[] {
  if (items.length <= ROWS_PER_TURN) return items;
  const turned: (T | Promise<T>)[] = items.slice(0, ROWS_PER_TURN);
  let turn: Promise<unknown> = Promise.resolve();
  for (let start = ROWS_PER_TURN; start < items.length; start += ROWS_PER_TURN) {
    turn = turn.then(() => nextTurn());
    const ready = turn;
    for (const item of items.slice(start, start + ROWS_PER_TURN)) turned.push(ready.then(() => item));
  }
  return turned;
}
