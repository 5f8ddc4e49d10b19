import type { AroundAsk, BoardBucket, BucketView, Place, RankingIndex } from '../ranking/index.js';
import { aroundSides } from '../model/around-window.js';
import { bucketKey } from '../ranking/keys.js';
import type { Profile } from '../profiles/store.js';
import type { ProfileCache } from '../services/profile-cache.js';
import { createBatchLoader } from '../services/batch-loader.js';

/**
 * The process's reads of single players' places (the read side's place loader), gathered into as
 * few index calls as they allow: the reads every request makes in one pass of the event loop (see
 * createBatchLoader) go together, whatever document each request wrote them in, per bucket one around call for the players asked about with a
 * radius and one standings call for the rest; a pass of many requests is several such calls, each
 * leaving as it fills (PLACE_LOADS_SENT_AT).
 *
 * A game client opening a board asks, in one document, for the player's standing and for the
 * players around them in the same bucket: the around script reads the player's own place beside
 * its neighbours, in the same atomic step, so the standing is answered from that run rather than
 * by a call of its own. A request's root fields start together and reach their reads in the same
 * pass. Every answer is what the index call on its own would give: a place in an around run is
 * read under the same snapshot and with the same size. On one Redis node each call also reads its
 * players' profiles (PlaceNaming), so the names need no call of their own.
 */
export interface PlaceLoader {
  /** The player's place (null when not ranked) and the bucket's size, as index.standings(at, [playerId]). */
  standing(at: BoardBucket, playerId: string): Promise<BucketView<NamedPlace | null>>;
  /** The player and up to `radius` places either side (with `fill`, shifted inward at the edges), as index.around. */
  around(at: BoardBucket, playerId: string, radius: number, fill?: boolean): Promise<BucketView<NamedPlace>>;
  /** Whether a one-shard board's places come with their players' profiles (NamedPlace; on one Redis node), where Redis holds them. */
  named: boolean;
}

/** A place, with its player's profile when the read that found it read that too (see PlaceNaming). */
export interface NamedPlace extends Place {
  /** Read in the same step as the place; undefined when it was not read, or Redis held none to take. */
  profile?: Profile | undefined;
}

interface Ask {
  at: BoardBucket;
  playerId: string;
  /** null: the player's standing alone. */
  radius: number | null;
  /** With a radius: whether the window fills at the edges (shifted inward). */
  fill: boolean;
}

/**
 * The places an around read of `radius` (with `fill` or not) answers, cut from a run read for the
 * same player with a radius at least as large, filled when any of its reads was: that run holds
 * every such window (a filled window of radius R holds the plain and the filled ones of every
 * radius up to R). The window is placed by the player's rank and the run's size, as the index
 * places it (model/around-window.ts). O(radius).
 */
function within(run: BucketView, playerId: string, radius: number, fill: boolean): BucketView {
  const own = run.places.findIndex((place) => place.playerId === playerId);
  if (own < 0) return { size: run.size, places: [] };
  const { before, after } = aroundSides(run.places[own]!.rank - 1, run.size, radius, fill);
  return { size: run.size, places: run.places.slice(Math.max(0, own - before), own + after + 1) };
}

/** An index call's answer, or its error (DataLoader rejects the loads answered an Error, and only those). */
const settled = <T>(call: Promise<T>): Promise<T | Error> => call.catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));

/** One bucket's part of a batch: its players' run each (those asked with a radius: the largest, filled when any read is), and the players asked without. */
interface BucketAsks {
  at: BoardBucket;
  radii: Map<string, { radius: number; fill: boolean }>;
  alone: Set<string>;
}

/**
 * Answers a pass's batch: per bucket, one around call for its players asked about with a radius
 * (each with their largest, filled when any of their reads asks fill), which answers their
 * standings too, and one standings call for the players asked about without one. A call that
 * fails fails only the reads it answers. O(calls).
 */
