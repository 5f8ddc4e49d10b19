import { asc, eq } from 'drizzle-orm';
import { type Board, DEFAULT_CLOSE_GRACE_SECONDS, type Period } from '../model/board.js';
import type { Db } from './client.js';
import { boards } from './schema.js';

type BoardRow = typeof boards.$inferSelect;

function toBoard(row: BoardRow): Board {
  return {
    id: row.id,
    title: row.title,
    order: row.order,
    aggregate: row.aggregate,
    maxScore: row.maxScore,
    periods: row.periods as Period[],
    regions: row.regions,
    topSize: row.topSize,
    retention: { DAILY: row.dailyRetentionDays, WEEKLY: row.weeklyRetentionDays, MONTHLY: row.monthlyRetentionDays },
    shards: row.shards,
    epoch: row.epoch,
    rankStyle: row.rankStyle,
    timeZone: row.timeZone,
    regionTimeZones: row.regionTimeZones,
    inactiveAfterDays: row.inactiveAfterDays,
    closeGraceSeconds: row.closeGraceSeconds,
    league: row.league,
    joinRequired: row.joinRequired,
    maxPlayers: row.maxPlayers,
    maxAttempts: row.maxAttempts,
    rewards: row.rewards,
    tieBreaks: row.tieBreaks,
    minScore: row.minScore,
    suspectAbove: row.suspectAbove,
    suspectJump: row.suspectJump,
    resultRate: row.resultRate,
    createdAt: row.createdAt,
  };
}

/** The ALL_TIME tie-break origin of a board created at `now`: UTC midnight a year and a day earlier, so a year of history can be back-filled. */
export function boardEpoch(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - 366 * 86_400_000);
}

/** A board to create: everything but what the service sets (its epoch, its creation time); `shards` defaults to 1, the zones to UTC. */
export type NewBoard = Omit<Board, 'epoch' | 'createdAt' | 'shards' | 'timeZone' | 'regionTimeZones' | 'rankStyle' | 'inactiveAfterDays'> & {
  shards?: number | undefined;
  /** Default ORDINAL. */
  rankStyle?: Board['rankStyle'] | undefined;
  /** Default 'UTC'. */
  timeZone?: string | undefined;
  /** Default none. */
  regionTimeZones?: Board['regionTimeZones'] | undefined;
  /** Default null: never. */
  inactiveAfterDays?: number | null | undefined;
};

/** Inserts a board; answers null when the id is taken. */
export async function insertBoard(db: Db, board: NewBoard, now = new Date()): Promise<Board | null> {
  const rows = await db
    .insert(boards)
    .values({
      id: board.id,
      title: board.title,
      order: board.order,
      aggregate: board.aggregate,
      maxScore: board.maxScore,
      periods: board.periods,
      regions: board.regions,
      topSize: board.topSize,
      dailyRetentionDays: board.retention.DAILY,
      weeklyRetentionDays: board.retention.WEEKLY,
      monthlyRetentionDays: board.retention.MONTHLY,
      shards: board.shards ?? 1,
      rankStyle: board.rankStyle ?? 'ORDINAL',
      timeZone: board.timeZone ?? 'UTC',
      regionTimeZones: board.regionTimeZones ?? [],
      inactiveAfterDays: board.inactiveAfterDays ?? null,
      closeGraceSeconds: board.closeGraceSeconds ?? DEFAULT_CLOSE_GRACE_SECONDS,
      league: board.league ?? null,
      joinRequired: board.joinRequired ?? false,
      maxPlayers: board.maxPlayers ?? null,
      maxAttempts: board.maxAttempts ?? null,
      rewards: board.rewards ?? [],
      tieBreaks: board.tieBreaks ?? [],
      minScore: board.minScore ?? 0,
      suspectAbove: board.suspectAbove ?? null,
      suspectJump: board.suspectJump ?? null,
      resultRate: board.resultRate ?? null,
      epoch: boardEpoch(now),
    })
    .onConflictDoNothing()
    .returning();
  return rows[0] ? toBoard(rows[0]) : null;
}

export async function findBoard(db: Db, id: string): Promise<Board | null> {
  const [row] = await db.select().from(boards).where(eq(boards.id, id));
  return row ? toBoard(row) : null;
}

export async function listBoards(db: Db): Promise<Board[]> {
  const rows = await db.select().from(boards).orderBy(asc(boards.id));
  return rows.map(toBoard);
}

/** What updateBoard may change; a field left out is kept. */
export interface BoardChanges {
  title?: string | undefined;
  topSize?: number | undefined;
  regions?: string[] | undefined;
  maxScore?: number | undefined;
  rankStyle?: Board['rankStyle'] | undefined;
  /** null clears it (never); undefined keeps it. */
  inactiveAfterDays?: number | null | undefined;
  closeGraceSeconds?: number | undefined;
  /** The board's prize bands, replaced whole; undefined keeps them. */
  rewards?: Board['rewards'];
  /** Only downwards (checked by writes/boards.ts); undefined keeps it. */
  minScore?: number | undefined;
  /** null clears it (never); undefined keeps it. */
  suspectAbove?: number | null | undefined;
  /** null clears it (never); undefined keeps it. */
  suspectJump?: number | null | undefined;
  /** null clears it (no limit); undefined keeps it. */
  resultRate?: Board['resultRate'];
}

/**
 * Changes a board's settings in one transaction, its row locked (FOR UPDATE) so that concurrent
 * changes take turns: `change` is handed the board as stored and answers what to write (a field
 * left out is kept), or throws to write nothing. Answers the board as stored after, or null when
 * there is none. O(1).
 */
export async function changeBoard(db: Db, id: string, change: (board: Board) => BoardChanges): Promise<Board | null> {
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(boards).where(eq(boards.id, id)).for('update');
    if (!row) return null;
    const set = Object.fromEntries(Object.entries(change(toBoard(row))).filter(([, value]) => value !== undefined)) as BoardChanges;
    if (Object.keys(set).length === 0) return toBoard(row);
    const [updated] = await tx.update(boards).set(set).where(eq(boards.id, id)).returning();
    return toBoard(updated!);
  });
}
