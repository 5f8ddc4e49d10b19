import { type RedisClient, isCluster } from '../redis.js';
import type { Logger } from 'pino';
import type { BoardBucket, RankingIndex } from '../ranking/index.js';
import type { TopCache, TopView } from '../ranking/top-cache.js';
import type { ReplicaReads } from '../ranking/replicas.js';
import { LatestValue } from './latest.js';

/** One view of a bucket's top as a watcher gets it: sliced to the watcher's limit. */
export interface TopEvent {
  at: BoardBucket;
  view: TopView;
  /**
   * The whole view the slice was cut from: one object shared by every viewer of one read, so
   * that work done per view (loading the players' profiles) can be done once, not per viewer.
   */
  source: TopView;
  /**
   * The places hold the ranks of the style asked already (a closed bucket's view: its COMPETITION
   * and DENSE ranks are looked up per score, see reads/frozen.ts); otherwise they are ORDINAL and
   * styled as a run from rank 1.
   */
  styled?: boolean;
  /**
   * The board was deleted (deleteBoard): the watch's last event, which topChanged answers with a
   * NOT_FOUND error (pubsub/top-changed.ts); `view` is empty.
   */
  boardGone?: boolean;
}

export interface TopFeedOptions {
  /**
   * A Redis connection of the feed's own (see {@link subscriberFor}): once it subscribes it can
   * run nothing else. Connected on the first watch when it is not yet. The caller closes it after
   * {@link TopFeed.close}.
   */
  subscriber: RedisClient;
  /** The process's shared top cache: each refresh replaces its view, so `top` readers get it too. */
  topCache: Pick<TopCache, 'top' | 'refresh'>;
  /**
   * Names each bucket's channels (one per shard), exactly as the write script and announcements
   * publish on them.
   */
  index: Pick<RankingIndex, 'topChannels'>;
  log: Logger;
  /** At most one read per bucket per this many milliseconds, however many changes arrive. Default 100. */
  coalesceMs?: number;
  /** How long after a failed read the bucket is read again. Default 1,000 ms. */
  retryMs?: number;
  /** Counts open watches up and down (the topChangedSubscribers gauge). Default: none. */
  watchers?: { inc(): void; dec(): void };
  /**
   * The Redis replicas the index reads from, when it does (REDIS_REPLICA_URLS, or a Cluster's):
   * a change is heard from the master, maybe before a replica has it, so after the read at once
   * (which a lagging replica may answer from before the change) the top is read again once a
   * replica has caught up with the moment the change was heard (or on the master). Default: none
   * (the index reads from the masters).
   */
  replicas?: Pick<ReplicaReads, 'caughtUp'> | undefined;
  /**
   * Whether a watched bucket has closed (services/buckets.ts closedNow): checked before each read
   * after the first, so that once it has, its viewers keep the last view (the final standings) and
   * are finished, and nothing more is read or sent. Default: buckets never close.
   */
  closed?: ((at: BoardBucket) => boolean | Promise<boolean>) | undefined;
}

/** The feed was closed (the process is stopping): nothing more can be watched. */
export class TopFeedClosedError extends Error {
  constructor() {
    super('the top feed is closed: the process is stopping');
    this.name = 'TopFeedClosedError';
  }
}

interface Viewer {
  limit: number;
  out: LatestValue<TopEvent>;
  /** What this viewer was last given, so an unchanged slice is not sent again. */
  fingerprint?: string;
  /** When the view it was last given was read: a read that finishes late never goes back in time. */
  asOf: number;
}

/** One watched bucket: one Redis subscription per shard, shared by every local viewer of it. */
interface Channel {
  /** The first shard's channel: the bucket's name in `channels`. */
  name: string;
  /** Every shard's channel; a message on any of them is a candidate change of the merged top. */
  names: string[];
  at: BoardBucket;
  viewers: Set<Viewer>;
  /** Subscribed, then read once: every viewer's first view waits for it. */
  ready: Promise<TopView>;
  /** When the last read started (performance.now()). */
  lastReadAt: number;
  /** The read waiting for the coalescing window to pass. */
  timer?: NodeJS.Timeout | undefined;
  /** The latest change the next read must see (ReadOptions.since), when a replica must have caught up with one. */
  since?: number | undefined;
}

