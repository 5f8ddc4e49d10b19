import { and, asc, eq, gt, gte, inArray, isNotNull, isNull, lte, max, min, sql } from 'drizzle-orm';
import type { EntryMetadata, ScoreOrder } from '../model/board.js';
import type { Db } from './client.js';
import { boards, frozenStandings as seasonResults, seasons } from './schema.js';

/** A board's season, numbered s1, s2, ... per board. */
export type Season = typeof seasons.$inferSelect;

/** One row of a closed season's frozen final standings. */
export interface FrozenStanding {
  rank: number;
  playerId: string;
  score: number;
  reachedAt: Date;
  /** The frozen board score's entry metadata (JSON text); null when it had none, or when it was not asked for. */
  metadata: EntryMetadata | null;
}

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

/**
 * Up to `limit` frozen standings of a season strictly after rank `afterRank`, by the primary key
 * (a keyset, never an offset), and how many players the season ranked. Rows of erased players
 * (player id cleared) are left out; the others keep their frozen rank. O(log N + limit).
 */
export async function pageSeasonResults(
  db: Db,
  args: { boardId: string; seasonId: string; afterRank: number; limit: number; metadata: boolean },
): Promise<{ size: number; rows: FrozenStanding[] }> {
  const ofSeason = and(
    eq(seasonResults.boardId, args.boardId),
    eq(seasonResults.period, 'SEASON'),
    eq(seasonResults.bucket, args.seasonId),
    eq(seasonResults.region, ''),
  );
  // As its text, served as it was sent (drizzle would parse it); read only when asked for.
  const metadata = args.metadata ? sql<EntryMetadata | null>`${seasonResults.metadata}::text` : sql<null>`null::text`;
  const [rows, [total]] = await Promise.all([
    db
      .select({ rank: seasonResults.rank, playerId: seasonResults.playerId, score: seasonResults.score, reachedAt: seasonResults.reachedAt, metadata })
      .from(seasonResults)
      .where(and(ofSeason, gt(seasonResults.rank, args.afterRank), isNotNull(seasonResults.playerId)))
      .orderBy(asc(seasonResults.rank))
      .limit(args.limit),
    // Ranks run 1..N without gaps when frozen, so the last rank is the size: one index probe.
    db
      .select({ size: max(seasonResults.rank) })
      .from(seasonResults)
      .where(ofSeason),
  ]);
  return {
    size: total?.size ?? 0,
    rows: rows.flatMap((row) => (row.playerId === null ? [] : [{ ...row, playerId: row.playerId }])),
  };
}

/**
 * The first frozen rank of each score among a season's standings (erased players' rows included:
 * they keep their places), which is that score's COMPETITION rank. One probe of
 * season_results_score_idx per score: O(k log N).
 */
export async function firstRanksOfScores(db: Db, args: { boardId: string; seasonId: string; scores: number[] }): Promise<Map<number, number>> {
  if (args.scores.length === 0) return new Map();
  const rows = await db
    .select({ score: seasonResults.score, first: min(seasonResults.rank) })
    .from(seasonResults)
    .where(
      and(
        eq(seasonResults.boardId, args.boardId),
        eq(seasonResults.period, 'SEASON'),
        eq(seasonResults.bucket, args.seasonId),
        eq(seasonResults.region, ''),
        inArray(seasonResults.score, [...new Set(args.scores)]),
      ),
    )
    .groupBy(seasonResults.score);
  return new Map(rows.map((row) => [row.score, row.first ?? 0]));
}

/**
 * Each score's DENSE rank among a season's frozen standings (erased players' rows included: their
 * scores still count): 1 + the number of distinct better scores. One recursive query walks the
 * season's distinct scores from the best down to the worst of `scores`, each step one probe of
 * season_results_score_idx (the next distinct score, never a scan of a run of ties; PostgreSQL
 * 15 has no skip scan of its own): O(D log N) for the D distinct scores at or above the worst asked.
 */
export async function denseRanksOfScores(
  db: Db,
  args: { boardId: string; seasonId: string; order: ScoreOrder; scores: number[] },
): Promise<Map<number, number>> {
  if (args.scores.length === 0) return new Map();
  const asked = [...new Set(args.scores)];
  const highFirst = args.order === 'HIGH_FIRST';
  const worst = highFirst ? Math.min(...asked) : Math.max(...asked);
  // The best score, then each next distinct one: max below (HIGH_FIRST) or min above (LOW_FIRST).
  const first = highFirst ? sql`max(score)` : sql`min(score)`;
  const next = highFirst ? sql`max(r.score)` : sql`min(r.score)`;
  const beyond = highFirst ? sql`r.score < walk.score` : sql`r.score > walk.score`;
  const notPast = highFirst ? sql`walk.score > ${worst}` : sql`walk.score < ${worst}`;
  const rows = await db.execute<{ score: string; rank: string }>(sql`
    with recursive walk(score, rank) as (
      select ${first}, 1::bigint from frozen_standings where board_id = ${args.boardId} and period = 'SEASON' and bucket = ${args.seasonId} and region = ''
      union all
      select (select ${next} from frozen_standings r where r.board_id = ${args.boardId} and r.period = 'SEASON' and r.bucket = ${args.seasonId} and r.region = '' and ${beyond}), walk.rank + 1
      from walk where walk.score is not null and ${notPast}
    )
    select score, rank from walk where score in ${sql`(${sql.join(
      asked.map((score) => sql`${score}`),
      sql`, `,
    )})`}`);
  return new Map(rows.map((row) => [Number(row.score), Number(row.rank)]));
}
