import { valueFromASTUntyped } from 'graphql';
import { builder } from './builder.js';
import { badInput } from '../errors.js';

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/**
 * The instant an ISO-8601 date-time names, or null when it is malformed or not on the calendar.
 * Date's own parser rolls 2026-02-30 over into 2 March and T24:00 into the next day, so every field
 * is checked against its range (the day against its month's length, leap years included) first.
 */
export function parseDateTime(text: string): Date | null {
  const match = ISO_DATE_TIME.exec(text);
  if (!match) return null;
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, offsetHours = 0, offsetMinutes = 0] = match
    .slice(1)
    .map((part) => (part === undefined ? 0 : Number(part)));
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const onCalendar =
    month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59 && offsetHours <= 23 && offsetMinutes <= 59;
  if (!onCalendar) return null;
  const parsed = new Date(text);
  return Number.isNaN(parsed.getTime()) ? null : parsed;
}

builder.scalarType('DateTime', {
  description: 'An ISO-8601 date-time in UTC, e.g. 2026-11-29T18:00:00.000Z.',
  serialize: (value) => value.toISOString(),
  parseValue: (value) => {
    const parsed = typeof value === 'string' ? parseDateTime(value) : null;
    if (parsed) return parsed;
    throw badInput(`${JSON.stringify(value)} is not an ISO-8601 date-time on the calendar, such as 2026-11-29T18:00:00.000Z.`);
  },
});

// Any JSON value, as a literal in the document or in the variables; what a field takes of it (entry
// metadata: an object of at most 1,024 bytes) is that field's check, so the message can name the field.
builder.scalarType('JSON', {
  description: 'A JSON value. Entry metadata is a JSON object of at most 1,024 bytes as UTF-8.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (node, variables) => valueFromASTUntyped(node, variables),
});
