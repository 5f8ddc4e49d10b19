import { randomUUID } from 'node:crypto';
import calculateSlot from 'cluster-key-slot';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import { type RedisClient, type RedisTarget, createRedis, createRedisCluster, isCluster } from '../redis.js';
import { defineRankingScripts } from './scripts/index.js';

/** What a read asks of the node it runs on. */
export interface ReadOptions {
  /**
   * A time (ms since the epoch, this process's clock): the node must hold every write the master
   * took before it. A replica is used only once its heartbeat shows it (see {@link createReplicaReads});
   * else the read goes to the master. For a read prompted by a change heard at that time (topChanged).
   */
  since?: number;
}

/**
 * Where the index's reads go: runs `read` on a node fit for it, a replica fresh enough or the
 * master, and answers what it answers. `onReplica` says which (a replica takes no write, not even
 * a script's bookkeeping: see the named reads' replica variants). A read that fails on a replica
 * runs again on the master at once, so losing a replica costs a read no error.
 */
export type Reads = <T>(read: (redis: RedisClient, onReplica: boolean) => Promise<T>, options?: ReadOptions) => Promise<T>;

/** Every read on the masters: what the index does without replicas, and what a submission's own answer takes. O(1). */
export const fromMasters =
  (redis: RedisClient): Reads =>
  (read) =>
    read(redis, false);

/** One replica as the heartbeats last saw it. */
export interface ReplicaState {
  /** host:port. */
  replica: string;
  /** How far behind its master it was at the last heartbeat read from it (ms), or null when it did not answer. */
  lagMs: number | null;
  /** Whether reads go to it now. */
  fresh: boolean;
}

export interface ReplicaReadsOptions {
  /** The masters' client: one node, or a Cluster. Heartbeats are written with it. */
  writer: RedisClient;
  /**
   * The replicas: on one node, a client per replica (REDIS_REPLICA_URLS, see createRedis); on a
   * Cluster, a second Cluster client made with {@link replicaScaleReads}'s `scaleReads`, which
   * sends each read-only command to a fresh replica of the slot's master.
   */
  replicas: Redis[] | Cluster;
  /** A replica whose heartbeat is older than this is skipped (REDIS_REPLICA_MAX_LAG_MS). Default 1,000. */
  maxLagMs?: number | undefined;
  /** How often each process writes its heartbeat and reads it back from every replica. Default 250 ms. */
  heartbeatMs?: number | undefined;
  log?: Logger | undefined;
  /** The clock. Default: the system's. */
  now?: () => number;
}

/** What a Cluster client reading from replicas needs: the scaleReads option and the check it consults. */
export interface ClusterReadRouting {
  /** For the Cluster client's `scaleReads` option: a fresh replica of the slot's master, else the master. */
  scaleReads: (nodes: (Redis | undefined)[]) => Redis | undefined;
  /** Set by {@link createReplicaReads}: whether a replica (host:port) is fresh now. Until then, none is. */
  fresh: (replica: string) => boolean;
}

/** host:port of a node's client. O(1). */
export const nodeName = (node: Redis): string => `${node.options.host ?? 'localhost'}:${node.options.port ?? 6379}`;

/**
 * A Cluster's `scaleReads` choosing a fresh replica (round robin among the fresh ones) of the slot
 * asked, or the master (nodes[0]) when none is fresh. ioredis calls it for read-only commands only
 * (the read scripts are defined `readOnly`); every other command goes to the master. The freshness
 * check is filled in by {@link createReplicaReads}. O(replicas of the slot).
 */
export function replicaScaleReads(): ClusterReadRouting {
  let turn = 0;
  const routing: ClusterReadRouting = {
    fresh: () => false,
    scaleReads(nodes) {
      const fresh: Redis[] = [];
      for (let i = 1; i < nodes.length; i++) {
        const node = nodes[i];
        if (node && routing.fresh(nodeName(node))) fresh.push(node);
      }
      return fresh.length > 0 ? fresh[turn++ % fresh.length] : nodes[0];
    },
  };
  return routing;
}

