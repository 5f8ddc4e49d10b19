import DataLoader from 'dataloader';
import type { BoardBucket, BucketView, Place, RankingIndex } from '../ranking/index.js';
import { bucketKey } from '../ranking/keys.js';
import { createTurnLoader } from '../services/turn-loader.js';

/**
 * One request's reads of single players' places, gathered into as few index calls as they allow.
 * A game client opening a board asks, in one document, for the player's standing and for the
 * players around them in the same bucket: the around script reads the player's own place beside
 * its neighbours, in the same atomic step, so the standing is answered from that run rather than
 * by a script call of its own. Standings of one bucket go in one call, with those every other
 * request asked for in the same turn of the event loop (createSharedPlaceReads).
 *
 * The reads a request's resolvers make before the request next waits for a store are gathered
 * (DataLoader's batch, dispatched once the promise jobs of the moment have run): root fields
 * start together and reach their reads together. Every answer is what the index call on its own
 * would give: a place in an around run is read under the same snapshot and with the same size.
 */
export interface PlaceReads {
  /** The player's place (null when not ranked) and the bucket's size, as index.standings(at, [playerId]). */
  standing(at: BoardBucket, playerId: string): Promise<BucketView<Place | null>>;
  /** The player and up to `radius` places either side, as index.around. */
  around(at: BoardBucket, playerId: string, radius: number): Promise<BucketView>;
}

interface Ask {
  at: BoardBucket;
  playerId: string;
  /** null: the player's standing alone. */
  radius: number | null;
}

/** The places of an around run within `radius` of its player (the run is cut at the bucket's edges). */
function within(run: BucketView, playerId: string, radius: number): BucketView {
  const own = run.places.findIndex((place) => place.playerId === playerId);
  if (own < 0) return { size: run.size, places: [] };
  return { size: run.size, places: run.places.slice(Math.max(0, own - radius), own + radius + 1) };
}

/** An index call's answer, or its error (DataLoader rejects the loads answered an Error, and only those). */
const settled = <T>(call: Promise<T>): Promise<T | Error> => call.catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));

/**
 * Answers a request's batch: per bucket and player asked about with a radius, one around call with
 * the largest radius, which answers that player's standing too; the standings asked for without
 * one go to the process's standings of the turn (`shared`). A call that fails fails only the reads
 * it answers. O(calls).
 */
async function readBatch(index: RankingIndex, shared: PlaceReads, asks: readonly Ask[]): Promise<(BucketView<Place | null> | BucketView | Error)[]> {
  const runKey = (ask: Ask) => `${bucketKey(ask.at)}\n${ask.playerId}`;
  const radii = new Map<string, Ask & { radius: number }>();
  for (const ask of asks) {
    if (ask.radius === null) continue;
    const run = radii.get(runKey(ask));
    if (!run || run.radius < ask.radius) radii.set(runKey(ask), { ...ask, radius: ask.radius });
  }
  // Every call sent at once: the client pipelines them in one write.
  const runs = new Map([...radii].map(([key, run]) => [key, settled(index.around(run.at, run.playerId, run.radius))] as const));
  return Promise.all(
    asks.map(async (ask) => {
      const runRead = runs.get(runKey(ask));
      if (!runRead) return settled(shared.standing(ask.at, ask.playerId));
      const run = await runRead;
      if (run instanceof Error) return run;
      if (ask.radius !== null) return within(run, ask.playerId, ask.radius);
      return { size: run.size, places: [run.places.find((place) => place.playerId === ask.playerId) ?? null] };
    }),
  );
}

/**
 * Answers the standings asked for in one turn, by every request: per bucket, one standings call
 * for the distinct players asked about. A call that fails fails only its bucket's reads. O(calls).
 */
async function standingsOfTurn(index: RankingIndex, asks: readonly Omit<Ask, 'radius'>[]): Promise<(BucketView<Place | null> | Error)[]> {
  const lists = new Map<string, { at: BoardBucket; playerIds: Set<string> }>();
  for (const { at, playerId } of asks) {
    const list = lists.get(bucketKey(at)) ?? { at, playerIds: new Set<string>() };
    list.playerIds.add(playerId);
    lists.set(bucketKey(at), list);
  }
  // Every call sent at once: the client pipelines them in one write.
  const read = new Map(
    [...lists].map(([key, { at, playerIds }]) => {
      const ids = [...playerIds];
      const view = index.standings(at, ids).then(({ size, places }) => ({ size, places: new Map(ids.map((id, i) => [id, places[i] ?? null])) }));
      return [key, settled(view)] as const;
    }),
  );
  return Promise.all(
    asks.map(async ({ at, playerId }) => {
      const list = await read.get(bucketKey(at))!;
      return list instanceof Error ? list : { size: list.size, places: [list.places.get(playerId) ?? null] };
    }),
  );
}

/**
 * The process's place reads (Services.placeReads), for a read with no other in its request: each
 * standing joins the standings of every request of its turn of the event loop (createTurnLoader),
 * one index call per bucket; an around is a call of its own.
 */
export function createSharedPlaceReads(index: RankingIndex): PlaceReads {
  const standings = createTurnLoader<Omit<Ask, 'radius'>, BucketView<Place | null>>((asks) => standingsOfTurn(index, asks));
  return {
    standing: (at, playerId) => standings.load({ at, playerId }),
    around: (at, playerId, radius) => index.around(at, playerId, radius),
  };
}

/** A request's place reads over `index` (one per request: what it gathers is that request's), its lone standings through `shared`. */
export function createPlaceReads(index: RankingIndex, shared: PlaceReads): PlaceReads {
  // Not cached: a read is answered as of its batch, and two batches of one request read anew.
  const loader = new DataLoader<Ask, BucketView<Place | null> | BucketView>((asks) => readBatch(index, shared, asks), { cache: false });
  return {
    standing: (at, playerId) => loader.load({ at, playerId, radius: null }),
    around: (at, playerId, radius) => loader.load({ at, playerId, radius }) as Promise<BucketView>,
  };
}
