import type { PendingQuery, Row, Sql, TransactionSql } from 'postgres';
import type { Period, RankStyle, RewardBand, ScoreOrder, TieBreak } from '../model/board.js';
import { bucketClosedEvent, insertAwards } from './awards.js';
import { type BoardScoreList, listBoardScores } from './board-scores.js';
import { type OutboxEvent, enqueueWebhookEvents } from './webhook-outbox.js';
import { webhookWants } from './webhook-probe.js';
import { resultsBestFirst } from './result-order.js';
import { lockBoardsShared } from './locks.js';
import { goneBoards } from './board-deletion.js';
import type { Season } from './seasons.js';

/**
 * Closed buckets and their frozen final standings (frozen_buckets, frozen_standings). One
 * mechanism for every period: a calendar bucket closing at its end plus the board's grace, a
 * season closed by its end or by an operator. Reads of a closed bucket are served from here.
 */

/** One list of a bucket to freeze: the board scores it ranks (BoardScoreList), its span, and how the index orders it. */
export interface FreezeList extends BoardScoreList {
  period: Period;
  /** The bucket's first instant: the origin of its tie-break time. */
  startsAt: Date;
  /** Exclusive; null for a season with no end set. */
  endsAt: Date | null;
  order: ScoreOrder;
  /** The board's maxScore (the mirror of a LOW_FIRST score). */
  maxScore: number;
  /** The board's tie-break columns: results are ranked by the whole (score, columns…) tuple (db/result-order.ts); empty on a plain board. */
  tieBreaks: readonly TieBreak[];
  /**
   * The ranking index's tie-break time unit for this bucket (see ranking/packing.ts): players with
   * an equal result reached in the same unit are ordered by player id, so the frozen order is the
   * index's order exactly. `slots` is the number of units the packing holds. A packing with the
   * time in the member breaks ties to the millisecond over 2^40 ms from the bucket's start (unit 1,
   * 2^40 slots), clamped there as the member's prefix is.
   */
  tie: { unitMs: number; slots: number };
  /** The board's rank style: the ranks its reward bands and its BUCKET_CLOSED event count in (db/awards.ts). */
  rankStyle: RankStyle;
  /** The board's top size: how many standings BUCKET_CLOSED carries as the final top. */
  topSize: number;
  /** The board's reward bands, whose awards the freeze computes (db/awards.ts). */
  rewards: readonly RewardBand[];
}

export interface FreezeArgs {
  lists: readonly FreezeList[];
  closedAt: Date;
  /** A season to mark closed in the same transaction; when it is closed already, nothing is frozen (null). */
  season?: { boardId: string; seasonId: string } | undefined;
}

/** What a freeze did: the season it closed (when asked to), and each list it froze with its size. */
export interface Frozen {
  season: Season | null;
  lists: { list: FreezeList; size: number }[];
  /** A board of the lists was deleted (deleteBoard) before the freeze: nothing was frozen. */
  boardGone?: true;
}

/** A list's key, as frozen_buckets keys it. */
export interface FrozenKey {
  boardId: string;
  period: Period;
  bucket: string;
  /** '' for the global list. */
  region: string;
}

/** A closed bucket's marker. */
export interface FrozenBucket extends FrozenKey {
  startsAt: Date;
  endsAt: Date | null;
  closedAt: Date;
  /** How many players it ranked when frozen (its last rank). */
  size: number;
}

/** Lists in one order for every process, so two freezes racing over the same lists wait rather than deadlock. */
const byKey = (a: FrozenKey, b: FrozenKey) =>
  a.boardId.localeCompare(b.boardId) || a.period.localeCompare(b.period) || a.bucket.localeCompare(b.bucket) || a.region.localeCompare(b.region);

/**
 * Freezes lists' final standings, in one transaction: each list is either open or closed with all
 * its standings, never half frozen (a crash rolls the whole freeze back and the close is simply
 * tried again).
 *
 * Exactly one caller freezes a list: its frozen_buckets row is inserted first, ON CONFLICT DO
 * NOTHING, so a second process freezing it at the same time waits on the first's uncommitted key,
 * then finds it and skips the list (or, if the first rolled back, freezes it itself). With
 * `season`, the season's row is marked closed first, and a season already closed freezes nothing.
 * Nothing else waits: the write path never touches these rows, and the freeze only reads board
 * scores (an MVCC snapshot, no row locks).
 *
 * Each list is one INSERT ... SELECT of its {@link rankedBoardScores}. The rows never leave the
 * server: O(N log N) for the sort, then N inserts into frozen_standings and its indexes.
 *
 * In the same transaction, so that a close is never without them nor they without it: each
 * list's awards, one INSERT ... SELECT over the standings just frozen (db/awards.ts), and, when a
 * webhook wants BUCKET_CLOSED of the board (one probe a board), one event a list (its final top,
 * its first awards) written to the outbox.
 */