/** The heartbeat key of one process (under the client's key prefix), in the slot `tag` hashes to. */
const heartbeatKey = (process: string, tag: string) => `replica-heartbeat:{${tag}}:${process}`;

/**
 * Reads sent to Redis replicas, each skipped while it lags: the index's {@link Reads} for
 * REDIS_REPLICA_URLS (one node) or for a Cluster's replicas.
 *
 * How lag is measured: every `heartbeatMs` this process writes the time on its own clock to a
 * heartbeat key of its own on each master (one key per master on a Cluster, in a slot it serves;
 * it expires a minute after the process stops writing it), then reads that key back from every
 * replica of that master. What a replica answers is the newest heartbeat it has applied, so now
 * minus that is at least how far behind it is (a heartbeat is written after every write the master
 * acknowledged before it, and a replica applies writes in the master's order), up to one period
 * more; one process's clock on both sides, so no clock skew between machines enters. A replica is
 * fresh while that lag is at most `maxLagMs`; one that does not answer (down, or stuck: its read
 * still pending) stops being fresh once its last answer is that old, and one whose read failed is
 * skipped at once. Reads go to a fresh replica (round robin), else to the master; a read that fails
 * on a replica (it went away meanwhile) marks it stale and runs again on the master at once.
 *
 * While every master is down no heartbeat is written, so the replicas soon stop being fresh too,
 * and reads fail with the master's error: the staleness bound holds rather than serving an index
 * that no longer moves.
 */
