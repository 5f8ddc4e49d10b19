import type { BoardBucket, BucketView, ReadOptions } from './index.js';
import { bucketKey } from './keys.js';

/** A view of a bucket's top and when it was read from the index. */
export interface TopView extends BucketView {
  asOf: Date;
  /** Which read of the bucket's top this view came from (1, 2, …, per process); slices keep it. */
  read: number;
}

export interface TopCacheOptions {
  /** How old a cached top may be. Default 1,000 ms. */
  maxAgeMs?: number;
  /** How long the largest limit asked for stays the one that is read. Default 30,000 ms. */
  limitMemoryMs?: number;
  /**
   * The largest limit remembered (limitMemoryMs): a larger ask is read once for itself (or served
   * from a view that holds it), and later reads of the bucket stay as long as the limits asked at
   * most this, so that one `top(limit: 1000)` does not make every read of its bucket 1,000 rows
   * long for limitMemoryMs. Default 100, the largest board topSize (what topChanged reads).
   */
  maxRememberedLimit?: number;
  /** How many buckets are cached at most; the least recently read go first. Default 10,000. */
  maxBuckets?: number;
  /** The clock. Default: the system's. */
  now?: () => number;
}

interface Entry {
  view?: TopView | undefined;
  /** Which read the view came from: a read that started earlier never replaces a later one's view. */
  viewRead: number;
  /** The read under way, shared by every caller that arrives while it runs (single flight). */
  reading?: Promise<TopView> | undefined;
  readingLimit: number;
  /** The read a refresh waits to start once `reading` is done, shared by every refresh meanwhile. */
  nextRefresh?: Promise<TopView> | undefined;
  /** The latest `since` asked of that waiting read by the refreshes sharing it (see ReadOptions). */
  nextSince?: number | undefined;
  /** The largest limit asked recently, and when: each read fetches that many, so smaller asks are slices. */
  largestLimit: number;
  largestAskedAt: number;
}

/**
 * The shared top cache: per board bucket, the top rows read at most about a second ago. Everybody
 * asks for the same rows, so the index sees at most about one read per bucket per second per
 * process, whatever the traffic, and concurrent misses share one read. A view of a sharded bucket
 * is the merged top of its shards (what `read` answers), keyed by the bucket, so one hit saves a
 * read of every shard.
 */