/**
 * What a watcher compares: who, in which order, with which score (and tie-break values, on a board
 * with columns: a better value alone moves nobody and may keep the time unit) and time. A plain
 * board's is as it always was, so a TOP_CHANGED window's remembered one (top-webhooks.ts) still matches.
 */
export const topFingerprint = (view: TopView) =>
  JSON.stringify(
    view.places.map((p) => (p.tieBreakValues ? [p.playerId, p.score, p.reachedAt.getTime(), p.tieBreakValues] : [p.playerId, p.score, p.reachedAt.getTime()])),
  );

/**
 * A second connection to the same Redis (or Cluster), for the feed to subscribe on. O(1); it
 * connects when first used.
 *
 * The feed uses sharded pub/sub (SSUBSCRIBE; the write script and announcements SPUBLISH): on a
 * Cluster a message then stays on the node serving its channel's slot, the bucket's, instead of
 * being broadcast to every node, and Redis 7 accepts the same commands on one node, so there is
 * one code path. Two options differ from the client's:
 * - no key prefix: ioredis counts a shard channel as a key and would prefix it, but the channel
 *   names the feed is given are full names already (see RankingIndex.topChannels), and on a
 *   reconnect a node client subscribes again with the names the server reported, which a prefix
 *   would then double;
 * - on a Cluster, `shardedSubscribers`: one subscriber connection per master, each SSUBSCRIBE sent
 *   to the master serving its channel's slot and sent again to the new master after a failover
 *   (a plain Cluster client sends every SSUBSCRIBE down one connection, to whatever node it is).
 */
export function subscriberFor(redis: RedisClient): RedisClient {
  if (isCluster(redis)) {
    return redis.duplicate([], { keyPrefix: '', redisOptions: { ...redis.options.redisOptions, keyPrefix: '' }, shardedSubscribers: true });
  }
  return redis.duplicate({ keyPrefix: '' });
}

/**
 * Follows a feed's subscriber connection (topChanged's, cohortChanged's): `missed` runs each time
 * it is back after a loss (not at the first connect), since changes announced meanwhile were
 * missed; ioredis subscribes again by itself, just before. Answers connect(), which connects a
 * subscriber given unconnected, once: every watch arriving meanwhile waits for it. O(1).
 */
export function followSubscriber(subscriber: RedisClient, missed: () => void, log: Logger, feed: string): () => Promise<void> {
  let connectedBefore = subscriber.status === 'ready';
  subscriber.on('ready', () => {
    if (!connectedBefore) {
      connectedBefore = true;
      return;
    }
    missed();
  });
  // A Cluster's sharded subscribers reconnect (to a promoted replica, say) and subscribe again on
  // their own, then say so with this event; a change published in between was missed.
  if (isCluster(subscriber)) subscriber.on('subscribersReady', missed);
  // A subscriber that loses its connection reports it here; ioredis reconnects by itself.
  subscriber.on('error', (error: unknown) => log.warn({ err: error }, `${feed} subscriber connection error`));
  let connecting: Promise<void> | undefined;
  return () => {
    if (connecting) return connecting;
    if (subscriber.status !== 'wait') return Promise.resolve();
    connecting = subscriber.connect().finally(() => {
      connecting = undefined;
    });
    return connecting;
  };
}

/**
 * topChanged's fan-out, one per process. The first local viewer of a bucket subscribes to its
 * channel; each message schedules a read of the top, coalesced to at most one per bucket per
 * `coalesceMs` (the first at once, the rest at the end of the window); that one read refreshes the
 * shared top cache and goes out to every local viewer, each sliced to its own limit and only when
 * its slice changed. A viewer holds only the latest view it has not pulled, so a slow consumer
 * never holds up the others. The last viewer to leave unsubscribes. So the index sees one read per
 * bucket per process per refresh, however many viewers.
 */
