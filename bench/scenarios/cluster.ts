/**
 * The cluster run (`npm run bench -- cluster [--players 1000000]`): the standing (with and without
 * the name), open, top and submit-batch scenarios on a local Redis Cluster of three masters (no
 * replicas), started for the run and stopped after it whatever happens
 * (test/helpers/redis-cluster.ts), against the same players on a board of 1 shard and a board of
 * 8 shards, beside the same scenarios on the single Redis node measured in the same run, so the
 * price of the cluster and of scatter-gather is known.
 *
 * Its stores are its own: the database lb_bench_cluster (board `bench`, 1 shard, and `bench-s8`,
 * 8 shards, the same players and scores, seeded by bench/seed.ts) and the key prefix
 * `bench-cluster:` on both Redis targets. Both indexes are built fresh by each run (the cluster is
 * new; the single node's keys under the prefix are dropped first and last), so neither carries the
 * other's writes of an earlier run, and the shared Redis keeps no 10,000,000 members it is not using.
 *
 * Each (scenario, shards) gives one report in bench/results/cluster.jsonl: the service over HTTP
 * and the raw Redis operations on the cluster (on 8 shards: on one shard, and the scatter over
 * every shard) beside the service and the raw operations on the single node. Each row carries the
 * Redis CPU it used per request (per result for submit-batch): the per-shard cost the paper
 * estimate of bench/RESULTS.md ("Cluster") starts from.
 */
import { randomBytes } from 'node:crypto';
import { startRedisCluster } from '../../test/helpers/redis-cluster.js';
import { createRedis, deleteKeysUnder } from '../../src/redis.js';
import { alwaysWatched } from '../lib/cpu.js';
import { BOARD_ID, type BenchTarget, REDIS_URL } from '../lib/env.js';
import { type Report, type Row, publish } from '../lib/report.js';
import { seed } from '../seed.js';
import { type RunOptions, ratio } from './common.js';
import { runRead } from './reads.js';
import { runWrite } from './writes.js';

export const CLUSTER_SCENARIOS = ['standing', 'standing-named', 'open', 'top', 'submit-batch'] as const;
export type ClusterScenario = (typeof CLUSTER_SCENARIOS)[number];

/** The cluster run's own database and key prefix: the main bench's stay as they are. */
export const CLUSTER_DATABASE = 'lb_bench_cluster';
export const CLUSTER_KEY_PREFIX = 'bench-cluster:';
/** The sharded board, beside the one-shard board `bench`. */
export const SHARDED_BOARD_ID = 'bench-s8';
export const SHARDS = 8;
/** Masters of the local cluster; no replicas (the run measures, it does not fail over). */
export const MASTERS = 3;

export interface ClusterRunOptions {
  /** Players on each board. Default 1,000,000 (the bench board's). */
  players: number;
  /** Empty lb_bench_cluster first and seed it again. Default false. */
  force?: boolean | undefined;
  /** Which of {@link CLUSTER_SCENARIOS} to run. Default: every one. */
  only?: ClusterScenario[] | undefined;
}

/** The PID of a Redis server (INFO server), so its CPU use is reported; undefined when it cannot be asked. */
export async function redisPid(url: string): Promise<number | undefined> {
  const redis = createRedis(url);
  try {
    await redis.connect();
    return Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]) || undefined;
  } catch {
    return undefined;
  } finally {
    redis.disconnect();
  }
}

/** The names under which the masters' CPU is watched (bench/lib/cpu.ts alwaysWatched). */
const nodeName = (i: number) => `node${i + 1}`;

/** Cores the target's Redis used during a measurement: the single node's, or every master's. */
function redisCores(row: Row, cluster: boolean): number | undefined {
  if (!row.cpu) return undefined;
  if (!cluster) return row.cpu.redis;
  let cores = 0;
  for (let i = 0; i < MASTERS; i++) {
    const node = row.cpu[nodeName(i)];
    if (node === undefined) return undefined;
    cores += node;
  }
  return cores;
}

/**
 * A row of one target's report under the cluster report's name for it, with the Redis CPU per
 * request (per result: per unit of its value) in `extra`: cores ÷ (value a second) = seconds of
 * Redis CPU per unit, given in µs, and the units a second one fully busy core would serve.
 */
function labelled(row: Row, target: BenchTarget, role: Row['role']): Row {
  const cluster = typeof target.redis !== 'string';
  const cores = redisCores(row, cluster);
  const perUnitUs = cores !== undefined && row.value > 0 ? (cores / row.value) * 1e6 : undefined;
  return {
    ...row,
    name: `${target.label}: ${row.name}`,
    role,
    extra: {
      ...row.extra,
      ...(cores === undefined ? {} : { redisCores: Math.round(cores * 100) / 100 }),
      ...(perUnitUs === undefined ? {} : { redisCpuUsPerUnit: Math.round(perUnitUs * 10) / 10, unitsPerRedisCore: Math.round(1e6 / perUnitUs) }),
    },
  };
}

/** One scenario on one target: the service over HTTP and the raw Redis operations only. */
function measure(scenario: ClusterScenario, run: RunOptions, target: BenchTarget): Promise<Report> {
  const scoped: RunOptions = { ...run, target, targetOnly: true, profile: false };
  return scenario === 'submit-batch' ? runWrite(scenario, scoped) : runRead(scenario, scoped);
}

