import type { Logger } from 'pino';
import type { Player } from '../db/players.js';
import type { Storage } from '../db/storage.js';
import type { RankStyle } from '../model/board.js';
import { MAX_FRIENDS } from '../model/contract.js';
import { IndexRecoveringError } from '../ranking/generation.js';
import type { AroundAsk, RankingIndex } from '../ranking/index.js';
import { bucketKey } from '../ranking/keys.js';
import type { TopCache } from '../ranking/top-cache.js';
import { type BucketArgs, type ReadBucket, type ReadBucketDeps, requireBoard, resolveReadBucket } from '../services/buckets.js';
import { type CursorCodec, pageInfoOf } from '../services/cursor.js';
import { SEASON_LABEL, seasonBucket } from '../services/season-directory.js';
import { notFound } from '../errors.js';
import type { PlaceLoader } from './place-loader.js';
import { type RecordedRead, exactReachedAt, lookUpRecorded } from './recorded-scores.js';
import { styleOf, styledPlaces, styledRun, styledTop } from './rank-styles.js';
import { type Standing, type StandingConnection, type TopBoard, bucketOfAnswer, toStanding } from './views.js';
import {
  type ClosedBucket,
  type FrozenPage,
  frozenAfter,
  frozenAround,
  frozenPage,
  frozenPageBefore,
  frozenPlaces,
  frozenScope,
  frozenTop,
  styledFrozen,
} from './frozen.js';

/**
 * The read side's plain path: every read as it is, one step after another. A read resolves the
 * bucket its arguments name (resolveReadBucket: NOT_FOUND, BAD_USER_INPUT, and whether it is
 * closed), reads the index (or the top cache; for a closed bucket its frozen standings in
 * PostgreSQL, frozen.ts), serves the ranks in the style asked for
 * (rank-styles.ts), and makes each place a Standing (views.ts). Then `complete` gives the standings
 * what the caller's selection wants of them: their players' names, and for a long list the recorded
 * times and metadata in one go.
 *
 * What makes it fast is a layer over this file, not in it (read-side.ts): the place reads of every
 * request of one pass of the event loop share index calls (place-loader.ts), a request's names are
 * one load (name-loader.ts), recorded fields are looked up once per place for all readers
 * (recorded-scores.ts). Here a place read is one index call (plainPlaces) and names one look-up.
 */

/** What the caller's selection asks of the standings a read answers. */
export interface Want {
  /** Standing.player. */
  player: boolean;
  /** Standing.achievedAt. */
  achievedAt: boolean;
  /** Standing.metadata. */
  metadata: boolean;
  /**
   * Another root field of the same operation names players too (a board screen: the top, my
   * standing and the players around me): the request's names are then loaded together.
   */
  withOthers: boolean;
}

/**
 * Where a keyset page starts: `first` rows after `after` (from the top when null), or from the
 * 1-based position `fromRank`; or, going backwards, the `last` rows just before `before` (from the
 * end when null). The schema refuses the mixes (after or before with fromRank; after with before or last).
 */
export interface PageArgs {
  first: number;
  after?: string | null | undefined;
  before?: string | null | undefined;
  last?: number | null | undefined;
  fromRank?: number | null | undefined;
}

/** Around a player: `radius` rows either side; with `fill`, 2 × radius + 1 rows at the edges too, the window shifted inward. */
export type AroundArgs = AroundAsk;

/** A read that may ask for a rank style (null: its board's). */
export interface Styled {
  rankStyle?: RankStyle | null | undefined;
}

/*
 * Each read's `metadata`: whether a closed bucket's read brings its standings' metadata
 * (Want.metadata): its frozen rows answer it in the same query, read only when asked for. An open
 * bucket's is looked up when resolved (recorded-scores.ts), so it does not use it.
 */

