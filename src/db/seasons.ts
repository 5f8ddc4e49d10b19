import { and, asc, eq, gte, isNotNull, isNull, lte, sql } from 'drizzle-orm';
import type { Db } from './client.js';
import { boards, seasons } from './schema.js';

/** A board's season, numbered s1, s2, ... per board. */
export type Season = typeof seasons.$inferSelect;

/** Seasons in the order they were started: s2 before s10. */
const byNumber = sql`substring(${seasons.id} from 2)::int`;

/** Whether two seasons' spans [startsAt, endsAt) share an instant; a season without endsAt runs on for ever. */
export function seasonsOverlap(a: Pick<Season, 'startsAt' | 'endsAt'>, b: Pick<Season, 'startsAt' | 'endsAt'>): boolean {
  const ends = (season: Pick<Season, 'endsAt'>) => season.endsAt?.getTime() ?? Infinity;
  return a.startsAt.getTime() < ends(b) && b.startsAt.getTime() < ends(a);
}

/**
 * Starts (or schedules) a board's next season, numbered one past its last, unless it would overlap
 * a season of the board not closed yet: then nothing is inserted and that season is answered as
 * the clash. The board's row is locked for the transaction, so concurrent starts on one board take
 * turns (neither the overlap check nor the numbering can race); the seasons of a board never
 * overlap, which is what lets a result belong to at most one of them. O(seasons of the board).
 */
export async function insertSeason(
  db: Db,
  season: { boardId: string; name: string; startsAt: Date; endsAt: Date | null },
): Promise<{ season: Season } | { clash: Season }> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select 1 from ${boards} where ${boards.id} = ${season.boardId} for update`);
    const clash = (await findLiveSeasons(tx, season.boardId)).find((live) => seasonsOverlap(live, season));
    if (clash) return { clash };
    const next = sql`(select 's' || (coalesce(max(substring(${seasons.id} from 2)::int), 0) + 1) from ${seasons} where ${seasons.boardId} = ${season.boardId})`;
    const [row] = await tx
      .insert(seasons)
      .values({ ...season, id: next })
      .returning();
    return { season: row! };
  });
}

/**
 * The board's seasons not closed yet, earliest first: the current one, one past its endsAt that the
 * season closer has not closed yet, and any scheduled ahead. Seasons never overlap (insertSeason).
 * O(live seasons) through the primary key.
 */
export async function findLiveSeasons(db: Pick<Db, 'select'>, boardId: string): Promise<Season[]> {
  return db
    .select()
    .from(seasons)
    .where(and(eq(seasons.boardId, boardId), isNull(seasons.closedAt)))
    .orderBy(asc(seasons.startsAt));
}

export async function findSeason(db: Db, boardId: string, id: string): Promise<Season | null> {
  const [row] = await db
    .select()
    .from(seasons)
    .where(and(eq(seasons.boardId, boardId), eq(seasons.id, id)));
  return row ?? null;
}

/** Every season of a board, oldest first. O(seasons of the board). */
export async function listSeasons(db: Db, boardId: string): Promise<Season[]> {
  return db.select().from(seasons).where(eq(seasons.boardId, boardId)).orderBy(byNumber);
}

/** Open seasons, on every board, whose endsAt is at or before `now`: the ones to close. */
export async function findDueSeasons(db: Db, now: Date): Promise<Season[]> {
  return db
    .select()
    .from(seasons)
    .where(and(isNull(seasons.closedAt), isNotNull(seasons.endsAt), lte(seasons.endsAt, now)));
}

/** Seasons, on every board, closed at or after `since`. */
export async function findSeasonsClosedSince(db: Db, since: Date): Promise<Season[]> {
  return db.select().from(seasons).where(gte(seasons.closedAt, since));
}
