import { type FrozenStanding, frozenResultKey } from '../db/frozen-reads.js';
import type { Storage } from '../db/storage.js';
import type { RankStyle } from '../model/board.js';
import type { BoardBucket, Member } from '../ranking/index.js';
import { bucketKey } from '../ranking/keys.js';
import { playerOfPosition } from '../ranking/members.js';
import type { ReadBucket } from '../services/buckets.js';
import type { CursorCodec } from '../services/cursor.js';
import { frozenKeyOf } from '../services/frozen-directory.js';
import { badInput } from '../errors.js';
import type { FrozenPlace } from './views.js';

/**
 * The reads of a closed bucket, served from its frozen final standings (db/frozen-reads.ts)
 * rather than the index: the same places the index showed at the close, each rank the frozen one,
 * each size the frozen size, each time and metadata the frozen row's. An erased player's row is
 * left out of every list but keeps its rank, so the others keep theirs, and it still counts in
 * the size and in the COMPETITION and DENSE ranks. A flag set after the close leaves the frozen
 * standings as they were (as a closed season's).
 *
 * The COMPETITION and DENSE ranks are looked up per result (each result's first frozen rank; its
 * place among the distinct results), never worked out from a run as the index's reads do: a run
 * of frozen standings may skip erased rows, so a place whose result differs from the one before it
 * need not be the first of its result. A result is the score with every tie-break column: two
 * standings share a rank only when equal on all of them.
 */

/** What the frozen reads take. */
export interface FrozenParts {
  storage: Pick<Storage, 'frozenStandings'>;
  cursors: CursorCodec;
}

/** A closed bucket as its frozen reads take it. */
export type ClosedBucket = ReadBucket & { frozen: NonNullable<ReadBucket['frozen']> };

/** A frozen row as a place, holding what its standing serves of it. */
const placeOf = (row: FrozenStanding): FrozenPlace => ({
  playerId: row.playerId,
  rank: row.rank,
  score: row.score,
  reachedAt: row.reachedAt,
  tieBreakValues: row.tieBreakValues,
  recorded: { reachedAt: row.reachedAt, metadata: row.metadata },
});

/** The places with the ranks of `style`: one query for every distinct result among them (none for ORDINAL). See firstRanksOfFrozenScores and denseRanksOfFrozenScores for the costs. */
export async function styledFrozen<P extends FrozenPlace | null>(
  parts: Pick<FrozenParts, 'storage'>,
  at: ClosedBucket,
  places: readonly P[],
  style: RankStyle,
): Promise<P[]> {
  if (style === 'ORDINAL') return [...places];
  const results = places.flatMap((place) => (place ? [{ score: place.score, tieBreakValues: place.tieBreakValues }] : []));
  if (results.length === 0) return [...places];
  const of = { ...frozenKeyOf(at), results };
  const ranks =
    style === 'COMPETITION'
      ? await parts.storage.frozenStandings.firstRanksOfScores(of)
      : await parts.storage.frozenStandings.denseRanksOfScores({ ...of, order: at.board.order });
  return places.map((place) => (place ? { ...place, rank: ranks.get(frozenResultKey(place)) ?? place.rank } : place));
}

/** The first `limit` standings (erased players' rows skipped). O(log N + limit). */
export async function frozenTop(parts: Pick<FrozenParts, 'storage'>, at: ClosedBucket, limit: number, metadata: boolean): Promise<FrozenPlace[]> {
  const rows = await parts.storage.frozenStandings.page({ ...frozenKeyOf(at), afterRank: 0, limit, metadata });
  return rows.map(placeOf);
}

/** Each player's place, in the order asked (null: not ranked there, or erased). One index probe each: O(k log N). */
export async function frozenPlaces(
  parts: Pick<FrozenParts, 'storage'>,
  at: ClosedBucket,
  playerIds: readonly string[],
  metadata: boolean,
): Promise<(FrozenPlace | null)[]> {
  const rows = await parts.storage.frozenStandings.find({ ...frozenKeyOf(at), playerIds, metadata });
  return rows.map((row) => row && placeOf(row));
}

/**
 * The player's place and up to `radius` places either side; with `fill`, 2 × radius + 1 places
 * (every one there when fewer), the window shifted inward at the edges; empty when the player was
 * not ranked there. Erased players' rows are skipped, not counted in the window. O(log N + radius).
 */
export async function frozenAround(
  parts: Pick<FrozenParts, 'storage'>,
  at: ClosedBucket,
  playerId: string,
  radius: number,
  metadata: boolean,
  fill = false,
): Promise<FrozenPlace[]> {
  const rows = await parts.storage.frozenStandings.around({ ...frozenKeyOf(at), playerId, radius, fill, metadata });
  return rows.map(placeOf);
}

