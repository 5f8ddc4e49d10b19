import { randomUUID } from 'node:crypto';
import calculateSlot from 'cluster-key-slot';
import { type RedisClient, isCluster } from '../redis.js';
import type { RankingIndex } from './index.js';
import { type BoardBucket, bucketKey, indexKeys } from './keys.js';
import { dropUnbackedBuckets } from './unbacked.js';
import type { SourceMark } from '../model/source-mark.js';

/**
 * The index's generation: how a process tells that Redis lost the index, or the part of it one
 * node held (a restart without persistence, a failover, a flush), and which buckets may be read
 * meanwhile.
 *
 * Each master keeps a marker of its own (one node: one marker): a hash `lb:{generation:v2:<n>}`
 * whose hash tag falls in that master's slots, holding a random generation id and the id of the
 * node that set it (CLUSTER MYID; empty on a node without cluster support), never set to expire.
 * The marker says "this node still holds what was written to it":
 * - a master without its marker has lost everything with it (restarted empty, flushed);
 * - a marker set by another node means a replica took over: replication is asynchronous, so the
 *   last writes acknowledged by the old master may be missing.
 * Either way the first process to see it sets a new generation there together with that node's
 * pending set (`<marker>:<generation>:pending`) holding '*', "every bucket with a key on this node
 * is to be rebuilt", in one atomic step (see check-generation.ts). One process then plans the
 * recovery, replacing '*' with the live buckets PostgreSQL holds board scores for whose keys hash
 * into that node's slots (plan-recovery.ts), and removes each from the set once its rebuild is
 * swapped in. Every process reads the same sets, so each learns when a bucket is back, whoever
 * rebuilt it, and the buckets of the other nodes stay readable throughout.
 *
 * This process's state, per master:
 * - `unverified`: the connection to it dropped (or was never made) and its marker has not been
 *   read since. It may have come back empty, so no read of a bucket with a key there is trusted.
 * - `ready`: the marker is the one known and no recovery is pending: reads cost nothing extra.
 * - `recovering`: a recovery is under way there: a bucket with a key there is read only once it is
 *   out of the pending set (one SMISMEMBER per read until the recovery ends).
 *
 * The `v2` is the key layout's version: a deployment upgraded from the layout before sharded
 * buckets (keys `lb:{board}:...`, marker `lb:{generation}`) finds no marker and rebuilds every
 * live bucket under the new keys. Moving slots between masters (resharding) can move a marker's
 * slot; the master then finds no marker of its own and its buckets are rebuilt: safe, not free.
 *
 * Run Redis with `maxmemory-policy noeviction` (the default): an evicted marker reads as a lost index.
 */
export type IndexState = 'unverified' | 'ready' | 'recovering';

/** The number of Redis Cluster hash slots. */
const SLOTS = 16_384;

/** The key layout's version, in every marker's name. */
const LAYOUT = 'v2';

/** Means "every bucket" in a pending set: the recovery is not planned yet. Never a bucket key. */
const EVERY_BUCKET = '*';

/** The hash slot of each candidate marker tag `generation:v2:<n>`, computed once per process as needed. */
const tagSlots: number[] = [];
const tagSlot = (n: number) => (tagSlots[n] ??= calculateSlot(`generation:${LAYOUT}:${n}`));

/**
 * The marker of the master serving `slots`: `lb:{generation:v2:<n>}` for the smallest n whose tag
 * hashes into them, so every process names the same one. O(16,384 / share of slots) the first
 * time, each tag's slot being kept.
 */
export function markerKey(slots: readonly (readonly [number, number])[]): string {
  if (slots.length === 0) throw new Error('a master without slots has no marker');
  for (let n = 0; ; n++) {
    const slot = tagSlot(n);
    if (slots.some(([from, to]) => from <= slot && slot <= to)) return `lb:{generation:${LAYOUT}:${n}}`;
  }
}

/** The pending set of a generation's recovery on one node; follows the marker's hash tag, so it shares its slot. */
export const pendingKey = (marker: string, generation: string) => `${marker}:${generation}:pending`;

/** A read of a bucket whose index is not known to be whole: answer UNAVAILABLE and retry later. */
export class IndexRecoveringError extends Error {
  constructor(readonly key: string) {
    super(`the ranking index of ${key} is not known to be whole yet (Redis came back, or lost its data and it is being rebuilt)`);
    this.name = 'IndexRecoveringError';
  }
}

/** A master of the index's Redis (the node itself, on one node), as this process last read it. */
export interface IndexNode {
  /** `host:port` as the client reaches it (`node` on one node). */
  address: string;
  /** The hash slots it serves, as inclusive ranges (all of them on one node). */
  slots: [number, number][];
  /** Its generation marker's key. */
  marker: string;
  state: IndexState;
  /** The generation in force there as last read; null while it could not be read. */
  generation: string | null;
}