/** What the plain reads take. */
export interface ReadParts {
  /** What resolving a read's bucket takes, closed buckets told apart (resolveReadBucket). */
  buckets: ReadBucketDeps;
  index: RankingIndex;
  topCache: TopCache;
  /** One player's place, or a run around them: one index call each here (plainPlaces), or batched (place-loader.ts). */
  places: PlaceLoader;
  storage: Pick<Storage, 'players' | 'seasons' | 'boardScores' | 'frozenStandings'>;
  cursors: CursorCodec;
  log: Logger;
}

/** Where a read's names come from: the profile cache itself here, a request's name loader in read-side.ts. */
export interface NameSource {
  load(ids: readonly string[]): Promise<Player[]>;
}

/** Single players' places read one index call each, as the place loader answers them batched. */
export function plainPlaces(index: RankingIndex): PlaceLoader {
  return {
    standing: (at, playerId) => index.standings(at, [playerId]),
    around: async (at, playerId, radius, fill = false) => (await index.arounds(at, [{ playerId, radius, fill }]))[0]!,
    named: false,
  };
}

/**
 * The first `limit` standings of a bucket, through the shared top cache: O(limit) on a hit,
 * O(log N + limit) on a miss. While the bucket's index cannot be trusted (Redis came back, or is
 * being rebuilt after it lost the index) the last view this process read is served, with the asOf
 * of when it was read; UNAVAILABLE when it has none.
 */
export async function topOf(parts: ReadParts, args: BucketArgs & Styled & { limit: number }, metadata = true): Promise<TopBoard> {
  const at = await resolveReadBucket(parts.buckets, args);
  if (isClosed(at)) return closedTop(parts, at, args, metadata);
  const view = await parts.topCache.top(at, args.limit).catch((error: unknown) => {
    const last = error instanceof IndexRecoveringError ? parts.topCache.peek(at, args.limit) : undefined;
    if (!last) throw error;
    return last;
  });
  return {
    cacheRead: {
      bucket: bucketKey(at),
      read: view.read,
      board: at.board,
      stillNamed: at.bucket.period === 'ALL_TIME' ? undefined : () => namesBucket(parts, args, at),
    },
    boardId: at.board.id,
    ...bucketOfAnswer(at),
    entries: styledTop(view.places, styleOf(at.board, args.rankStyle)).map((place) => toStanding(at, place, view.size)),
    size: view.size,
    asOf: view.asOf,
  };
}

/**
 * Whether `args` name the bucket `at` now, as a read resolves them, open as it was: false for
 * arguments a read would now refuse, and for a bucket that has closed since (its reads are now its
 * frozen standings', so an answer kept from its live index is not handed out again).
 */
async function namesBucket(parts: ReadParts, args: BucketArgs, at: ReadBucket): Promise<boolean> {
  try {
    const now = await resolveReadBucket(parts.buckets, args);
    return now.board === at.board && now.region === at.region && now.bucket.label === at.bucket.label && (now.frozen === null) === (at.frozen === null);
  } catch {
    return false;
  }
}

/**
 * A closed bucket's top: its first `limit` frozen standings. Not through the top cache, and not
 * shared by the response cache (no cacheRead): the frozen standings are one query of the primary
 * key. O(log N + limit).
 */
async function closedTop(parts: ReadParts, at: ClosedBucket, args: Styled & { limit: number }, metadata: boolean): Promise<TopBoard> {
  const style = styleOf(at.board, args.rankStyle);
  const places = await styledFrozen(parts, at, await frozenTop(parts, at, args.limit, metadata), style);
  return {
    boardId: at.board.id,
    ...bucketOfAnswer(at),
    entries: places.map((place) => toStanding(at, place, at.frozen.size)),
    size: at.frozen.size,
    asOf: parts.buckets.now(),
  };
}

/** Whether a read's bucket is closed: its reads are its frozen standings'. */
const isClosed = (at: ReadBucket): at is ClosedBucket => at.frozen !== null;

