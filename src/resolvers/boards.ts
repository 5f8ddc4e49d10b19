import { type NewBoard, insertBoard } from '../db/boards.js';
import { type Board, PERIODS, type RegionTimeZone } from '../model/board.js';
import { canonicalTimeZone } from '../model/buckets.js';
import type { Context } from './context.js';
import { badInput } from './errors.js';

/** A board as createBoard receives it: everything but what the service sets (its epoch, its creation time). */
export type CreateBoardInput = NewBoard;

/** Creates a board; the input type has already checked each field. ALL_TIME is always kept. */
export async function createBoard(ctx: Context, input: CreateBoardInput): Promise<Board> {
  // Kept in the contract's order (ALL_TIME, SEASON, MONTHLY, WEEKLY, DAILY), whatever the input's.
  const periods = PERIODS.filter((period) => period === 'ALL_TIME' || input.periods.includes(period));
  const regions = [...new Set(input.regions)];
  const board = await insertBoard(ctx.services.database.db, {
    ...input,
    periods,
    regions,
    timeZone: requireTimeZone(input.timeZone ?? 'UTC', 'timeZone'),
    regionTimeZones: requireRegionTimeZones(input.regionTimeZones ?? [], regions),
  });
  if (!board) throw badInput(`A board "${input.id}" exists already.`);
  return ctx.services.boards.remember(board);
}

/** The canonical name of an IANA time zone, or BAD_USER_INPUT naming the field. */
function requireTimeZone(zone: string, field: string): string {
  const canonical = canonicalTimeZone(zone);
  if (!canonical) throw badInput(`${field}: "${zone}" is not an IANA time zone this service knows; write it like Europe/Paris, America/New_York or UTC.`);
  return canonical;
}

/** Each region's zone, checked: a region of the board, named once, with a known zone. */
function requireRegionTimeZones(zones: readonly RegionTimeZone[], regions: readonly string[]): RegionTimeZone[] {
  const seen = new Set<string>();
  return zones.map(({ region, timeZone }, i) => {
    if (!regions.includes(region)) throw badInput(`regionTimeZones[${i}]: "${region}" is not one of the board's regions (${regions.join(', ') || 'none'}).`);
    if (seen.has(region)) throw badInput(`regionTimeZones[${i}]: region "${region}" is named twice.`);
    seen.add(region);
    return { region, timeZone: requireTimeZone(timeZone, `regionTimeZones[${i}].timeZone`) };
  });
}