/**
 * The scope a closed bucket's page cursors are signed with: its key as the index names it, marked
 * frozen, so a cursor of the live bucket (whose position is a packed score, not a rank) is never
 * taken for one of its frozen standings.
 */
export const frozenScope = (at: BoardBucket): string => `frozen:${bucketKey(at)}`;

/**
 * The frozen rank a page continues after: the rank a cursor of the frozen standings names, or,
 * for a cursor the live bucket issued before it closed (signed with its live scope), the frozen
 * rank of the cursor's player (one index probe): the standings are what the live bucket held at
 * its end, so the page goes on where the live one would have. A live cursor whose player is not
 * among the frozen standings (erased, or flagged before the close) names no place there:
 * BAD_USER_INPUT. Anything else is refused as any foreign cursor is (cursor.ts).
 */
export async function frozenAfter(parts: FrozenParts, at: ClosedBucket, after: string): Promise<Member> {
  let live: Member;
  try {
    return parts.cursors.decode(frozenScope(at), after);
  } catch (frozenError) {
    try {
      live = parts.cursors.decode(bucketKey(at), after);
    } catch {
      throw frozenError;
    }
  }
  const [own] = await parts.storage.frozenStandings.find({ ...frozenKeyOf(at), playerIds: [playerOfPosition(at, live.playerId)], metadata: false });
  if (!own) {
    throw badInput(
      `The cursor was issued before bucket ${at.bucket.period} ${at.bucket.label} closed, and its player is not among its final standings; start again without the cursor.`,
    );
  }
  return { packed: own.rank, playerId: own.playerId };
}

/** A page of frozen standings, with whether standings follow its last and come before its first (or its position, when it is empty). */
export interface FrozenPage {
  places: FrozenPlace[];
  hasMore: boolean;
  hasBefore: boolean;
}

/**
 * Whether any standing (erased players' rows aside) has a rank at most `rank`: the bucket's first
 * standing, one probe of the primary key. O(log N + erased rows at the top).
 */
async function anyUpTo(parts: Pick<FrozenParts, 'storage'>, at: ClosedBucket, rank: number): Promise<boolean> {
  if (rank < 1) return false;
  const [first] = await parts.storage.frozenStandings.page({ ...frozenKeyOf(at), afterRank: 0, limit: 1, metadata: false });
  return first !== undefined && first.rank <= rank;
}

/**
 * Up to `first` standings after rank `afterRank` (0: from the top; a fromRank page starts after
 * its rank less one), whether more follow, and whether any comes before. O(log N + first).
 */
export async function frozenPage(
  parts: Pick<FrozenParts, 'storage'>,
  at: ClosedBucket,
  afterRank: number,
  first: number,
  metadata: boolean,
): Promise<FrozenPage> {
  const [rows, hasBefore] = await Promise.all([
    parts.storage.frozenStandings.page({ ...frozenKeyOf(at), afterRank, limit: first + 1, metadata }),
    anyUpTo(parts, at, afterRank),
  ]);
  return { places: rows.slice(0, first).map(placeOf), hasMore: rows.length > first, hasBefore };
}

/**
 * Up to `last` standings with a rank below `beforeRank`, in rank order (the mirror of
 * {@link frozenPage}), whether more come before them, and whether any follows. The ranks are the
 * keyset: the rows just below `beforeRank` are read forward as a range of the primary key, and a
 * range that held erased players' rows is widened back until it holds `last + 1` standings or
 * reaches the top. O(log N + last + erased rows skipped).
 */
export async function frozenPageBefore(
  parts: Pick<FrozenParts, 'storage'>,
  at: ClosedBucket,
  beforeRank: number,
  last: number,
  metadata: boolean,
): Promise<FrozenPage> {
  const key = frozenKeyOf(at);
  const readBack = async () => {
    const rows: FrozenPlace[] = [];
    // Ranks below `end` (exclusive) are still to read; each range reads `span` of them.
    let end = beforeRank;
    for (let span = last + 1; end > 1 && rows.length <= last; span *= 2) {
      const afterRank = Math.max(0, end - 1 - span);
      const read = await parts.storage.frozenStandings.page({ ...key, afterRank, limit: end - 1 - afterRank, metadata });
      // Erased players' rows are skipped, not counted: past them the read runs on beyond `end`.
      rows.unshift(...read.filter((row) => row.rank < end).map(placeOf));
      end = afterRank + 1;
    }
    return rows;
  };
  const [rows, following] = await Promise.all([
    readBack(),
    parts.storage.frozenStandings.page({ ...key, afterRank: beforeRank - 1, limit: 1, metadata: false }),
  ]);
  return { places: rows.slice(-last), hasMore: following.length > 0, hasBefore: rows.length > last };
}
