import type { Board, Period, Retention } from './board.js';

/**
 * A bucket is one time slice of a period: the day 2026-11-29, the ISO week 2026-W48, the month
 * 2026-11, or `all`. Every bucket is UTC. Seasons are buckets too, labelled by the season's id.
 */
export interface Bucket {
  period: Period;
  label: string;
  /** When the bucket starts: the origin of its tie-break time. */
  start: Date;
  /** When the bucket ends (exclusive), or null for one that never ends. */
  end: Date | null;
}

const DAY_MS = 86_400_000;

function pad(value: number, width = 2): string {
  return String(value).padStart(width, '0');
}

function utcMidnight(at: Date): number {
  return Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
}

/** Monday 00:00 UTC of ISO week 1 of `isoYear`: the Monday of the week holding 4 January. */
function isoWeekOneMonday(isoYear: number): number {
  const jan4 = Date.UTC(isoYear, 0, 4);
  const weekday = (new Date(jan4).getUTCDay() + 6) % 7;
  return jan4 - weekday * DAY_MS;
}

function dayBucket(at: Date): Bucket {
  const start = utcMidnight(at);
  const day = new Date(start);
  return {
    period: 'DAILY',
    label: `${day.getUTCFullYear()}-${pad(day.getUTCMonth() + 1)}-${pad(day.getUTCDate())}`,
    start: day,
    end: new Date(start + DAY_MS),
  };
}

function weekBucket(at: Date): Bucket {
  const midnight = utcMidnight(at);
  const monday = midnight - ((new Date(midnight).getUTCDay() + 6) % 7) * DAY_MS;
  // The ISO year is the year of the week's Thursday.
  const isoYear = new Date(monday + 3 * DAY_MS).getUTCFullYear();
  const week = Math.round((monday - isoWeekOneMonday(isoYear)) / (7 * DAY_MS)) + 1;
  return {
    period: 'WEEKLY',
    label: `${isoYear}-W${pad(week)}`,
    start: new Date(monday),
    end: new Date(monday + 7 * DAY_MS),
  };
}

function monthBucket(at: Date): Bucket {
  const year = at.getUTCFullYear();
  const month = at.getUTCMonth();
  return {
    period: 'MONTHLY',
    label: `${year}-${pad(month + 1)}`,
    start: new Date(Date.UTC(year, month, 1)),
    end: new Date(Date.UTC(year, month + 1, 1)),
  };
}

export const ALL_TIME_LABEL = 'all';

function allTimeBucket(board: Pick<Board, 'epoch'>): Bucket {
  return { period: 'ALL_TIME', label: ALL_TIME_LABEL, start: board.epoch, end: null };
}

export type CalendarOrAllTime = Exclude<Period, 'SEASON'>;

/** The bucket of `period` that holds the instant `at`. O(1). */
export function bucketAt(board: Pick<Board, 'epoch'>, period: CalendarOrAllTime, at: Date): Bucket {
  switch (period) {
    case 'ALL_TIME':
      return allTimeBucket(board);
    case 'DAILY':
      return dayBucket(at);
    case 'WEEKLY':
      return weekBucket(at);
    case 'MONTHLY':
      return monthBucket(at);
  }
}

const LABEL_PATTERNS: Record<CalendarOrAllTime, RegExp> = {
  ALL_TIME: /^all$/,
  DAILY: /^(\d{4})-(\d{2})-(\d{2})$/,
  WEEKLY: /^(\d{4})-W(\d{2})$/,
  MONTHLY: /^(\d{4})-(\d{2})$/,
};

/**
 * The bucket a label names, or null when the label is malformed for the period
 * (including dates that do not exist, such as 2026-02-30 or 2026-W54).
 */
export function parseBucketLabel(board: Pick<Board, 'epoch'>, period: CalendarOrAllTime, label: string): Bucket | null {
  const match = LABEL_PATTERNS[period].exec(label);
  if (!match) return null;
  if (period === 'ALL_TIME') return allTimeBucket(board);
  const [year, part, day] = match.slice(1).map(Number) as [number, number, number | undefined];
  if (year < 1970) return null;
  let candidate: Bucket;
  if (period === 'DAILY') candidate = dayBucket(new Date(Date.UTC(year, part - 1, day ?? 1)));
  else if (period === 'MONTHLY') candidate = monthBucket(new Date(Date.UTC(year, part - 1, 1)));
  else candidate = weekBucket(new Date(isoWeekOneMonday(year) + (part - 1) * 7 * DAY_MS));
  // Round-tripping rejects overflowing parts that Date.UTC would silently carry over.
  return candidate.label === label ? candidate : null;
}

function addUtcDays(at: Date, days: number): Date {
  return new Date(at.getTime() + days * DAY_MS);
}

/** When a bucket stops being readable: its end plus the board's retention; null while it never ends. */
export function keptUntil(bucket: Bucket, retention: Retention): Date | null {
  if (!bucket.end) return null;
  if (bucket.period === 'ALL_TIME' || bucket.period === 'SEASON') return null;
  return addUtcDays(bucket.end, retention[bucket.period]);
}

/** Whether a bucket can still be read or written at `now`: started (give or take the allowed clock skew) and not past its retention. */
export function isKept(bucket: Bucket, retention: Retention, now: Date, skewMs = 0): boolean {
  if (bucket.start.getTime() > now.getTime() + skewMs) return false;
  const until = keptUntil(bucket, retention);
  return until === null || until.getTime() > now.getTime();
}
