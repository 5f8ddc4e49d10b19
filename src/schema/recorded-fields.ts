import type { EntryMetadata } from '../model/board.js';
import { type RecordedRead, exactReachedAt, lookUpRecorded } from '../operations/recorded-scores.js';
import type { Standing } from '../operations/standings.js';
import type { Place } from '../ranking/index.js';
import type { Context } from './context.js';
import type { GraphQLResolveInfo } from 'graphql';
import { rootFieldsNamed } from './selects.js';

/**
 * The fields a Standing resolves from the request (operations/recorded-scores.ts looks the
 * recorded board scores up): each standing's recorded time and metadata through the request's
 * loader, and a long list's looked up ahead in one go.
 */

/** The shortest list prefetchStandings looks up ahead: longer than a top ten, or a standing's neighbours at the default radius. */
const PREFETCH_FROM = 20;

/**
 * What a read's selection may ask of the standings it serves. Each must be true whenever the
 * selection may ask for it (schema/selects.ts answers "might be asked", directives not weighed):
 * a standing prefetched without metadata serves none.
 */
export interface StandingNeeds {
  /** achievedAt or metadata: the recorded board score. */
  recorded: boolean;
  metadata: boolean;
  player: boolean;
}

/** The root fields whose answers name players (through their standings). */
const NAMING_READS = new Set(['standing', 'around', 'top', 'friends', 'standings', 'seasonResults']);

/**
 * Whether the operation has another root field naming players beside the one being resolved (a
 * client's board screen: the top, my standing and the players around me). O(root selections).
 */
export const namesWithOthers = (info: GraphQLResolveInfo): boolean => rootFieldsNamed(info, NAMING_READS) > 1;

/**
 * `read`, holding the request's names back until it is in when another root field names players
 * (Context.namesAfter): the request's names are then one load, whichever read comes back first.
 */
export const namesTogether = <T>(ctx: Context, info: GraphQLResolveInfo, read: Promise<T>): Promise<T> => (namesWithOthers(info) ? ctx.namesAfter(read) : read);

/**
 * Gives each standing its player's profile (`Standing.player`, which the schema serves as held)
 * when the selection may ask for it (`asked`): one load of the request's loader for those whose
 * read did not bring it (operations/place-reads.ts, NamedPlace), held back like every other name
 * of the request (Context.namesAfter). Every read that serves standings calls it, or fills them
 * itself (topChanged's shared views, a player's own board scores). Throws what the load throws
 * (PostgreSQL unavailable is not thrown: see context.ts). O(n).
 */
export async function withPlayers(ctx: Context, standings: readonly Standing[], asked: boolean): Promise<void> {
  if (!asked) return;
  const unnamed = standings.filter((standing) => standing.player === undefined);
  if (unnamed.length === 0) return;
  const players = await ctx.loaders.players.load(unnamed.map((standing) => standing.playerId));
  players.forEach((player, i) => (unnamed[i]!.player = player));
}

/**
 * Readies a list of standings of one request for its selection (`needsOf` says what it may ask
 * of them): the players' profiles (withPlayers), and, for a long list (a page, a friend list; at
 * least PREFETCH_FROM of them), the recorded board scores, in one go before execution reaches the
 * rows (held in each standing's source from then on). The rows' fields then answer at once,
 * rather than each through a promise of its own: a page of a thousand spends about half the CPU,
 * and holds the event loop for less at a time.
 */
export async function prefetchStandings(ctx: Context, standings: Standing[], needsOf: () => StandingNeeds): Promise<void> {
  const needs = needsOf();
  // A short list (what a game reads: a top ten, a standing's neighbours) gains nothing from a
  // look-up ahead, and its reads are the hot path.
  const long = standings.length >= PREFETCH_FROM;
  // A time the index holds exactly needs no look-up unless the metadata is asked for too.
  const unread =
    long && needs.recorded ? standings.filter(({ source }) => 'place' in source && (needs.metadata || !exactReachedAt(source.at, source.place))) : [];
  const [recorded] = await Promise.all([
    unread.length === 0
      ? []
      : lookUpRecorded(
          ctx.services,
          unread.map((standing) => standing.source as Omit<RecordedRead, 'metadata'>),
          needs.metadata,
        ),
    withPlayers(ctx, standings, needs.player),
  ]);
  unread.forEach((standing, i) => (standing.source = { recorded: recorded[i]! }));
}

/** The recorded times and (parsed) metadata of places read from the index, remembered per place object (see above). */
const rememberedTimes = new WeakMap<Place, Promise<Date>>();
const rememberedMetadata = new WeakMap<Place, Promise<unknown>>();

/** Looks `place` up once for all of its readers: the first reader's request loads it, and a failure is forgotten. */
function remembered<T>(memory: WeakMap<Place, Promise<T>>, place: Place, load: () => Promise<T>): Promise<T> {
  let value = memory.get(place);
  if (!value) {
    value = load();
    memory.set(place, value);
    value.catch(() => memory.delete(place));
  }
  return value;
}

/** A standing's achievedAt: as held, as the index holds it when to the millisecond, remembered, or looked up (Services.recordedScores). */
export function achievedAtOf(ctx: Context, standing: Standing): Date | Promise<Date> {
  const { source } = standing;
  if ('recorded' in source) return source.recorded.reachedAt;
  const exact = exactReachedAt(source.at, source.place);
  if (exact) return exact;
  return remembered(rememberedTimes, source.place, async () => (await ctx.services.recordedScores.load({ ...source, metadata: false })).reachedAt);
}

/** A standing's metadata, parsed: as held, remembered, or looked up (Services.recordedScores); null when none was sent. */
export function metadataOf(ctx: Context, standing: Standing): unknown {
  const { source } = standing;
  if ('recorded' in source) return parseMetadata(source.recorded.metadata);
  return remembered(rememberedMetadata, source.place, async () =>
    parseMetadata((await ctx.services.recordedScores.load({ ...source, metadata: true })).metadata),
  );
}

const parseMetadata = (text: EntryMetadata | null): unknown => (text === null ? null : JSON.parse(text));