export function createTopFeed(options: TopFeedOptions) {
  const { subscriber, topCache, index, log } = options;
  const coalesceMs = options.coalesceMs ?? 100;
  const retryMs = options.retryMs ?? 1_000;
  const channels = new Map<string, Channel>();
  /** Each shard's channel to its bucket's (several per bucket on a sharded board). */
  const byShardChannel = new Map<string, Channel>();
  let closed = false;

  subscriber.on('smessage', (name: string) => {
    const channel = byShardChannel.get(name);
    if (!channel) return;
    schedule(channel, 0);
    // Read again once a replica holds the change (the read above may have found it behind).
    const heardAt = Date.now();
    options.replicas?.caughtUp(heardAt).then(() => {
      if (channels.get(channel.name) !== channel) return;
      channel.since = Math.max(channel.since ?? -Infinity, heardAt);
      schedule(channel, 0);
    }, log.error.bind(log));
  });
  // Changes announced while the connection was down were missed: every watched top is read again
  // once it is back. Each channel reads once it is subscribed.
  const connect = followSubscriber(
    subscriber,
    () => {
      for (const channel of channels.values()) schedule(channel, coalesceMs);
    },
    log,
    'topChanged',
  );

  /** A view's slices, one per limit asked, each cut and fingerprinted once for every viewer of that limit. */
  function slicer(view: TopView) {
    const slices = new Map<number, { view: TopView; seen: string }>();
    return (limit: number) => {
      let slice = slices.get(limit);
      if (!slice) {
        const sliced = { ...view, places: view.places.slice(0, limit) };
        slice = { view: sliced, seen: topFingerprint(sliced) };
        slices.set(limit, slice);
      }
      return slice;
    };
  }

  function deliver(viewer: Viewer, at: BoardBucket, view: TopView, sliceOf = slicer(view)): void {
    if (view.asOf.getTime() < viewer.asOf) return;
    const slice = sliceOf(viewer.limit);
    if (slice.seen === viewer.fingerprint) return;
    viewer.fingerprint = slice.seen;
    viewer.asOf = view.asOf.getTime();
    viewer.out.offer({ at, view: slice.view, source: view });
  }

  /** Reads the top once (as many places as the board watches) and hands it to every viewer. */
  async function read(channel: Channel): Promise<TopView> {
    channel.lastReadAt = performance.now();
    const { since } = channel;
    channel.since = undefined;
    const view = await topCache.refresh(channel.at, channel.at.board.topSize, since === undefined ? undefined : { since }).catch((error: unknown) => {
      // Still owed: the read again carries it.
      if (since !== undefined) channel.since = Math.max(channel.since ?? -Infinity, since);
      throw error;
    });
    const sliceOf = slicer(view);
    for (const viewer of channel.viewers) deliver(viewer, channel.at, view, sliceOf);
    return view;
  }

  /**
   * Reads a watched top again, unless its bucket has closed since: its viewers then hold its final
   * view already (the last change before the close reached them; the frozen standings are those),
   * so each is finished once it has pulled it, and the channel is dropped. A closed bucket sends
   * no more views.
   */
  async function reread(channel: Channel): Promise<void> {
    const isClosed = options.closed?.(channel.at) ?? false;
    if (isClosed === true || (isClosed !== false && (await isClosed))) {
      for (const viewer of [...channel.viewers]) viewer.out.finish();
      forget(channel);
      return;
    }
    await read(channel);
  }

  /** A read at the end of the coalescing window (at least `minDelayMs` away), unless one is due already. */
  function schedule(channel: Channel, minDelayMs: number): void {
    if (channel.timer || closed) return;
    const wait = Math.max(minDelayMs, channel.lastReadAt + coalesceMs - performance.now());
    channel.timer = setTimeout(() => {
      channel.timer = undefined;
      reread(channel).catch((error: unknown) => {
        log.warn({ err: error, channel: channel.name }, 'could not read a watched top; retrying');
        if (channels.get(channel.name) === channel) schedule(channel, retryMs);
      });
    }, wait);
    channel.timer.unref();
  }

  function open(names: string[], at: BoardBucket): Channel {
    const channel = { name: names[0]!, names, at, viewers: new Set<Viewer>(), lastReadAt: -Infinity } as Channel;
    channels.set(channel.name, channel);
    for (const name of names) byShardChannel.set(name, channel);
    // Subscribed before the first read, so no change can fall between the two.
    channel.ready = connect()
      // One call per shard's channel: on a Cluster each may belong to another slot.
      .then(() => Promise.all(names.map((name) => subscriber.ssubscribe(name))))
      .then(() => read(channel));
    channel.ready.catch(() => forget(channel));
    return channel;
  }

  /** Drops a channel nobody watches any more (or whose first read failed) and unsubscribes. */
  function forget(channel: Channel): void {
    if (channels.get(channel.name) !== channel) return;
    channels.delete(channel.name);
    for (const name of channel.names) byShardChannel.delete(name);
    clearTimeout(channel.timer);
    if (closed) return;
    for (const name of channel.names) {
      subscriber.sunsubscribe(name).catch((error: unknown) => log.warn({ err: error, channel: name }, 'could not unsubscribe'));
    }
  }

  return {
    /**
     * The views of one bucket's top, each its first `limit` places: the current one at once (this
     * resolves once it is read), then one each time that slice changes. End it with return() or
     * `signal`. Throws when the channel cannot be subscribed or the top cannot be read (a store
     * away) and {@link TopFeedClosedError} once closed. O(limit) per view; one Redis SSUBSCRIBE per shard for
     * the first local viewer of a bucket, nothing for the others.
     */
    async watch(at: BoardBucket, limit: number, signal?: AbortSignal): Promise<AsyncIterableIterator<TopEvent>> {
      if (closed) throw new TopFeedClosedError();
      const names = index.topChannels(at);
      const channel = channels.get(names[0]!) ?? open(names, at);
      const onAbort = () => viewer.out.close();
      const viewer: Viewer = {
        limit,
        asOf: 0,
        out: new LatestValue<TopEvent>(() => {
          signal?.removeEventListener('abort', onAbort);
          if (!channel.viewers.delete(viewer)) return;
          options.watchers?.dec();
          if (channel.viewers.size === 0) forget(channel);
        }),
      };
      channel.viewers.add(viewer);
      options.watchers?.inc();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) viewer.out.close();
      try {
        await channel.ready;
        // A later viewer of a watched bucket starts from the shared cache: every change since the
        // subscription has refreshed it, and a refresh still to come reaches this viewer too.
        if (viewer.fingerprint === undefined) deliver(viewer, at, await topCache.top(at, limit));
      } catch (error) {
        viewer.out.close();
        throw error;
      }
      return viewer.out;
    },

    /**
     * Ends every watch of a deleted board's buckets (deleteBoard, in this process or another): each
     * viewer's last event says the board is gone (TopEvent.boardGone), and the channels are
     * unsubscribed. `createdAt`: when the board deleted had been made. O(watched buckets + their viewers).
     */
    boardGone(boardId: string, createdAt?: Date): void {
      for (const channel of [...channels.values()]) {
        if (channel.at.board.id !== boardId) continue;
        // A watch of a board made again since under the same id goes on.
        if (createdAt && channel.at.board.createdAt.getTime() > createdAt.getTime()) continue;
        const view: TopView = { size: 0, places: [], asOf: new Date(), read: 0 };
        for (const viewer of [...channel.viewers]) {
          viewer.out.offer({ at: channel.at, view, source: view, boardGone: true });
          viewer.out.finish();
        }
        forget(channel);
      }
    },

    /** How many buckets this process watches, and how many viewers in all. O(buckets). */
    stats(): { buckets: number; viewers: number } {
      let viewers = 0;
      for (const channel of channels.values()) viewers += channel.viewers.size;
      return { buckets: channels.size, viewers };
    },

    /**
     * Ends every watch (their iterations finish, so server-sent event streams end cleanly) and
     * stops reading; later watches throw. The subscriber connection is the caller's to close. O(viewers).
     */
    close(): void {
      closed = true;
      for (const channel of [...channels.values()]) {
        clearTimeout(channel.timer);
        for (const viewer of [...channel.viewers]) viewer.out.close();
      }
      channels.clear();
      byShardChannel.clear();
    },
  };
}

export type TopFeed = ReturnType<typeof createTopFeed>;