export function createReplicaReads(options: ReplicaReadsOptions & { routing?: ClusterReadRouting | undefined }) {
  const { writer, replicas, log } = options;
  const maxLagMs = options.maxLagMs ?? 1_000;
  const heartbeatMs = options.heartbeatMs ?? 250;
  const now = options.now ?? Date.now;
  const processId = randomUUID();
  const ttlMs = Math.max(60_000, 10 * maxLagMs);
  /** Per replica (host:port): the newest heartbeat read from it, or absent (never read, or failed). */
  const seen = new Map<string, number>();
  /** Replicas whose heartbeat read is still pending: no second one is sent behind it. */
  const pending = new Set<string>();
  const wasFresh = new Map<string, boolean>();
  const waiters = new Set<{ since: number; done: () => void }>();
  let timer: NodeJS.Timeout | undefined;
  let beating: Promise<void> | undefined;
  let slotsReadAt = now();
  let turn = 0;

  const fresh = (replica: string, since = -Infinity): boolean => {
    const at = seen.get(replica);
    return at !== undefined && now() - at <= maxLagMs && at >= since;
  };
  if (options.routing) options.routing.fresh = (replica) => fresh(replica);

  // One node: the replicas' clients run the same scripts as the master's.
  const nodes = Array.isArray(replicas) ? replicas : [];
  for (const node of nodes) defineRankingScripts(node);
  if (!Array.isArray(replicas)) defineRankingScripts(replicas);

  /** For a Cluster: a heartbeat key per master, each in a slot that master serves now, with the replicas of that master. */
  function clusterTargets(cluster: Cluster): { key: string; replicas: Redis[] }[] {
    const prefix = cluster.options.keyPrefix ?? cluster.options.redisOptions?.keyPrefix ?? '';
    const owners = new Map<string, string[]>();
    for (const serving of cluster.slots) if (serving?.[0] && !owners.has(serving[0])) owners.set(serving[0], serving.slice(1));
    const byName = new Map(cluster.nodes('all').map((node) => [nodeName(node), node]));
    const targets: { key: string; replicas: Redis[] }[] = [];
    const covered = new Set<string>();
    for (let i = 0; covered.size < owners.size && i < 100_000; i++) {
      const key = heartbeatKey(processId, String(i));
      const owner = cluster.slots[calculateSlot(`${prefix}${key}`)]?.[0];
      if (!owner || covered.has(owner)) continue;
      covered.add(owner);
      const found = (owners.get(owner) ?? []).flatMap((name) => byName.get(name) ?? []);
      targets.push({ key, replicas: found });
    }
    return targets;
  }

  /** Reads one replica's copy of a heartbeat key; marks it stale when the read fails. */
  function readBack(replica: Redis, key: string): void {
    const name = nodeName(replica);
    if (pending.has(name)) return;
    pending.add(name);
    replica
      .get(key)
      .then(
        (value) => {
          if (value !== null) seen.set(name, Math.max(Number(value), seen.get(name) ?? -Infinity));
        },
        () => seen.delete(name),
      )
      .finally(() => {
        pending.delete(name);
        review();
      });
  }

  /** One heartbeat: written on each master, then read back from each replica; then reports changes and wakes waiters. */
  async function beat(): Promise<void> {
    const t = now();
    if (isCluster(writer)) {
      const reader = replicas as Cluster;
      // The client learns a Cluster's replicas from CLUSTER SLOTS, which lists a replica only once
      // its master has gossiped its replication offset (after a first write): asked again each
      // second while it knows none, else every 5 s, so replicas added or promoted are found.
      if (t - slotsReadAt >= (reader.nodes('slave').length === 0 ? 1_000 : 5_000)) {
        slotsReadAt = t;
        reader.refreshSlotsCache();
      }
      const targets = clusterTargets(reader);
      await Promise.all(
        targets.map(async ({ key, replicas: of }) => {
          await writer.set(key, String(t), 'PX', ttlMs).catch(() => undefined);
          for (const replica of of) readBack(replica, key);
        }),
      );
    } else {
      const key = heartbeatKey(processId, 'standalone');
      await writer.set(key, String(t), 'PX', ttlMs).catch(() => undefined);
      for (const replica of nodes) readBack(replica, key);
    }
  }

  /** Logs each replica that started or stopped taking reads, and wakes the waiters whose wait is over. */
  function review(): void {
    for (const name of names()) {
      const isFresh = fresh(name);
      if (wasFresh.get(name) === isFresh) continue;
      wasFresh.set(name, isFresh);
      const at = seen.get(name);
      if (isFresh) log?.info({ replica: name }, 'Redis replica is within REDIS_REPLICA_MAX_LAG_MS: reads go to it');
      else log?.warn({ replica: name, lagMs: at === undefined ? null : now() - at }, 'Redis replica lags or does not answer: its reads go to the master');
    }
    for (const waiter of waiters) if (caughtUpNow(waiter.since)) waiter.done();
  }

  /** Every replica known now, by host:port. */
  function names(): string[] {
    return Array.isArray(replicas) ? replicas.map(nodeName) : replicas.nodes('slave').map(nodeName);
  }

  /** Whether a read `since` that time would go to a replica now: one node, any replica caught up; a Cluster, every one. */
  function caughtUpNow(since: number): boolean {
    const all = names();
    return Array.isArray(replicas) ? all.some((name) => fresh(name, since)) : all.length > 0 && all.every((name) => fresh(name, since));
  }

  function tick(): void {
    beating ??= beat()
      .catch((error: unknown) => log?.warn({ err: error }, 'Redis replica heartbeat failed'))
      .finally(() => {
        beating = undefined;
      });
    review();
  }

  const reads: Reads = async (read, readOptions = {}) => {
    const { since } = readOptions;
    if (Array.isArray(replicas)) {
      const candidates = replicas.filter((replica) => replica.status === 'ready' && fresh(nodeName(replica), since));
      if (candidates.length === 0) return read(writer, false);
      const replica = candidates[turn++ % candidates.length]!;
      try {
        return await read(replica, true);
      } catch (error) {
        seen.delete(nodeName(replica));
        log?.warn({ err: error, replica: nodeName(replica) }, 'a read failed on a Redis replica; read again on the master');
        return read(writer, false);
      }
    }
    if (since !== undefined && !caughtUpNow(since)) return read(writer, false);
    try {
      return await read(replicas, true);
    } catch (error) {
      log?.warn({ err: error }, 'a read failed on the Redis Cluster replicas; read again on the masters');
      return read(writer, false);
    }
  };

  return {
    /** The index's reads (see {@link Reads}). */
    reads,
    /**
     * Resolves once a read with `since` would go to a replica (see ReadOptions.since), or after
     * `maxLagMs` plus a heartbeat at most (the replicas that still lag are then skipped anyway, and
     * such a read goes to the master). O(1) a waiter per heartbeat.
     */
    caughtUp(since: number): Promise<void> {
      if (caughtUpNow(since) || timer === undefined) return Promise.resolve();
      return new Promise((resolve) => {
        const waiter = {
          since,
          done: () => {
            clearTimeout(limit);
            waiters.delete(waiter);
            resolve();
          },
        };
        const limit = setTimeout(waiter.done, maxLagMs + heartbeatMs);
        limit.unref();
        waiters.add(waiter);
      });
    },
    /** Each replica as the last heartbeat saw it. O(replicas). */
    states(): ReplicaState[] {
      return names().map((replica) => {
        const at = seen.get(replica);
        return { replica, lagMs: at === undefined ? null : Math.max(0, now() - at), fresh: fresh(replica) };
      });
    },
    /** Starts the heartbeats (the first at once). Idempotent. */
    start(): void {
      if (timer) return;
      tick();
      timer = setInterval(tick, heartbeatMs);
      timer.unref();
    },
    /** Stops the heartbeats and wakes every waiter; the clients are the caller's to close. */
    async stop(): Promise<void> {
      clearInterval(timer);
      timer = undefined;
      for (const waiter of waiters) waiter.done();
      await beating;
    },
  };
}

