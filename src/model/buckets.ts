import { Temporal } from 'temporal-polyfill';
import { type Board, type CalendarPeriod, type Period, type Retention, closesAt, timeZoneOf } from './board.js';

/**
 * A bucket is one time slice of a period: the day 2026-11-29, the ISO week 2026-W48, the month
 * 2026-11, or `all`. Calendar buckets follow the calendar of a time zone (the board's, or its
 * region's; UTC by default): a day runs from one local midnight to the next, so a day of a
 * daylight-saving change lasts 23 or 25 hours, and its label is the local date. Seasons are buckets
 * too, labelled by the season's id.
 */
export interface Bucket {
  period: Period;
  label: string;
  /** When the bucket starts: the origin of its tie-break time. */
  start: Date;
  /** When the bucket ends (exclusive), or null for one that never ends. */
  end: Date | null;
}

/** What a bucket is cut by: the board's epoch (for ALL_TIME) and its time zones (for the rest). */
export type BucketCalendar = Pick<Board, 'epoch'> & Partial<Pick<Board, 'timeZone' | 'regionTimeZones'>>;

function pad(value: number, width = 2): string {
  return String(value).padStart(width, '0');
}

/** A date on a calendar, month 1 to 12. */
interface LocalDate {
  year: number;
  month: number;
  day: number;
}

const DAY_MS = 86_400_000;

/** Calendar arithmetic is the same in every zone: done on the date's UTC midnight. */
function utcDate(ms: number): LocalDate {
  const date = new Date(ms);
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
}
const utcMidnight = ({ year, month, day }: LocalDate) => Date.UTC(year, month - 1, day);
const addDays = (date: LocalDate, days: number) => utcDate(utcMidnight(date) + days * DAY_MS);

const dateFormats = new Map<string, Intl.DateTimeFormat>();

/** The date an instant falls on in `zone`. O(1); a few µs outside UTC (Intl). */
function localDateOf(ms: number, zone: string): LocalDate {
  if (zone === 'UTC') return utcDate(ms);
  let format = dateFormats.get(zone);
  if (!format) dateFormats.set(zone, (format = new Intl.DateTimeFormat('en-US', { timeZone: zone, year: 'numeric', month: 'numeric', day: 'numeric' })));
  const parts = format.formatToParts(ms);
  const part = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)!.value);
  return { year: part('year'), month: part('month'), day: part('day') };
}

/** First instants of local dates, per zone and date: a date's start never changes once known. */
const dayStarts = new Map<string, number>();

/** The first instant of a local date in `zone`: its midnight, or the first instant after a gap (Temporal knows the zone's rules). */
function startOf(date: LocalDate, zone: string): Date {
  if (zone === 'UTC') return new Date(utcMidnight(date));
  const key = `${zone}|${date.year}-${date.month}-${date.day}`;
  let start = dayStarts.get(key);
  if (start === undefined) {
    // Bounded: a backfill over centuries must not grow it without end.
    if (dayStarts.size >= 100_000) dayStarts.clear();
    start = Temporal.PlainDate.from(date).toZonedDateTime({ timeZone: zone }).epochMilliseconds;
    dayStarts.set(key, start);
  }
  return new Date(start);
}

type CalendarPeriodOf = Exclude<Period, 'SEASON' | 'ALL_TIME'>;

/** The bucket of a calendar period holding the local date `date` in `zone`. */
function calendarBucket(period: CalendarPeriodOf, date: LocalDate, zone: string): Bucket {
  switch (period) {
    case 'DAILY':
      return { period, label: `${date.year}-${pad(date.month)}-${pad(date.day)}`, start: startOf(date, zone), end: startOf(addDays(date, 1), zone) };
    case 'WEEKLY': {
      const monday = addDays(date, -((new Date(utcMidnight(date)).getUTCDay() + 6) % 7));
      // The ISO year is the year of the week's Thursday; week 1 holds 4 January.
      const isoYear = addDays(monday, 3).year;
      const week = Math.round((utcMidnight(monday) - isoWeekOneMonday(isoYear)) / (7 * DAY_MS)) + 1;
      return { period, label: `${isoYear}-W${pad(week)}`, start: startOf(monday, zone), end: startOf(addDays(monday, 7), zone) };
    }
    case 'MONTHLY': {
      const next = date.month === 12 ? { year: date.year + 1, month: 1, day: 1 } : { year: date.year, month: date.month + 1, day: 1 };
      return { period, label: `${date.year}-${pad(date.month)}`, start: startOf({ ...date, day: 1 }, zone), end: startOf(next, zone) };
    }
  }
}

/** Monday 00:00 UTC of ISO week 1 of `isoYear`: the Monday of the week holding 4 January. */
function isoWeekOneMonday(isoYear: number): number {
  const jan4 = Date.UTC(isoYear, 0, 4);
  const weekday = (new Date(jan4).getUTCDay() + 6) % 7;
  return jan4 - weekday * DAY_MS;
}

/**
 * The last bucket answered per zone and period. Nearly every result and read falls in the current
 * bucket, so this answers it without any calendar arithmetic; a bucket never changes once cut.
 */