/** What a reading of one master's marker found. */
export interface GenerationCheck {
  address: string;
  slots: [number, number][];
  marker: string;
  generation: string;
  /** Some bucket with a key on this node is still to be rebuilt. */
  recovering: boolean;
  /**
   * Why this call set a new generation there: `empty` (no marker: the node lost its data, or never
   * held an index), `failed-over` (the marker was set by another node: a replica took over),
   * `restored` (the system of record went back: restored from a backup, or another database), or
   * null when the generation was in force already.
   */
  claimed: 'empty' | 'failed-over' | 'restored' | null;
}

const CLAIMS = [null, 'empty', 'failed-over', 'restored'] as const;

/**
 * How many times a node's marker is read for one check when it holds another generation each
 * time than the one named: once a generation is found it is named, so a second read only misses
 * when another process set one in between.
 */
const MAX_CHECK_ATTEMPTS = 4;

export type IndexGeneration = ReturnType<typeof createIndexGeneration>;

/** The masters and their slots: from CLUSTER SLOTS on a Cluster, the node itself with every slot otherwise. O(ranges). */
async function readTopology(redis: RedisClient): Promise<{ address: string; slots: [number, number][] }[]> {
  if (!isCluster(redis)) return [{ address: 'node', slots: [[0, SLOTS - 1]] }];
  const masters = new Map<string, [number, number][]>();
  // CLUSTER SLOTS: [first, last, master, ...replicas] per slot range, each node [host, port, id, ...].
  for (const [from, to, master] of await redis.cluster('SLOTS')) {
    if (!master) continue;
    const address = `${master[0]}:${master[1]}`;
    masters.set(address, [...(masters.get(address) ?? []), [from, to]]);
  }
  return [...masters].map(([address, slots]) => ({ address, slots: slots.sort((a, b) => a[0] - b[0]) }));
}