/** One player's standing, or null when they have no score there. O(log N); in a closed bucket one index probe. */
export async function standingOf(parts: ReadParts, args: BucketArgs & Styled & { playerId: string }, metadata = true): Promise<Standing | null> {
  const at = await resolveReadBucket(parts.buckets, args);
  if (isClosed(at)) {
    const style = styleOf(at.board, args.rankStyle);
    const [place] = await styledFrozen(parts, at, await frozenPlaces(parts, at, [args.playerId], metadata), style);
    return place ? toStanding(at, place, at.frozen.size) : null;
  }
  const view = await parts.places.standing(at, args.playerId);
  const [place] = await styledPlaces(parts, at, view.places, styleOf(at.board, args.rankStyle));
  return place ? toStanding(at, place, view.size) : null;
}

/**
 * The player and up to `radius` players either side, cut at the edges; with `fill`, 2 × radius + 1
 * players (the whole bucket when smaller), the window shifted inward at the edges
 * (model/around-window.ts). O(log N + radius).
 */
export async function aroundOf(parts: ReadParts, args: BucketArgs & Styled & AroundArgs, metadata = true): Promise<Standing[]> {
  const at = await resolveReadBucket(parts.buckets, args);
  const fill = args.fill === true;
  if (isClosed(at)) {
    const style = styleOf(at.board, args.rankStyle);
    const places = await styledFrozen(parts, at, await frozenAround(parts, at, args.playerId, args.radius, metadata, fill), style);
    return places.map((place) => toStanding(at, place, at.frozen.size));
  }
  const view = await parts.places.around(at, args.playerId, args.radius, fill);
  return (await styledRun(parts, at, view.places, styleOf(at.board, args.rankStyle))).map((place) => toStanding(at, place, view.size));
}

/**
 * The player and their friends who have a score there, in rank order, each with their rank on the
 * whole board: one query for the friend list, one script call for every place. O(F log N).
 */
export async function friendsOf(parts: ReadParts, args: BucketArgs & Styled & { playerId: string }, metadata = true): Promise<Standing[]> {
  const at = await resolveReadBucket(parts.buckets, args);
  const friends = await parts.storage.players.friendIds(args.playerId);
  const ids = [args.playerId, ...friends.filter((id) => id !== args.playerId).slice(0, MAX_FRIENDS)];
  if (isClosed(at)) {
    const style = styleOf(at.board, args.rankStyle);
    const ranked = (await frozenPlaces(parts, at, ids, metadata)).filter((place) => place !== null).sort((a, b) => a.rank - b.rank);
    return (await styledFrozen(parts, at, ranked, style)).map((place) => toStanding(at, place, at.frozen.size));
  }
  const view = await parts.index.standings(at, ids);
  const ranked = view.places.filter((place) => place !== null).sort((a, b) => a.rank - b.rank);
  return (await styledPlaces(parts, at, ranked, styleOf(at.board, args.rankStyle))).map((place) => toStanding(at, place, view.size));
}

/**
 * One keyset page of a bucket's standings: `first` rows strictly after the `after` cursor (from the
 * top without it), `first` rows from the position `fromRank`, or the `last` rows strictly before
 * the `before` cursor (the bucket's last rows without it), always in rank order. A cursor names a
 * position by key, never by offset, so a row whose score does not change is never skipped nor
 * repeated walking either way; the cursors of any page continue both ways. The cursor is bound to
 * the bucket's key, so one issued for another board, bucket or region is refused (BAD_USER_INPUT),
 * as is a malformed or edited one. PageInfo says whether rows come before the first edge and after
 * the last (before and after the position, for an empty page). O(log N + page); fromRank on a
 * sharded bucket, see RankingIndex.pageFrom.
 */
