import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { freePort } from './ports.js';
import { until } from './wait.js';

const run = promisify(execFile);

/** Where a node of the fixture listens. */
export interface ClusterAddress {
  host: string;
  port: number;
}

/** One node as CLUSTER NODES describes it now. */
export interface ClusterNodeState extends ClusterAddress {
  /** The node's id (CLUSTER MYID). */
  id: string;
  role: 'master' | 'replica';
  /** The id of the master a replica follows; null for a master. */
  masterId: string | null;
  /** The slot ranges a master serves, inclusive; empty for a replica. */
  slots: [number, number][];
}

export interface RedisClusterOptions {
  /** Masters, each serving an equal share of the 16,384 slots. Default 3. */
  masters?: number;
  /** Replicas of each master. Default 1. */
  replicasPerMaster?: number;
  /**
   * cluster-node-timeout: how long a master may not answer before its replica takes over. Default
   * 1,000 ms, so that a failover test waits a second or two, not fifteen.
   */
  nodeTimeoutMs?: number;
}

export interface RedisClusterFixture {
  /** Every node's address, the masters (as created) first, then the replicas. */
  nodes: ClusterAddress[];
  /** The masters' addresses as created (a failover changes who is master: see {@link RedisClusterFixture.state}). */
  masters: ClusterAddress[];
  /** `host:port,...` of every node, the form REDIS_CLUSTER_NODES takes. */
  nodesSetting: string;
  /** Every live node as the cluster describes it now, masters first. */
  state(): Promise<ClusterNodeState[]>;
  /**
   * Kills (SIGKILL) the node serving `slot` as master and waits until one of its replicas is
   * promoted and every live node says the cluster is whole again. Answers the killed and the
   * promoted node. Needs replicasPerMaster ≥ 1.
   */
  failOverSlot(slot: number): Promise<{ killed: ClusterNodeState; promoted: ClusterNodeState }>;
  /**
   * Kills the node serving `slot` as master and starts it again at once on the same address with
   * its cluster configuration but no data: what a master restarted without persistence gives. It
   * comes back as the master of the same slots, empty. Waits until the cluster is whole. Meant for a
   * cluster without replicas (a replica could otherwise win a failover while the master is down).
   */
  restartMasterEmpty(slot: number): Promise<ClusterNodeState>;
  /** Kills (SIGKILL) one node and waits for it to be gone; nothing takes its place unless a replica of it fails over. */
  kill(address: ClusterAddress): Promise<void>;
  /**
   * Starts a killed node again, empty but with its cluster configuration: a master whose slots
   * nobody took over comes back their master; one whose replica took over rejoins as a replica.
   * Waits until the cluster is whole.
   */
  restart(address: ClusterAddress): Promise<void>;
  /** Waits until every live node says `cluster_state:ok` and every slot is served by a live master. */
  whole(): Promise<void>;
  /** Kills every node and removes the fixture's directory. */
  stop(): Promise<void>;
}

const SLOTS = 16_384;
const WAIT_MS = 30_000;

/** A short-lived client of one node: it never retries, so a dead node answers at once. */
async function withNode<T>({ host, port }: ClusterAddress, use: (node: Redis) => Promise<T>): Promise<T> {
  const node = new Redis({
    host,
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    connectTimeout: 1_000,
  });
  node.on('error', () => {});
  try {
    await node.connect();
    return await use(node);
  } finally {
    node.disconnect();
  }
}

async function answers(address: ClusterAddress): Promise<boolean> {
  return withNode(address, async (node) => (await node.ping()) === 'PONG').catch(() => false);
}

/** Parses CLUSTER NODES (one line a node: id addr flags master ping pong epoch link slots...). */
function parseNodes(text: string): ClusterNodeState[] {
  const out: ClusterNodeState[] = [];
  for (const line of text.trim().split('\n')) {
    const [id, addr, flags, master, , , , link, ...slotFields] = line.split(' ');
    if (!id || !addr || !flags || flags.includes('fail') || flags.includes('noaddr') || link !== 'connected') continue;
    const [hostPort] = addr.split('@');
    const colon = hostPort!.lastIndexOf(':');
    const isMaster = flags.includes('master');
    out.push({
      id,
      host: hostPort!.slice(0, colon),
      port: Number(hostPort!.slice(colon + 1)),
      role: isMaster ? 'master' : 'replica',
      masterId: isMaster || master === '-' ? null : master!,
      // Ranges only: a migrating slot ([slot->-id]) is never in the fixture's clusters.
      slots: isMaster
        ? slotFields
            .filter((field) => !field.startsWith('['))
            .map((field) => {
              const [from, to] = field.split('-').map(Number);
              return [from!, to ?? from!] as [number, number];
            })
        : [],
    });
  }
  // Masters in slot order, then replicas.
  const firstSlot = (node: ClusterNodeState) => node.slots[0]?.[0] ?? SLOTS;
  return out.sort((a, b) => Number(a.role === 'replica') - Number(b.role === 'replica') || firstSlot(a) - firstSlot(b) || a.port - b.port);
}