export async function freezeLists(sql: Sql, args: FreezeArgs): Promise<Frozen | null> {
  return sql.begin(async (tx) => {
    // The boards' locks, shared, then whether they still exist (a statement of its own, whose
    // snapshot follows the locks): a deleteBoard committed before is seen, one after waits for this
    // freeze and deletes what it wrote (see db/board-deletion.ts). A deleted board freezes nothing.
    const boardIds = [...new Set(args.lists.map((list) => list.boardId))];
    if (boardIds.length > 0) {
      await lockBoardsShared(tx, boardIds);
      if ((await goneBoards(tx, boardIds)).length > 0) return { season: null, lists: [], boardGone: true as const };
    }
    let season: Season | null = null;
    if (args.season) {
      season = await markSeasonClosed(tx, args.season, args.closedAt);
      if (!season) return null;
    }
    // The sort of a large bucket fits in memory rather than spilling to disk; and a freeze of
    // millions of standings is a job, not a request: the sessions' statement timeout is lifted.
    await tx`set local work_mem = '256MB'`;
    await tx`set local statement_timeout = 0`;
    const lists: Frozen['lists'] = [];
    const events: OutboxEvent[] = [];
    const wanted = new Map<string, boolean>();
    for (const list of [...args.lists].sort(byKey)) {
      const [claimed] = await tx`
        insert into frozen_buckets (board_id, period, bucket, region, starts_at, ends_at, closed_at, size)
        values (${list.boardId}, ${list.period}, ${list.bucket}, ${list.region}, ${list.startsAt.toISOString()}::timestamptz,
                ${list.endsAt?.toISOString() ?? null}::timestamptz, ${args.closedAt.toISOString()}::timestamptz, 0)
        on conflict do nothing
        returning 1`;
      if (!claimed) continue;
      const size = await insertStandings(tx, list);
      await tx`
        update frozen_buckets set size = ${size}
        where board_id = ${list.boardId} and period = ${list.period} and bucket = ${list.bucket} and region = ${list.region}`;
      const awardCount = await insertAwards(tx, list, size);
      if (!wanted.has(list.boardId)) wanted.set(list.boardId, await webhookWants(tx, 'BUCKET_CLOSED', list.boardId));
      if (wanted.get(list.boardId)) events.push(await bucketClosedEvent(tx, list, { size, awardCount, closedAt: args.closedAt }));
      lists.push({ list, size });
    }
    await enqueueWebhookEvents(tx, events);
    return { season, lists };
  });
}

async function markSeasonClosed(tx: TransactionSql, which: { boardId: string; seasonId: string }, closedAt: Date): Promise<Season | null> {
  const [closed] = await tx<{ board_id: string; id: string; name: string; starts_ms: number; ends_ms: number | null; closed_ms: number }[]>`
    update seasons set closed_at = ${closedAt.toISOString()}::timestamptz
    where board_id = ${which.boardId} and id = ${which.seasonId} and closed_at is null
    returning board_id, id, name, round(extract(epoch from starts_at) * 1000)::float8 as starts_ms,
              round(extract(epoch from ends_at) * 1000)::float8 as ends_ms, round(extract(epoch from closed_at) * 1000)::float8 as closed_ms`;
  if (!closed) return null;
  return {
    boardId: closed.board_id,
    id: closed.id,
    name: closed.name,
    startsAt: new Date(closed.starts_ms),
    endsAt: closed.ends_ms === null ? null : new Date(closed.ends_ms),
    closedAt: new Date(closed.closed_ms),
  };
}

/** The start of year 10000, past PostgreSQL's and an ISO string's four-digit years. */
const LAST_TIMESTAMP_MS = Date.UTC(10_000, 0, 1);

/**
 * A list's standings as the index ranks them, as the columns rank, player_id, score, reached_at,
 * metadata, tie_break_values (unordered: order by rank to read them in order): its board scores
 * (kept, or derived from the log), flagged players left out, scores reached outside [startsAt,
 * endsAt) left out, numbered with row_number() in the index's order: the result (the score, then
 * each tie-break column in its own direction: resultOrder), then the tie-break unit of the packing,
 * then the player id as Redis orders equal values in a REV read. What a freeze inserts, and what
 * an export of an open bucket streams from one snapshot.
 */