/** The generation as this process sees it, per master; every master `unverified` until {@link IndexGeneration.check} first answers. */
export function createIndexGeneration(redis: RedisClient) {
  let nodes: IndexNode[] = [];
  /** Each slot's master in `nodes`; undefined where no master is known. */
  let owners: (IndexNode | undefined)[] = [];
  let checking: Promise<GenerationCheck[]> | undefined;
  /** Connections lost while a check was under way ('*': all): its answers may predate the loss. */
  const lostWhileChecking = new Set<string>();

  function distrust(address: string): void {
    for (const node of nodes) if (address === '*' || node.address === address) node.state = 'unverified';
    if (checking) lostWhileChecking.add(address);
  }
  // Whatever answers after a reconnect may be an empty Redis: nothing is trusted until checked.
  redis.on('close', () => distrust('*'));
  // On a Cluster, one master's connection ending (it died, or failed over) distrusts that master alone.
  if (isCluster(redis)) redis.on('-node', (_node: unknown, address: string) => distrust(address));

  /** The masters holding a bucket's keys (every shard's, and a DENSE board's counts); undefined for a key whose master is not known. O(shards). */
  function holders(at: BoardBucket): (IndexNode | undefined)[] {
    return [...new Set(indexKeys(at).map((key) => owners[calculateSlot(key)]))];
  }

  /** Whether each bucket may be missing entries: one SMISMEMBER per recovering master involved. O(k · shards). */
  async function pendingAmong(at: BoardBucket[]): Promise<boolean[]> {
    const pending = at.map(() => false);
    if (nodes.length > 0 && nodes.every((node) => node.state === 'ready')) return pending;
    const asks = new Map<IndexNode, number[]>();
    at.forEach((bucket, i) => {
      for (const node of holders(bucket)) {
        if (node === undefined || node.state === 'unverified' || node.generation === null) pending[i] = true;
        else if (node.state === 'recovering') {
          const indexes = asks.get(node) ?? [];
          indexes.push(i);
          asks.set(node, indexes);
        }
      }
    });
    await Promise.all(
      [...asks].map(async ([node, indexes]) => {
        const [all, ...found] = await redis.smismember(pendingKey(node.marker, node.generation!), EVERY_BUCKET, ...indexes.map((i) => bucketKey(at[i]!)));
        indexes.forEach((i, j) => {
          if (all === 1 || found[j] === 1) pending[i] = true;
        });
      }),
    );
    return pending;
  }

  /** The master a check was made on, as this process knows it now, when its generation is still the one checked. */
  const current = (check: GenerationCheck) => nodes.find((node) => node.marker === check.marker && node.generation === check.generation);

  /** Whether a bucket has a key in a master's slots (a DENSE board's counts included). O(shards · ranges). */
  const holdsKeyOf = (slots: [number, number][], at: BoardBucket) =>
    indexKeys(at).some((key) => {
      const slot = calculateSlot(key);
      return slots.some(([from, to]) => from <= slot && slot <= to);
    });

  return {
    /**
     * This process's view over every master: `unverified` when any is (or none is known yet),
     * else `recovering` when any is, else `ready`. O(masters).
     */
    state(): IndexState {
      if (nodes.length === 0 || nodes.some((node) => node.state === 'unverified')) return 'unverified';
      return nodes.some((node) => node.state === 'recovering') ? 'recovering' : 'ready';
    },

    /** Every master as last read (copies). O(masters). */
    nodes(): IndexNode[] {
      return nodes.map((node) => ({ ...node, slots: [...node.slots] }));
    },

    /**
     * Reads the masters (CLUSTER SLOTS on a Cluster) and each one's marker (setting a new
     * generation where it is missing, was set by another node, or the system of record's `source`
     * mark says it went back since the marker's) and whether a recovery is
     * pending there, and updates this process's state from it. A master that does not answer is
     * left `unverified` and out of the answer. Concurrent calls share one read. Throws when the
     * masters cannot be listed. O(masters).
     */
    check(source?: SourceMark): Promise<GenerationCheck[]> {
      const mark = source ? [source.identity, String(source.lsn), String(source.writes), String(source.at)] : [''];
      checking ??= (async () => {
        try {
          const topology = await readTopology(redis);
          const read = await Promise.allSettled(
            topology.map(async ({ address, slots }): Promise<GenerationCheck> => {
              const marker = markerKey(slots);
              // The generation last read here is named, with its pending set, so that the script
              // declares every key it touches; a marker found holding another is asked again.
              let expected = nodes.find((node) => node.marker === marker)?.generation ?? '';
              for (let attempt = 1; ; attempt++) {
                const fresh = randomUUID();
                const [generation, recovering, claimed] = await redis.checkGeneration(
                  marker,
                  pendingKey(marker, expected),
                  pendingKey(marker, fresh),
                  fresh,
                  expected,
                  ...mark,
                );
                if (recovering !== -1 && generation !== null)
                  return { address, slots, marker, generation, recovering: recovering === 1, claimed: CLAIMS[claimed] };
                if (attempt === MAX_CHECK_ATTEMPTS) throw new Error(`the generation marker ${marker} kept changing while it was checked`);
                expected = generation ?? '';
              }
            }),
          );
          nodes = topology.map(({ address, slots }, i) => {
            const found = read[i]!;
            if (found.status === 'rejected') return { address, slots, marker: markerKey(slots), state: 'unverified', generation: null };
            const { marker, generation, recovering } = found.value;
            return { address, slots, marker, state: recovering ? 'recovering' : 'ready', generation };
          });
          for (const node of nodes) if (lostWhileChecking.has('*') || lostWhileChecking.has(node.address)) node.state = 'unverified';
          owners = new Array<IndexNode | undefined>(SLOTS);
          for (const node of nodes) for (const [from, to] of node.slots) owners.fill(node, from, to + 1);
          return read.flatMap((found) => (found.status === 'fulfilled' ? [found.value] : []));
        } finally {
          checking = undefined;
          lostWhileChecking.clear();
        }
      })();
      return checking;
    },

    /** Whether a master's generation is still the one a check found. O(masters). */
    isCurrent(check: GenerationCheck): boolean {
      return current(check) !== undefined;
    },

    /**
     * Plans a master's recovery: of `buckets` (those PostgreSQL holds board scores for now), the
     * ones with a key in its slots. Answers the bucket keys still pending there (see
     * plan-recovery.ts). O(P + B · shards).
     */
    async plan(check: GenerationCheck, buckets: BoardBucket[]): Promise<Set<string>> {
      const mine = buckets.filter((at) => holdsKeyOf(check.slots, at)).map(bucketKey);
      const pending = await redis.planRecovery(pendingKey(check.marker, check.generation), ...mine);
      const node = current(check);
      if (pending.length === 0 && node?.state === 'recovering') node.state = 'ready';
      return new Set(pending);
    },

    /** Marks a bucket rebuilt in a master's recovery: readable everywhere from now on (once no other master holds it back). O(1). */
    async rebuilt(check: GenerationCheck, at: BoardBucket): Promise<void> {
      const pending = pendingKey(check.marker, check.generation);
      await redis.srem(pending, bucketKey(at));
      const left = await redis.scard(pending);
      const node = current(check);
      if (left === 0 && node?.state === 'recovering') node.state = 'ready';
    },

    /**
     * After the system of record went back (a `restored` claim), unlinks the bucket sorted sets on
     * the master at `address` that none of `backed` names: see unbacked.ts. O(keys there).
     */
    dropUnbacked(address: string, backed: BoardBucket[]): Promise<number> {
      return dropUnbackedBuckets(redis, address, backed);
    },

    /** Calls `listener` each time the connection is ready again (after a reconnect, or a Cluster's slots change); answers how to stop. */
    onReconnect(listener: () => void): () => void {
      redis.on('ready', listener);
      if (isCluster(redis)) redis.on('+node', listener);
      return () => {
        redis.off('ready', listener);
        redis.off('+node', listener);
      };
    },

    /** Calls `listener` with each connection error (ioredis reconnects by itself); answers how to stop. */
    onConnectionError(listener: (error: Error) => void): () => void {
      redis.on('error', listener);
      if (isCluster(redis)) redis.on('node error', listener);
      return () => {
        redis.off('error', listener);
        redis.off('node error', listener);
      };
    },

    /** Throws {@link IndexRecoveringError} unless every key of the bucket can be trusted. O(shards) when ready. */
    async assertReadable(at: BoardBucket): Promise<void> {
      const [pending] = await pendingAmong([at]);
      if (pending) throw new IndexRecoveringError(bucketKey(at));
    },

    /** Whether each bucket's sorted sets can be trusted; false for all when that cannot be asked. O(k · shards). */
    async readable(at: BoardBucket[]): Promise<boolean[]> {
      try {
        return (await pendingAmong(at)).map((pending) => !pending);
      } catch {
        return at.map(() => false);
      }
    },
  };
}