const lastBucket = new Map<string, Bucket>();

/** What an IANA time zone name looks like: parts of letters, digits, `_`, `-` and `+`, each starting with a letter, joined by `/`. */
const IANA_NAME = /^[A-Za-z][\w+-]{0,30}(?:\/[A-Za-z][\w+-]{0,30}){0,2}$/;

/** Whether `zone` is a time zone this service knows; answers its canonical name (Europe/Paris for europe/paris), or null. */
export function canonicalTimeZone(zone: string): string | null {
  // Only a name shaped as IANA's are (Europe/Paris, America/Port-au-Prince, Etc/GMT+5, UTC): Temporal
  // also takes an ISO date-time for a zone (2020-01-01T00:00+01:00 as +01:00, a bracketed name as
  // that name), and a bare offset (+01:00) is no zone: it knows no daylight-saving time.
  if (!IANA_NAME.test(zone)) return null;
  try {
    return Temporal.Now.zonedDateTimeISO(zone).timeZoneId;
  } catch {
    return null;
  }
}

export const ALL_TIME_LABEL = 'all';

function allTimeBucket(board: Pick<Board, 'epoch'>): Bucket {
  return { period: 'ALL_TIME', label: ALL_TIME_LABEL, start: board.epoch, end: null };
}

export type CalendarOrAllTime = Exclude<Period, 'SEASON'>;

/** The bucket of `period` that holds the instant `at`, on the calendar of `region`'s zone. O(1). */
export function bucketAt(board: BucketCalendar, period: CalendarOrAllTime, at: Date, region: string | null = null): Bucket {
  if (period === 'ALL_TIME') return allTimeBucket(board);
  const zone = timeZoneOf(board, region);
  const memo = `${zone}|${period}`;
  const last = lastBucket.get(memo);
  const ms = at.getTime();
  if (last && last.start.getTime() <= ms && ms < last.end!.getTime()) return last;
  const bucket = calendarBucket(period, localDateOf(ms, zone), zone);
  lastBucket.set(memo, bucket);
  return bucket;
}

const LABEL_PATTERNS: Record<CalendarOrAllTime, RegExp> = {
  ALL_TIME: /^all$/,
  DAILY: /^(\d{4})-(\d{2})-(\d{2})$/,
  WEEKLY: /^(\d{4})-W(\d{2})$/,
  MONTHLY: /^(\d{4})-(\d{2})$/,
};

/**
 * The bucket a label names on the calendar of `region`'s zone, or null when the label is malformed
 * for the period (including dates that do not exist, such as 2026-02-30 or 2026-W54).
 */
export function parseBucketLabel(board: BucketCalendar, period: CalendarOrAllTime, label: string, region: string | null = null): Bucket | null {
  const match = LABEL_PATTERNS[period].exec(label);
  if (!match) return null;
  if (period === 'ALL_TIME') return allTimeBucket(board);
  const [year, part, day] = match.slice(1).map(Number) as [number, number, number | undefined];
  if (year < 1970) return null;
  const date = period === 'WEEKLY' ? utcDate(isoWeekOneMonday(year) + (part - 1) * 7 * DAY_MS) : utcDate(Date.UTC(year, part - 1, day ?? 1));
  const candidate = calendarBucket(period, date, timeZoneOf(board, region));
  // Round-tripping rejects a week 53 of a year with 52, and any part that would carry over.
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

/**
 * Whether a bucket has closed at `now`: its end plus the board's grace has passed (closesAt). A
 * closed bucket takes no result, and its index is neither rebuilt nor written again: its standings
 * are frozen (docs/closing.md). O(1).
 */
export function hasClosed(board: Pick<Board, 'closeGraceSeconds'>, bucket: Pick<Bucket, 'end'>, now: Date): boolean {
  const closes = closesAt(board, bucket.end);
  return closes !== null && closes.getTime() <= now.getTime();
}

/** Whether a bucket can still be read or written at `now`: started (give or take the allowed clock skew) and not past its retention. */
export function isKept(bucket: Bucket, retention: Retention, now: Date, skewMs = 0): boolean {
  if (bucket.start.getTime() > now.getTime() + skewMs) return false;
  const until = keptUntil(bucket, retention);
  return until === null || until.getTime() > now.getTime();
}

/**
 * The buckets of a calendar period that are kept at `now` on the calendar of `region`'s zone,
 * newest first: the one holding `now` (or, within the allowed clock skew, the next one) and each
 * before it until one is past its retention. What a derived period's index may hold. O(buckets kept).
 */
export function keptBuckets(
  board: BucketCalendar & Pick<Board, 'retention'>,
  period: CalendarPeriod,
  now: Date,
  region: string | null = null,
  skewMs = 0,
): Bucket[] {
  const out: Bucket[] = [];
  let bucket: Bucket | null = bucketAt(board, period, new Date(now.getTime() + skewMs), region);
  while (bucket && isKept(bucket, board.retention, now, skewMs)) {
    out.push(bucket);
    bucket = bucketAt(board, period, new Date(bucket.start.getTime() - 1), region);
  }
  return out;
}
