import type { CalendarPeriod } from '../../src/model/board.js';
import { parseBucketLabel } from '../../src/model/buckets.js';
import { DAY_MS, freeze, noonDaysAgo, utcDay } from './bucket-history.js';
import type { TestApp } from './test-app.js';

export { DAY_MS };

/**
 * The day `daysAgo` days before `now`'s (UTC) day: its noon, and its DAILY label. At noon UTC the
 * date is the same in UTC and in every European zone, so a region on Europe/Berlin's calendar
 * labels it alike.
 */
export function dayAgo(daysAgo: number, now: Date = new Date()): { noon: Date; label: string } {
  const noon = noonDaysAgo(now, daysAgo);
  return { noon, label: utcDay(noon) };
}

/**
 * Closes buckets of a board (by their labels) as the closer does once their end plus the board's
 * grace has passed: every list of each (the global one and each region's, on the region's own
 * calendar) frozen in PostgreSQL, then their Redis keys dropped. A read answered after this can
 * only come from the frozen standings. Answers how many standings were frozen.
 */
export async function closeBuckets(t: TestApp, boardId: string, period: CalendarPeriod, labels: readonly string[]): Promise<number> {
  const board = await t.app.parts.boards.find(boardId);
  if (!board) throw new Error(`no board ${boardId}`);
  const regions = [null, ...board.regions];
  const sizes = await freeze(t, boardId, period, labels, regions);
  await t.app.parts.index.drop(
    labels.flatMap((label) => regions.map((region) => ({ board, bucket: parseBucketLabel(board, period, label, region)!, region }))),
  );
  return sizes.reduce((total, size) => total + size, 0);
}