async function readBatch(index: RankingIndex, naming: PlaceNaming | null, asks: readonly Ask[]): Promise<(BucketView<Place | null> | BucketView | Error)[]> {
  const buckets = new Map<string, BucketAsks>();
  for (const { at, playerId, radius, fill } of asks) {
    const key = bucketKey(at);
    const bucket = buckets.get(key) ?? { at, radii: new Map<string, { radius: number; fill: boolean }>(), alone: new Set<string>() };
    buckets.set(key, bucket);
    if (radius === null) continue;
    const run = bucket.radii.get(playerId);
    bucket.radii.set(playerId, { radius: Math.max(radius, run?.radius ?? 0), fill: fill || run?.fill === true });
  }
  for (const { at, playerId, radius } of asks) {
    const bucket = buckets.get(bucketKey(at))!;
    if (radius === null && !bucket.radii.has(playerId)) bucket.alone.add(playerId);
  }
  // Every call sent at once: the client pipelines them in one write.
  const read = new Map(
    [...buckets].map(([key, { at, radii, alone }]) => {
      const runs = [...radii].map(([playerId, { radius, fill }]) => ({ playerId, radius, fill }));
      const ids = [...alone];
      const around = runs.length > 0 ? aroundsOf(index, naming, at, runs).then((views) => new Map(runs.map(({ playerId }, i) => [playerId, views[i]!]))) : null;
      const standings =
        ids.length > 0
          ? standingsOf(index, naming, at, ids).then(({ size, places }) => ({ size, places: new Map(ids.map((id, i) => [id, places[i] ?? null])) }))
          : null;
      return [key, { radii, runs: around && settled(around), standings: standings && settled(standings) }] as const;
    }),
  );
  return Promise.all(
    asks.map(async ({ at, playerId, radius, fill }) => {
      const { radii, runs, standings } = read.get(bucketKey(at))!;
      if (radii.has(playerId)) {
        const found = await runs!;
        if (found instanceof Error) return found;
        const run = found.get(playerId)!;
        if (radius !== null) return within(run, playerId, radius, fill);
        return { size: run.size, places: [run.places.find((place) => place.playerId === playerId) ?? null] };
      }
      const list = await standings!;
      return list instanceof Error ? list : { size: list.size, places: [list.places.get(playerId) ?? null] };
    }),
  );
}

/**
 * How a place read names the players it reads in the same step, on one node (ProfileCache.naming):
 * its places then come back with their players' profiles, which the names asked after them take
 * without another call.
 */
export type PlaceNaming = NonNullable<ProfileCache['naming']>;

/** `naming` for a read of bucket `at`: null unless the bucket is one shard (a script names only its own sorted set's players). O(1). */
const namingFor = (naming: PlaceNaming | null, at: BoardBucket): PlaceNaming | null => (at.board.shards === 1 ? naming : null);

/** index.arounds, naming the runs' players in the same call when `naming` is given and the bucket is one shard. */
async function aroundsOf(index: RankingIndex, naming: PlaceNaming | null, at: BoardBucket, runs: AroundAsk[]): Promise<BucketView<NamedPlace>[]> {
  const named = namingFor(naming, at);
  if (!named) return index.arounds(at, runs);
  const sentAt = named.clock();
  const { views, token, values } = await index.aroundsNamed(at, runs, named);
  const places: NamedPlace[] = views.flatMap((view) => view.places);
  const profiles = named.seen(
    sentAt,
    token,
    places.map((place) => place.playerId),
    values,
  );
  places.forEach((place, i) => (place.profile = profiles[i]));
  return views;
}

/** index.standings, naming the players in the same call when `naming` is given and the bucket is one shard. */
async function standingsOf(index: RankingIndex, naming: PlaceNaming | null, at: BoardBucket, ids: string[]): Promise<BucketView<NamedPlace | null>> {
  const named = namingFor(naming, at);
  if (!named) return index.standings(at, ids);
  const sentAt = named.clock();
  const { view, token, values } = await index.standingsNamed(at, ids, named);
  const profiles = named.seen(sentAt, token, ids, values);
  view.places.forEach((place: NamedPlace | null, i) => place && (place.profile = profiles[i]));
  return view;
}

/**
 * How many place reads of a pass make a call that leaves before the pass ends
 * (BatchLoaderOptions.sendAt): a board screen asks two (its standing and its run), so some eight
 * screens a call. Why not fewer: each call is a write that may wake Redis, and waking a process is
 * the dearest part of a small call; why not the whole pass: the service would sit idle while Redis
 * answers one call for all of it (bench/RESULTS.md has the measurements).
 */
export const PLACE_LOADS_SENT_AT = 16;

/**
 * The process's place loader over `index`: one per process (built by createReadSide), so that what
 * it gathers is every request's. With `naming` (one node), an around call names its players too.
 */
export function createPlaceLoader(index: RankingIndex, naming: PlaceNaming | null = null): PlaceLoader {
  const loader = createBatchLoader<Ask, BucketView<Place | null> | BucketView>((asks) => readBatch(index, naming, asks), { sendAt: PLACE_LOADS_SENT_AT });
  return {
    standing: (at, playerId) => loader.load({ at, playerId, radius: null, fill: false }),
    around: (at, playerId, radius, fill = false) => loader.load({ at, playerId, radius, fill }) as Promise<BucketView>,
    named: naming !== null,
  };
}