/**
 * A Redis Cluster of the test's own: `masters` redis-server processes (plus `replicasPerMaster`
 * replicas each) on free ports of 127.0.0.1, without persistence, in a temporary directory, joined
 * with `redis-cli --cluster create`. Resolves once every node says the cluster is whole. Needs only
 * the redis-server and redis-cli binaries (Redis 7: cluster-port is set, so no bus port +10000 has
 * to be free). Call stop() in teardown.
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisClusterFixture> {
  const masterCount = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 1;
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1_000;
  if (masterCount < 3) throw new Error('redis-cli --cluster create needs at least 3 masters');
  const dir = await mkdtemp(join(tmpdir(), 'lb-cluster-'));
  const children = new Map<number, ChildProcess>();
  const buses = new Map<number, number>();
  const nodes: ClusterAddress[] = [];
  // Every port drawn for this cluster: none is bound until its server starts, so a draw may give
  // one drawn before (a node's port twice, and the second server exits).
  const drawn = new Set<number>();
  const drawPort = async () => {
    let port = await freePort();
    while (drawn.has(port)) port = await freePort();
    drawn.add(port);
    return port;
  };
  for (let i = 0; i < masterCount * (1 + replicas); i++) {
    const port = await drawPort();
    buses.set(port, await drawPort());
    nodes.push({ host: '127.0.0.1', port });
  }

  async function start({ port }: ClusterAddress): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--cluster-port',
        String(buses.get(port)),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout',
        String(nodeTimeoutMs),
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
      ],
      { stdio: 'ignore' },
    );
    children.set(port, child);
    const started = child;
    await until(
      async () => {
        if (started.exitCode !== null) throw new Error(`redis-server on port ${port} exited (${started.exitCode})`);
        return answers({ host: '127.0.0.1', port });
      },
      WAIT_MS,
      `redis-server on port ${port} answering`,
      50,
    );
  }

  async function kill({ port }: ClusterAddress): Promise<void> {
    const child = children.get(port);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }

  const live = () =>
    nodes.filter(({ port }) => {
      const child = children.get(port);
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    });

  async function state(): Promise<ClusterNodeState[]> {
    for (const address of live()) {
      try {
        return parseNodes(await withNode(address, (node) => node.cluster('NODES') as Promise<string>));
      } catch {
        // Try the next node.
      }
    }
    throw new Error('no node of the cluster answers');
  }

  /**
   * Why the cluster is not whole yet (a node that does not answer, a state not ok, slots not all
   * served, a replica's link down, nodes that disagree on the members or the masters), or null
   * when every live node is ok, agrees on the masters, every slot is served, and every replica is in sync.
   */
  async function notWhole(): Promise<string | null> {
    const addresses = live();
    const views = await Promise.all(
      addresses.map((address) =>
        withNode(address, async (node) => {
          const info = await node.cluster('INFO');
          const replication = await node.info('replication');
          return { info, replication, nodes: parseNodes((await node.cluster('NODES')) as string) };
        }).catch(() => null),
      ),
    );
    for (const [i, view] of views.entries()) {
      const at = `${addresses[i]!.host}:${addresses[i]!.port}`;
      if (view === null) return `${at} does not answer`;
      if (!/cluster_state:ok/.test(view.info) || !new RegExp(`cluster_slots_ok:${SLOTS}\\b`).test(view.info))
        return `${at}: ${view.info.match(/cluster_state:\w+/)?.[0]}, ${view.info.match(/cluster_slots_ok:\d+/)?.[0]}`;
      if (/role:slave/.test(view.replication) && !/master_link_status:up/.test(view.replication)) return `${at}: a replica whose link to its master is down`;
      if (view.nodes.length !== addresses.length) return `${at} knows ${view.nodes.length} nodes of ${addresses.length}`;
      const covered = view.nodes.reduce((sum, node) => sum + node.slots.reduce((n, [from, to]) => n + to - from + 1, 0), 0);
      if (covered !== SLOTS) return `${at} sees ${covered} slots served`;
    }
    const masters = (view: (typeof views)[number] | undefined) =>
      view!.nodes
        .filter((node) => node.role === 'master')
        .map((node) => node.id)
        .sort()
        .join();
    return views.every((view) => masters(view) === masters(views[0])) ? null : 'the nodes disagree on the masters';
  }

  async function whole(): Promise<void> {
    let why: string | null = 'not checked yet';
    // What was still missing at the last check, so that a failure says why.
    await until(
      async () => (why = await notWhole()) === null,
      WAIT_MS,
      () => `the Redis Cluster whole (last check: ${why})`,
    );
  }

  const masterOf = async (slot: number) => {
    const master = (await state()).find((node) => node.role === 'master' && node.slots.some(([from, to]) => from <= slot && slot <= to));
    if (!master) throw new Error(`no master serves slot ${slot}`);
    return master;
  };

  /**
   * Starts node `i` for the first time. Why the retries: a port drawn free may be bound by another
   * test file's server before this one binds it (files run in parallel, each drawing ports), and the
   * server then exits at once (CI, 2026-12-05: "redis-server on port 30150 exited (1)"); the node
   * takes two other ports then. Nothing knows its address yet.
   */
  async function startFirst(i: number): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const node = nodes[i]!;
      try {
        return await start(node);
      } catch (error) {
        if (attempt === 3 || children.get(node.port)?.exitCode === null) throw error;
        buses.delete(node.port);
        const port = await drawPort();
        buses.set(port, await drawPort());
        nodes[i] = { host: node.host, port };
      }
    }
  }

  try {
    await Promise.all(nodes.map((_, i) => startFirst(i)));
    await run(
      'redis-cli',
      ['--cluster', 'create', ...nodes.map(({ host, port }) => `${host}:${port}`), '--cluster-replicas', String(replicas), '--cluster-yes'],
      { timeout: WAIT_MS },
    );
    await whole();
  } catch (error) {
    await Promise.all(nodes.map(kill));
    await rm(dir, { recursive: true, force: true });
    throw error;
  }

  // redis-cli makes the first `masters` nodes of its list the masters.
  const created = await state();
  const masters = created.filter((node) => node.role === 'master').map(({ host, port }) => ({ host, port }));
  const ordered = [...masters, ...nodes.filter(({ port }) => !masters.some((master) => master.port === port))];

  return {
    nodes: ordered,
    masters,
    nodesSetting: ordered.map(({ host, port }) => `${host}:${port}`).join(','),
    state,
    whole,
    async failOverSlot(slot) {
      const killed = await masterOf(slot);
      if (!(await state()).some((node) => node.masterId === killed.id)) throw new Error(`the master of slot ${slot} has no replica to fail over to`);
      await kill(killed);
      let promoted: ClusterNodeState | null = null;
      await until(
        async () => {
          promoted = await masterOf(slot).catch(() => null);
          return promoted !== null && promoted.id !== killed.id && (await notWhole()) === null;
        },
        WAIT_MS,
        `a replica taking over slot ${slot}`,
      );
      return { killed, promoted: promoted! };
    },
    async restartMasterEmpty(slot) {
      const master = await masterOf(slot);
      await kill(master);
      await start(master);
      await whole();
      const back = await masterOf(slot);
      if (back.id !== master.id) throw new Error(`slot ${slot} failed over while its master restarted`);
      return back;
    },
    kill,
    async restart(address) {
      await start(address);
      await whole();
    },
    async stop() {
      await Promise.all(nodes.map(kill));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * For a test file whose Redis Cluster tests follow its one-node ones: starts the cluster in the
 * file's beforeAll, so that it comes up while the one-node tests run (most of a start is waiting
 * for the nodes to agree), and stops it in the file's afterAll. Call it at the file's top level;
 * the cluster tests await `started()`, and so report a failed start (meanwhile it is no unhandled
 * rejection).
 */
export function startRedisClusterEarly(options: RedisClusterOptions = {}): { started(): Promise<RedisClusterFixture> } {
  let starting: Promise<RedisClusterFixture> | undefined;
  beforeAll(() => {
    starting = startRedisCluster(options);
    starting.catch(() => undefined);
  });
  afterAll(async () => {
    await (await starting?.catch(() => undefined))?.stop();
  });
  return {
    started: () => starting ?? Promise.reject(new Error("the cluster is started in the file's beforeAll: call started() from a hook or a test")),
  };
}
