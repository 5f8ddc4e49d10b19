import type { BoardBucket, BucketView } from './index.js';
import { bucketKey } from './keys.js';

/** A view of a bucket's top and when it was read from the index. */
export interface TopView extends BucketView {
  asOf: Date;
}

export interface TopCacheOptions {
  /** How old a cached top may be. Default 1,000 ms. */
  maxAgeMs?: number;
  /** How long the largest limit asked for stays the one that is read. Default 30,000 ms. */
  limitMemoryMs?: number;
  /** How many buckets are cached at most; the least recently read go first. Default 10,000. */
  maxBuckets?: number;
  /** The clock. Default: the system's. */
  now?: () => number;
}

interface Entry {
  view?: TopView;
  /** The read under way, shared by every caller that arrives while it runs (single flight). */
  reading?: Promise<TopView>;
  readingLimit: number;
  /** The largest limit asked recently, and when: each read fetches that many, so smaller asks are slices. */
  largestLimit: number;
  largestAskedAt: number;
}

/**
 * The shared top cache: per board bucket, the top rows read at most about a second ago. Everybody
 * asks for the same rows, so the index sees at most about one read per bucket per second per
 * process, whatever the traffic, and concurrent misses share one read.
 */
export function createTopCache(read: (at: BoardBucket, limit: number) => Promise<BucketView>, options: TopCacheOptions = {}) {
  const maxAgeMs = options.maxAgeMs ?? 1_000;
  const limitMemoryMs = options.limitMemoryMs ?? 30_000;
  const maxBuckets = options.maxBuckets ?? 10_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();

  const slice = (view: TopView, limit: number): TopView => ({ ...view, places: view.places.slice(0, limit) });

  function startRead(key: string, entry: Entry, at: BoardBucket): Promise<TopView> {
    const limit = entry.largestLimit;
    const reading = read(at, limit).then(
      (view) => {
        const fresh = { ...view, asOf: new Date(now()) };
        entry.view = fresh;
        if (entry.reading === reading) entry.reading = undefined;
        return fresh;
      },
      (error: unknown) => {
        if (entry.reading === reading) entry.reading = undefined;
        throw error;
      },
    );
    entry.reading = reading;
    entry.readingLimit = limit;
    // Re-insert so the Map's order is least recently read first.
    entries.delete(key);
    entries.set(key, entry);
    if (entries.size > maxBuckets) entries.delete(entries.keys().next().value!);
    return reading;
  }

  return {
    /** The first `limit` places of a bucket, from a view at most maxAgeMs old. O(limit) on a hit. */
    async top(at: BoardBucket, limit: number): Promise<TopView> {
      const key = bucketKey(at);
      const t = now();
      const entry = entries.get(key) ?? { readingLimit: 0, largestLimit: limit, largestAskedAt: t };
      if (limit >= entry.largestLimit || t - entry.largestAskedAt > limitMemoryMs) {
        entry.largestLimit = Math.max(limit, t - entry.largestAskedAt > limitMemoryMs ? 0 : entry.largestLimit);
        entry.largestAskedAt = t;
      }
      const { view } = entry;
      // A view holds every row there is when it has fewer rows than it asked for.
      const covers = (v: TopView) => v.places.length >= limit || v.places.length === v.size;
      if (view && t - view.asOf.getTime() <= maxAgeMs && covers(view)) return slice(view, limit);
      if (entry.reading && entry.readingLimit >= limit) return slice(await entry.reading, limit);
      return slice(await startRead(key, entry, at), limit);
    },

    /** Drops a bucket's view, so the next ask reads the index (a write that changed the top, say). */
    invalidate(at: BoardBucket): void {
      const entry = entries.get(bucketKey(at));
      if (entry) entry.view = undefined;
    },
  };
}

export type TopCache = ReturnType<typeof createTopCache>;