export type ReplicaReads = ReturnType<typeof createReplicaReads>;

export interface ReplicaSetup {
  /** One node's replicas (REDIS_REPLICA_URLS), or the Cluster whose replicas are read (REDIS_CLUSTER_NODES). */
  replicas: { urls: string[] } | { cluster: Exclude<RedisTarget, string>['cluster'] };
  keyPrefix?: string;
  maxLagMs?: number | undefined;
  heartbeatMs?: number | undefined;
  log?: Logger | undefined;
}

/**
 * Opens the replicas' clients (one per URL, or a Cluster client reading from replicas), starts the
 * heartbeats, and answers the replica reads with a close() that stops them and closes the clients.
 * A replica down at start is no error: it is skipped until it answers (its client reconnects by
 * itself). On a Cluster, the client's own connection must come up, as the writer's did. O(replicas).
 */
export async function openReplicaReads(writer: RedisClient, setup: ReplicaSetup): Promise<ReplicaReads & { close(): Promise<void> }> {
  const common = { keyPrefix: setup.keyPrefix ?? '' };
  let replicas: Redis[] | Cluster;
  let routing: ClusterReadRouting | undefined;
  if ('urls' in setup.replicas) {
    replicas = setup.replicas.urls.map((url) => createRedis(url, common));
    for (const replica of replicas) {
      // Its errors show in the heartbeats (and the log lines they make): no unhandled 'error' events.
      replica.on('error', () => undefined);
      replica.connect().catch(() => undefined);
    }
  } else {
    routing = replicaScaleReads();
    replicas = createRedisCluster(setup.replicas.cluster, { ...common, scaleReads: routing.scaleReads });
    replicas.on('error', () => undefined);
    await replicas.connect();
  }
  const reads = createReplicaReads({ writer, replicas, routing, maxLagMs: setup.maxLagMs, heartbeatMs: setup.heartbeatMs, log: setup.log });
  reads.start();
  return {
    ...reads,
    async close() {
      await reads.stop();
      const clients = Array.isArray(replicas) ? replicas : [replicas];
      await Promise.all(clients.map((client) => client.quit().catch(() => client.disconnect())));
    },
  };
}