/** Stops the cluster on Ctrl-C too: its redis-servers are this process's children. */
function onInterrupt(stop: () => Promise<void>): () => void {
  const handler = () => {
    void stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

export async function runCluster(run: RunOptions, options: ClusterRunOptions): Promise<Report[]> {
  const say = (line: string) => console.log(`cluster: ${line}`);
  const { players } = options;
  const single: BenchTarget = {
    label: 'single node',
    database: CLUSTER_DATABASE,
    redis: REDIS_URL,
    keyPrefix: CLUSTER_KEY_PREFIX,
    boardId: BOARD_ID,
    shards: 1,
    players,
  };
  const dropSingleNodeKeys = () => deleteKeysUnder(REDIS_URL, CLUSTER_KEY_PREFIX, { commandTimeoutMs: 60_000 });

  say(`starting a local Redis Cluster of ${MASTERS} masters, no replicas`);
  // A node busy for longer than the node timeout is taken for failed, and with no replica the
  // cluster goes down: the raw writes' COPY of a 1,000,000-member key blocks a node for seconds.
  const fixture = await startRedisCluster({ masters: MASTERS, replicasPerMaster: 0, nodeTimeoutMs: 30_000 });
  let stopped = false;
  const stopCluster = async () => {
    if (stopped) return;
    stopped = true;
    await fixture.stop();
  };
  const stopListening = onInterrupt(stopCluster);
  const reports: Report[] = [];
  try {
    say(`masters: ${fixture.nodesSetting}`);
    const pids = await Promise.all(fixture.masters.map(({ host, port }) => redisPid(`redis://${host}:${port}`)));
    pids.forEach((pid, i) => (alwaysWatched[nodeName(i)] = pid));
    const clustered: BenchTarget = { ...single, label: 'cluster, 1 shard', redis: { cluster: fixture.masters } };
    const sharded: BenchTarget = { ...clustered, label: `cluster, ${SHARDS} shards`, boardId: SHARDED_BOARD_ID, shards: SHARDS };
    const targets = [single, clustered, sharded];

    // Both boards into PostgreSQL and both indexes (see the file's header for why they start empty).
    await dropSingleNodeKeys();
    const seedSay = (line: string) => console.log(`seed: ${line}`);
    await seed({ target: single, force: options.force ?? false, say: seedSay });
    await seed({ target: { ...single, boardId: SHARDED_BOARD_ID, shards: SHARDS }, say: seedSay });
    await seed({ target: clustered, say: seedSay });
    await seed({ target: sharded, say: seedSay });

    const runId = randomBytes(4).toString('hex');
    for (const scenario of options.only ?? CLUSTER_SCENARIOS) {
      const measured = new Map<BenchTarget, Report>();
      for (const target of targets) {
        console.log(`\n>> cluster: ${scenario} on ${target.label}`);
        measured.set(target, await measure(scenario, run, target));
      }
      const onSingle = measured.get(single)!;
      for (const target of [clustered, sharded]) {
        const onCluster = measured.get(target)!;
        const service = (report: Report) => report.rows.find((row) => row.role === 'service')!;
        const raws = (report: Report) => report.rows.filter((row) => row.role === 'baseline');
        const [singleRaw] = raws(onSingle);
        const clusterRaws = raws(onCluster);
        const ratios: Record<string, number> = { [`service: ${target.label} / single node`]: ratio(service(onCluster).value, service(onSingle).value) };
        if (target.shards === 1) ratios['raw: cluster / single node'] = ratio(clusterRaws[0]!.value, singleRaw!.value);
        else if (clusterRaws.length === 1)
          ratios[`raw with the scatter over ${SHARDS} shards: cluster / single node, one key`] = ratio(clusterRaws[0]!.value, singleRaw!.value);
        else {
          // Reads: the one-shard cost, then the scatter over every shard.
          ratios['raw on one shard: cluster / single node'] = ratio(clusterRaws[0]!.value, singleRaw!.value);
          ratios[`raw scatter over ${SHARDS} shards / raw on one shard, cluster`] = ratio(clusterRaws[1]!.value, clusterRaws[0]!.value);
          ratios[`raw scatter over ${SHARDS} shards, cluster / single node, one key`] = ratio(clusterRaws[1]!.value, singleRaw!.value);
        }
        const report: Report = {
          scenario: 'cluster',
          params: {
            scenario,
            shards: target.shards,
            masters: MASTERS,
            replicas: 0,
            players,
            run: runId,
            seconds: run.seconds,
            warmup: run.warmup,
            connections: run.connections,
            runtime: run.runtime,
          },
          rows: [
            ...onCluster.rows.map((row) => labelled(row, target, row.role)),
            // The single node's figures of the same run: what the cluster is compared with.
            ...onSingle.rows.map((row) => labelled(row, single, 'baseline')),
          ],
          ratios,
          notes: [
            `one database (${CLUSTER_DATABASE}) and the same players and scores for every target; board ${target.boardId} has ${target.shards} shard${target.shards === 1 ? '' : 's'}`,
            'extra.redisCpuUsPerUnit: Redis CPU (single node: its process; cluster: the masters together) per request, or per result for submit-batch; unitsPerRedisCore: what one busy Redis core would serve at that cost',
            ...(onCluster.notes ?? []),
          ],
        };
        for (const row of report.rows) {
          const perUnit = row.extra?.redisCpuUsPerUnit;
          if (typeof perUnit === 'number') report.notes!.push(`Redis CPU: ${perUnit} µs per ${row.unit === 'results/s' ? 'result' : 'request'}, ${row.name}`);
        }
        publish(report);
        reports.push(report);
      }
    }
  } finally {
    stopListening();
    for (let i = 0; i < MASTERS; i++) delete alwaysWatched[nodeName(i)];
    await stopCluster();
    await dropSingleNodeKeys().catch((error: unknown) => say(`could not drop the single node's keys under ${CLUSTER_KEY_PREFIX}: ${String(error)}`));
    say('the cluster is stopped');
  }
  return reports;
}