export function createTopCache(read: (at: BoardBucket, limit: number, options?: ReadOptions) => Promise<BucketView>, options: TopCacheOptions = {}) {
  const maxAgeMs = options.maxAgeMs ?? 1_000;
  const limitMemoryMs = options.limitMemoryMs ?? 30_000;
  const maxBuckets = options.maxBuckets ?? 10_000;
  const maxRememberedLimit = options.maxRememberedLimit ?? 100;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  let reads = 0;

  const slice = (view: TopView, limit: number): TopView => ({ ...view, places: view.places.slice(0, limit) });

  /** The bucket's entry, with `limit` remembered as asked at `t` unless it is past maxRememberedLimit. */
  function entryFor(key: string, limit: number, t: number): Entry {
    const remembered = limit <= maxRememberedLimit;
    const entry = entries.get(key) ?? { viewRead: 0, readingLimit: 0, largestLimit: remembered ? limit : 0, largestAskedAt: t };
    if (!remembered) return entry;
    if (limit >= entry.largestLimit || t - entry.largestAskedAt > limitMemoryMs) {
      entry.largestLimit = Math.max(limit, t - entry.largestAskedAt > limitMemoryMs ? 0 : entry.largestLimit);
      entry.largestAskedAt = t;
    }
    return entry;
  }

  /** Reads the remembered limit, or `asked` when it is more (an ask past maxRememberedLimit). */
  function startRead(key: string, entry: Entry, at: BoardBucket, asked = 0, readOptions?: ReadOptions): Promise<TopView> {
    const limit = Math.max(entry.largestLimit, asked);
    const readNumber = ++reads;
    const reading = read(at, limit, readOptions).then(
      (view) => {
        const fresh = { ...view, asOf: new Date(now()), read: readNumber };
        if (readNumber > entry.viewRead) {
          entry.view = fresh;
          entry.viewRead = readNumber;
        }
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
      const entry = entryFor(key, limit, t);
      const { view } = entry;
      // A view holds every row there is when it has fewer rows than it asked for.
      const covers = (v: TopView) => v.places.length >= limit || v.places.length === v.size;
      if (view && t - view.asOf.getTime() <= maxAgeMs && covers(view)) return slice(view, limit);
      if (entry.reading && entry.readingLimit >= limit) return slice(await entry.reading, limit);
      return slice(await startRead(key, entry, at, limit), limit);
    },

    /**
     * Reads a bucket's top now (`limit` places, or more when readers asked for more lately) and
     * makes it the cached view, so `top` readers get it too; answers the whole view read. A read
     * already under way may have started before whatever prompted this call (a top change), so it
     * is not joined: the call waits for it and then reads again, and every refresh arriving
     * meanwhile shares that next read (single flight: at most one read in flight and one waiting
     * per bucket). `options.since`: the read must see every write the master took before then
     * (a replica that has not caught up is skipped; see ReadOptions). O(log N + limit).
     */
    refresh(at: BoardBucket, limit: number, options?: ReadOptions): Promise<TopView> {
      const key = bucketKey(at);
      const entry = entryFor(key, limit, now());
      if (!entry.reading) return startRead(key, entry, at, limit, options);
      if (options?.since !== undefined) entry.nextSince = Math.max(entry.nextSince ?? -Infinity, options.since);
      entry.nextRefresh ??= entry.reading
        .then(
          () => undefined,
          () => undefined,
        )
        .then(() => {
          const since = entry.nextSince;
          entry.nextRefresh = undefined;
          entry.nextSince = undefined;
          return startRead(key, entry, at, limit, since === undefined ? undefined : { since });
        });
      return entry.nextRefresh;
    },

    /**
     * The last view read of a bucket, however old (its asOf says when), sliced to `limit`; undefined
     * when there is none that holds `limit` rows. For when the index cannot be read now. O(limit).
     */
    peek(at: BoardBucket, limit: number): TopView | undefined {
      const view = entries.get(bucketKey(at))?.view;
      return view && (view.places.length >= limit || view.places.length === view.size) ? slice(view, limit) : undefined;
    },

    /**
     * Which read the view `top` would answer from now, without reading the index, for the bucket
     * named by its key (bucketKey); undefined when the next ask would read. What a shared answer
     * (http/response-cache.ts) checks it was built from. O(1).
     */
    currentRead(bucket: string): number | undefined {
      const view = entries.get(bucket)?.view;
      return view && now() - view.asOf.getTime() <= maxAgeMs ? view.read : undefined;
    },

    /**
     * Forgets every view of a board's buckets (a deleted board: one made again under its id starts
     * empty, never from a view of the old one). O(buckets kept).
     */
    forgetBoard(boardId: string): void {
      // Every bucket key of the board starts so (see keys.ts bucketKey); a board id holds no ':'.
      const start = `lb:{${boardId}:`;
      for (const key of [...entries.keys()]) if (key.startsWith(start)) entries.delete(key);
    },

    /**
     * Drops a bucket's view, so the next ask reads the index (a write that changed the top, say).
     * A read under way may have started before the write: it still answers the callers that
     * joined it, but its view is not kept and later asks do not join it. O(1).
     */
    invalidate(at: BoardBucket): void {
      const entry = entries.get(bucketKey(at));
      if (!entry) return;
      entry.view = undefined;
      // Every read started so far is older than the write: none of them may become the view.
      entry.viewRead = reads;
      entry.reading = undefined;
    },
  };
}

export type TopCache = ReturnType<typeof createTopCache>;