export function rankedBoardScores(sql: Sql | TransactionSql, list: FreezeList): PendingQuery<Row[]> {
  const startsAt = list.startsAt.toISOString();
  const endsAt = list.endsAt?.toISOString() ?? null;
  // The index's tie-break time: the start of the unit the score was reached in, where the packing
  // clamps it (decades after the start). date_bin works in whole microseconds, so it is exact.
  // A packing with many time bits (a small maxScore) reaches past what a timestamp holds: no clamp then.
  const lastMs = list.startsAt.getTime() + (list.tie.slots - 1) * list.tie.unitMs;
  const lastUnit = lastMs < LAST_TIMESTAMP_MS ? new Date(lastMs).toISOString() : 'infinity';
  // collate "C": byte order, as Redis orders members, whatever the database's collation.
  return sql`
    select row_number() over (order by ${resultsBestFirst(sql, list, 's')}, s.tie asc, s.player_id collate "C" desc) as rank,
           s.player_id, s.score, s.reached_at, s.metadata, s.tie_break_values
    from (
      select s.player_id, s.score, s.reached_at, s.metadata, s.tie_break_values,
             least(date_bin(${list.tie.unitMs}::int * interval '1 millisecond', s.reached_at, ${startsAt}::timestamptz), ${lastUnit}::timestamptz) as tie
      from (${listBoardScores(sql, list, { metadata: true })}) as s
      where s.reached_at >= ${startsAt}::timestamptz
        and (${endsAt}::timestamptz is null or s.reached_at < ${endsAt}::timestamptz)
        and not exists (select 1 from players p where p.id = s.player_id and p.flagged_at is not null)
    ) as s`;
}

/** Inserts one list's standings in the index's order; answers how many. */
async function insertStandings(tx: TransactionSql, list: FreezeList): Promise<number> {
  const inserted = await tx`
    insert into frozen_standings (board_id, period, bucket, region, rank, player_id, score, reached_at, metadata, tie_break_values)
    select ${list.boardId}, ${list.period}, ${list.bucket}, ${list.region}, r.rank, r.player_id, r.score, r.reached_at, r.metadata, r.tie_break_values
    from (${rankedBoardScores(tx, list)}) as r`;
  return inserted.count;
}

type FrozenBucketRow = {
  board_id: string;
  period: Period;
  bucket: string;
  region: string;
  starts_ms: number;
  ends_ms: number | null;
  closed_ms: number;
  size: number;
};

const frozenBucketColumns = (sql: Sql) => sql`
  board_id, period, bucket, region, round(extract(epoch from starts_at) * 1000)::float8 as starts_ms,
  round(extract(epoch from ends_at) * 1000)::float8 as ends_ms, round(extract(epoch from closed_at) * 1000)::float8 as closed_ms, size`;

function toFrozenBucket(row: FrozenBucketRow): FrozenBucket {
  return {
    boardId: row.board_id,
    period: row.period,
    bucket: row.bucket,
    region: row.region,
    startsAt: new Date(row.starts_ms),
    endsAt: row.ends_ms === null ? null : new Date(row.ends_ms),
    closedAt: new Date(row.closed_ms),
    size: row.size,
  };
}

/** One list's close marker, or null while it is open. One primary-key probe. */
export async function findFrozenBucket(sql: Sql, key: FrozenKey): Promise<FrozenBucket | null> {
  const [row] = await sql<FrozenBucketRow[]>`
    select ${frozenBucketColumns(sql)} from frozen_buckets
    where board_id = ${key.boardId} and period = ${key.period} and bucket = ${key.bucket} and region = ${key.region}`;
  return row ? toFrozenBucket(row) : null;
}

/**
 * A board's closed lists of one period (every region when `region` is undefined), newest first
 * (by startsAt). A primary-key range: O(log N + lists).
 */
export async function listFrozenBuckets(sql: Sql, args: { boardId: string; period?: Period; region?: string }): Promise<FrozenBucket[]> {
  const rows = await sql<FrozenBucketRow[]>`
    select ${frozenBucketColumns(sql)} from frozen_buckets
    where board_id = ${args.boardId}
      ${args.period === undefined ? sql`` : sql`and period = ${args.period}`}
      ${args.region === undefined ? sql`` : sql`and region = ${args.region}`}
    order by starts_at desc, region`;
  return rows.map(toFrozenBucket);
}

/**
 * Deletes closed calendar lists (and their standings and awards) that ended before `endedBefore` per their
 * board's retention: `lists` names them. Seasons are kept for ever. Answers how many lists went.
 */
export async function dropFrozenBuckets(sql: Sql, lists: readonly FrozenKey[]): Promise<number> {
  if (lists.length === 0) return 0;
  return sql.begin(async (tx) => {
    // Deleting a million standings and their index entries is a job, as their freeze was: no statement timeout.
    await tx`set local statement_timeout = 0`;
    let dropped = 0;
    for (const key of [...lists].sort(byKey)) {
      const where = tx`board_id = ${key.boardId} and period = ${key.period} and bucket = ${key.bucket} and region = ${key.region}`;
      await tx`delete from frozen_standings where ${where}`;
      // Awards are readable for as long as their list: they go with it.
      await tx`delete from awards where ${where}`;
      dropped += (await tx`delete from frozen_buckets where ${where}`).count;
    }
    return dropped;
  });
}