export async function pageOf(parts: ReadParts, args: BucketArgs & Styled & PageArgs, metadata = true): Promise<StandingConnection> {
  const at = await resolveReadBucket(parts.buckets, args);
  if (isClosed(at)) return closedPage(parts, at, args, metadata);
  const { cursors, index } = parts;
  const scope = bucketKey(at);
  const position = (cursor: string | null | undefined) => (cursor === null || cursor === undefined ? null : cursors.decode(scope, cursor));
  const view = given(args.fromRank)
    ? await index.pageFrom(at, args.fromRank - 1, args.first)
    : given(args.last)
      ? await index.pageBefore(at, position(args.before), args.last)
      : await index.page(at, position(args.after), args.first);
  const places = await styledRun(parts, at, view.places, styleOf(at.board, args.rankStyle));
  const edges = places.map((place) => ({
    // The position's member (on a board whose time is in the member, the time then the player id: ranking/members.ts).
    cursor: cursors.encode(scope, { packed: place.packed, playerId: place.member }),
    node: toStanding(at, place, view.size),
  }));
  return connectionOf(edges, view);
}

/** Whether an optional argument was given. */
const given = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;

/** A page's connection: its edges, and its PageInfo from whether rows come before its first edge and after its last. */
function connectionOf(edges: StandingConnection['edges'], page: { hasBefore: boolean; hasMore: boolean }): StandingConnection {
  return { edges, pageInfo: pageInfoOf(edges, page.hasMore, page.hasBefore) };
}

/**
 * One keyset page of a closed bucket's (or a closed season's) frozen standings, as the page
 * arguments place it: the frozen rank is the keyset (the primary key), and `rankOf` turns a cursor
 * into the rank it names. `fromRank` is a frozen rank, which is the position in the board's
 * order. O(log N + page).
 */
async function frozenWindow(
  parts: ReadParts,
  at: ClosedBucket,
  args: PageArgs,
  rankOf: (cursor: string) => Promise<number>,
  metadata: boolean,
): Promise<FrozenPage> {
  if (given(args.fromRank)) return frozenPage(parts, at, args.fromRank - 1, args.first, metadata);
  if (given(args.last)) {
    // Without a cursor, the last page: the rows before the rank after the last.
    const beforeRank = given(args.before) ? await rankOf(args.before) : at.frozen.size + 1;
    return frozenPageBefore(parts, at, beforeRank, args.last, metadata);
  }
  return frozenPage(parts, at, given(args.after) ? await rankOf(args.after) : 0, args.first, metadata);
}

/** A page of frozen standings as a connection, its cursors signed with `scope`, its ranks in `style`. */
async function frozenConnection(parts: ReadParts, at: ClosedBucket, page: FrozenPage, scope: string, style: RankStyle): Promise<StandingConnection> {
  const styled = await styledFrozen(parts, at, page.places, style);
  const edges = page.places.map((place, i) => ({
    cursor: parts.cursors.encode(scope, { packed: place.rank, playerId: place.playerId }),
    node: toStanding(at, styled[i]!, at.frozen.size),
  }));
  return connectionOf(edges, page);
}

/**
 * One keyset page of a closed bucket's frozen standings, as pageOf places it: the frozen rank is
 * the keyset (the primary key), signed with the closed bucket's scope (frozen.ts frozenScope); a
 * cursor the live bucket issued before the close names its player's frozen rank (frozenAfter),
 * and the page goes on from there either way. O(log N + page).
 */
async function closedPage(parts: ReadParts, at: ClosedBucket, args: Styled & PageArgs, metadata: boolean): Promise<StandingConnection> {
  const style = styleOf(at.board, args.rankStyle);
  const page = await frozenWindow(parts, at, args, async (cursor) => (await frozenAfter(parts, at, cursor)).packed, metadata);
  return frozenConnection(parts, at, page, frozenScope(at), style);
}

/**
 * One keyset page of a closed season's frozen final standings (its global list in PostgreSQL's
 * frozen_standings), placed as pageOf places one. NOT_FOUND for an unknown season, or one still
 * open (its standings are a SEASON read). The metadata column is read only when `withMetadata`.
 * Cursors are bound to the board and season and signed, so a forged or foreign one is refused.
 * O(log N + page).
 */
