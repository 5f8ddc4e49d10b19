import DataLoader from 'dataloader';
import type { BoardBucket, BucketView, Place, RankingIndex } from '../ranking/index.js';
import { bucketKey } from '../ranking/keys.js';

/**
 * One request's reads of single players' places, gathered into as few index calls as they allow.
 * A game client opening a board asks, in one document, for the player's standing and for the
 * players around them in the same bucket: the around script reads the player's own place beside
 * its neighbours, in the same atomic step, so the standing is answered from that run rather than
 * by a script call of its own. Standings of several players in one bucket go in one call.
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
 * Answers a batch: per bucket and player asked about with a radius, one around call with the
 * largest radius, which answers that player's standing too; per bucket, one standings call for
 * the players asked about without one. A call that fails fails only the reads it answers. O(calls).
 */
async function readBatch(index: RankingIndex, asks: readonly Ask[]): Promise<(BucketView<Place | null> | BucketView | Error)[]> {
  const runKey = (ask: Ask) => `${bucketKey(ask.at)}\n${ask.playerId}`;
  const radii = new Map<string, Ask & { radius: number }>();
  for (const ask of asks) {
    if (ask.radius === null) continue;
    const run = radii.get(runKey(ask));
    if (!run || run.radius < ask.radius) radii.set(runKey(ask), { ...ask, radius: ask.radius });
  }
  const lists = new Map<string, { at: BoardBucket; playerIds: Set<string> }>();
  for (const ask of asks) {
    if (ask.radius !== null || radii.has(runKey(ask))) continue;
    const list = lists.get(bucketKey(ask.at)) ?? { at: ask.at, playerIds: new Set<string>() };
    list.playerIds.add(ask.playerId);
    lists.set(bucketKey(ask.at), list);
  }
  // Every call sent at once: the client pipelines them in one write.
  const runs = new Map([...radii].map(([key, run]) => [key, settled(index.around(run.at, run.playerId, run.radius))] as const));
  const standings = new Map(
    [...lists].map(([key, { at, playerIds }]) => {
      const ids = [...playerIds];
      const read = index.standings(at, ids).then((view) => ({ size: view.size, places: new Map(ids.map((id, i) => [id, view.places[i] ?? null])) }));
      return [key, settled(read)] as const;
    }),
  );
  return Promise.all(
    asks.map(async (ask) => {
      const runRead = runs.get(runKey(ask));
      if (runRead) {
        const run = await runRead;
        if (run instanceof Error) return run;
        if (ask.radius !== null) return within(run, ask.playerId, ask.radius);
        return { size: run.size, places: [run.places.find((place) => place.playerId === ask.playerId) ?? null] };
      }
      const list = await standings.get(bucketKey(ask.at))!;
      return list instanceof Error ? list : { size: list.size, places: [list.places.get(ask.playerId) ?? null] };
    }),
  );
}

/** Place reads straight to the index, a call each: for a read with no other in its request. */
export const directPlaceReads = (index: RankingIndex): PlaceReads => ({
  standing: (at, playerId) => index.standings(at, [playerId]),
  around: (at, playerId, radius) => index.around(at, playerId, radius),
});

/** A request's place reads over `index` (one per request: what it gathers is that request's). */
export function createPlaceReads(index: RankingIndex): PlaceReads {
  // Not cached: a read is answered as of its batch, and two batches of one request read anew.
  const loader = new DataLoader<Ask, BucketView<Place | null> | BucketView>((asks) => readBatch(index, asks), { cache: false });
  return {
    standing: (at, playerId) => loader.load({ at, playerId, radius: null }),
    around: (at, playerId, radius) => loader.load({ at, playerId, radius }) as Promise<BucketView>,
  };
}