/**
 * What each method of the index does to the trust a read needs, so that guardReads can guard every
 * read by construction: a method added to the index does not compile until it is named here.
 * `read`: answers from one bucket's sorted sets (its first argument), refused for a bucket that
 * cannot be trusted yet. `write`: writes, and reads back places, dropped for such a bucket.
 * `unguarded`: removals, drops, rebuilds and channels, which go through unchanged (a write into a
 * bucket about to be rebuilt is carried by the rebuild, see rebuild.ts).
 */
export const INDEX_METHOD_ROLES = {
  top: 'read',
  standings: 'read',
  standingsNamed: 'read',
  around: 'read',
  arounds: 'read',
  aroundsNamed: 'read',
  page: 'read',
  pageBefore: 'read',
  pageFrom: 'read',
  size: 'read',
  countBetter: 'read',
  countDistinctBetter: 'read',
  distinctHolders: 'read',
  scoreBins: 'read',
  writeBoardScores: 'write',
  removePlayer: 'unguarded',
  scanShard: 'read',
  removeInactive: 'unguarded',
  drop: 'unguarded',
  topChannels: 'unguarded',
  announceTopChanged: 'unguarded',
  leagueChannel: 'unguarded',
  announceLeague: 'unguarded',
  overtakenChannel: 'unguarded',
  announceOvertaken: 'unguarded',
  overtakenListeners: 'unguarded',
  rebuild: 'unguarded',
} as const satisfies Record<keyof RankingIndex, 'read' | 'write' | 'unguarded'>;

type ReadMethod = { [K in keyof typeof INDEX_METHOD_ROLES]: (typeof INDEX_METHOD_ROLES)[K] extends 'read' ? K : never }[keyof typeof INDEX_METHOD_ROLES];

/**
 * The index with every read refused (IndexRecoveringError) for a bucket that cannot be trusted
 * yet, and every place a write reads back dropped for such a bucket: an empty or half-rebuilt
 * sorted set must never answer a wrong rank. See {@link INDEX_METHOD_ROLES}. Costs nothing while
 * every master is ready.
 */
export function guardReads(index: RankingIndex, generation: IndexGeneration): RankingIndex {
  const guarded: RankingIndex = {
    ...index,
    async writeBoardScores(writes) {
      const written = await index.writeBoardScores(writes);
      const readable = await generation.readable(writes.map((write) => write.at));
      return written.map((result, i) => (readable[i] ? result : { ...result, place: null }));
    },
  };
  // Every read takes its bucket first; the roles' type names exactly the methods wrapped here.
  type Read = (at: BoardBucket, ...rest: unknown[]) => Promise<unknown>;
  const reads = index as unknown as Record<ReadMethod, Read>;
  const guardedReads = guarded as unknown as Record<ReadMethod, Read>;
  for (const method of Object.keys(INDEX_METHOD_ROLES) as (keyof typeof INDEX_METHOD_ROLES)[]) {
    if (INDEX_METHOD_ROLES[method] !== 'read') continue;
    const read = method as ReadMethod;
    guardedReads[read] = async (at, ...rest) => {
      await generation.assertReadable(at);
      return reads[read](at, ...rest);
    };
  }
  return guarded;
}