export async function seasonResultsOf(
  parts: ReadParts,
  args: Styled & PageArgs & { board: string; season: string; withMetadata: boolean },
): Promise<StandingConnection> {
  const { cursors, storage } = parts;
  const board = await requireBoard(parts.buckets, args.board);
  const scope = `season:${board.id}:${args.season}`;
  // Cursors are checked before the season is looked up, as they always were: a foreign one is refused whatever the season.
  for (const cursor of [args.after, args.before]) if (given(cursor)) cursors.decode(scope, cursor);
  // A season id of another form than the service gives (s1, s2, ...) names no season: not asked about.
  const season = SEASON_LABEL.test(args.season) ? await storage.seasons.find(board.id, args.season) : null;
  if (!season) throw notFound(`Board "${board.id}" has no season "${args.season}".`);
  if (!season.closedAt) throw notFound(`Season "${season.id}" of board "${board.id}" is still open; read it with period SEASON.`);
  const style = styleOf(board, args.rankStyle);
  const at = { board, bucket: seasonBucket(season), region: null };
  const marker = await parts.buckets.frozen.find(at);
  if (!marker) throw notFound(`Season "${season.id}" of board "${board.id}" has no final standings.`);
  const closed: ClosedBucket = { ...at, frozen: marker };
  const page = await frozenWindow(parts, closed, args, (cursor) => Promise.resolve(cursors.decode(scope, cursor).packed), args.withMetadata);
  return frozenConnection(parts, closed, page, scope, style);
}

/** How many players are ranked in a bucket (a closed one: its frozen size). O(1). */
export async function sizeOf(parts: ReadParts, args: BucketArgs): Promise<number> {
  const at = await resolveReadBucket(parts.buckets, args);
  return at.frozen ? at.frozen.size : parts.index.size(at);
}

/**
 * Gives each standing its player's profile (`Standing.player`, which the schema serves as held)
 * when `asked`: one load for those whose read did not bring it (place-loader.ts, NamedPlace).
 * Throws what the load throws. O(n).
 */
export async function withPlayers(names: NameSource, standings: readonly Standing[], asked: boolean): Promise<void> {
  if (!asked) return;
  const unnamed = standings.filter((standing) => standing.player === undefined);
  if (unnamed.length === 0) return;
  const players = await names.load(unnamed.map((standing) => standing.playerId));
  players.forEach((player, i) => (unnamed[i]!.player = player));
}

/** The shortest list `complete` looks its recorded fields up ahead for: longer than a top ten, or a standing's neighbours at the default radius. */
const PREFETCH_FROM = 20;

/**
 * Readies a list of standings for what `want` asks of them: the players' profiles (withPlayers),
 * and, for a long list (a page, a friend list; at least PREFETCH_FROM of them), the recorded board
 * scores, in one go before execution reaches the rows (held in each standing's source from then
 * on). The rows' fields then answer at once, rather than each through a promise of its own: a
 * page of a thousand spends far less CPU, and holds the event loop for less at a time. A short
 * list (what a game reads) gains nothing from a look-up ahead: its recorded fields are looked up
 * when resolved (recorded-scores.ts, achievedAtOf and metadataOf).
 */
export async function complete(
  names: NameSource,
  recorded: { storage: Pick<Storage, 'boardScores'>; log: Logger },
  standings: Standing[],
  want: Want,
): Promise<void> {
  const long = standings.length >= PREFETCH_FROM;
  // A time the index holds exactly needs no look-up unless the metadata is asked for too.
  const unread =
    long && (want.achievedAt || want.metadata)
      ? standings.filter(({ source }) => 'place' in source && (want.metadata || !exactReachedAt(source.at, source.place)))
      : [];
  const [found] = await Promise.all([
    unread.length === 0
      ? []
      : lookUpRecorded(
          recorded,
          unread.map((standing) => standing.source as Omit<RecordedRead, 'metadata'>),
          want.metadata,
        ),
    withPlayers(names, standings, want.player),
  ]);
  unread.forEach((standing, i) => (standing.source = { recorded: found[i]! }));
}
