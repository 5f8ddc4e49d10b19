import type { CalendarPeriod } from '../../src/model/board.js';
import { parseBucketLabel } from '../../src/model/buckets.js';
import { closeCalendarLists } from '../../src/writes/close-buckets.js';
import { DAY_MS, noonDaysAgo, utcDay } from './bucket-history.js';
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
 * Closes buckets of a board (by their labels) as the bucket closer does once their end plus the
 * board's grace has passed, through the same call (closeCalendarLists): every list of each (the
 * global one and each region's, on the region's own calendar) frozen in PostgreSQL, its Redis keys
 * dropped, its top announced. A read answered after this can only come from the frozen standings.
 * Answers how many standings this call froze (none for lists the app's own closer froze first).
 */
export async function closeBuckets(t: TestApp, boardId: string, period: CalendarPeriod, labels: readonly string[]): Promise<number> {
  const { storage, index, seasons, boards, log } = t.app.parts;
  const board = await boards.find(boardId);
  if (!board) throw new Error(`no board ${boardId}`);
  const lists = labels.flatMap((label) =>
    [null, ...board.regions].map((region) => {
      const bucket = parseBucketLabel(board, period, label, region);
      if (!bucket) throw new Error(`no ${period} bucket ${label}`);
      return { board, bucket, region };
    }),
  );
  const frozen = await closeCalendarLists({ storage, index, seasons, log, now: () => t.app.parts.now() }, lists);
  return frozen.reduce((total, list) => total + list.size, 0);
}
