/**
 * The replica run (`npm run bench -- replicas [--players 100000]`): the `standing` and `top` read
 * scenarios on a Redis node of the run's own with a read replica of it (both redis-servers started
 * for the run and stopped after it, test/helpers/redis-server.ts), once with every read on the
 * node (no REDIS_REPLICA_URLS) and once with REDIS_REPLICA_URLS naming the replica, the same
 * players and connections. Each report gives requests/s and the commands each server ran during
 * the measurement (INFO commandstats before and after): the read scripts and the commands of every
 * kind, per server and per request, so where the reads went is seen.
 *
 * Its stores are its own: the database lb_bench_replicas (board `bench`, seeded by bench/seed.ts
 * into the run's node, which the replica copies) and the key prefix `bench-replicas:`. The shared
 * Redis is not touched.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { type OwnRedis, startOwnRedis } from '../../test/helpers/redis-server.js';
import { BOARD_ID, type BenchTarget } from '../lib/env.js';
import { type Report, publish, row } from '../lib/report.js';
import { seed } from '../seed.js';
import { graphqlBody } from '../lib/clients.js';
import { type RunOptions, closedHttp, withService } from './common.js';
import { SPECS } from './reads.js';

export const REPLICA_SCENARIOS = ['standing', 'top'] as const;
export const REPLICAS_DATABASE = 'lb_bench_replicas';
export const REPLICAS_KEY_PREFIX = 'bench-replicas:';

/** What a server ran so far: script calls (EVAL, EVALSHA) and commands of every kind. */
interface Counts {
  scripts: number;
  commands: number;
}

async function commandCounts(redis: Redis): Promise<Counts> {
  const stats = await redis.info('commandstats');
  let scripts = 0;
  let commands = 0;
  for (const [, name, calls] of stats.matchAll(/cmdstat_([a-z|_-]+):calls=(\d+)/g)) {
    commands += Number(calls);
    if (name === 'eval' || name === 'evalsha') scripts += Number(calls);
  }
  return { scripts, commands };
}

/** Waits until the replica's link is up and it has applied all its master has sent. */
async function inSync(master: Redis, replica: Redis): Promise<void> {
  for (;;) {
    const info = await replica.info('replication');
    const offset = Number(/slave_repl_offset:(\d+)/.exec(info)?.[1] ?? -1);
    const masterOffset = Number(/master_repl_offset:(\d+)/.exec(await master.info('replication'))?.[1] ?? -2);
    if (/master_link_status:up/.test(info) && offset === masterOffset) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export async function runReplicas(run: RunOptions, options: { players: number }): Promise<Report[]> {
  const say = (line: string) => console.log(`replicas: ${line}`);
  let master: OwnRedis | undefined;
  let replica: OwnRedis | undefined;
  const clients: Redis[] = [];
  const reports: Report[] = [];
  try {
    master = await startOwnRedis();
    replica = await startOwnRedis({ replicaOf: master.port });
    say(`master ${master.url}, replica ${replica.url}`);
    const onMaster = new Redis(master.url);
    const onReplica = new Redis(replica.url);
    clients.push(onMaster, onReplica);
    const target: BenchTarget = {
      label: 'one node',
      database: REPLICAS_DATABASE,
      redis: master.url,
      keyPrefix: REPLICAS_KEY_PREFIX,
      boardId: BOARD_ID,
      shards: 1,
      players: options.players,
    };
    await seed({ target, say: (line) => console.log(`seed: ${line}`) });
    await inSync(onMaster, onReplica);
    const runId = randomBytes(4).toString('hex');
    const withReplica: BenchTarget = { ...target, label: 'one node + a read replica', serviceEnv: { REDIS_REPLICA_URLS: replica.url } };
    for (const scenario of REPLICA_SCENARIOS) {
      for (const at of [target, withReplica]) {
        console.log(`\n>> replicas: ${scenario} on ${at.label}`);
        const spec = SPECS[scenario];
        const body = graphqlBody(spec.query);
        // The commands each server runs inside the measured window (the counts are read at its two ends).
        let opened: Promise<Counts[]> | undefined;
        let closed: Promise<Counts[]> | undefined;
        const counts = () => Promise.all([commandCounts(onMaster), commandCounts(onReplica)]);
        const measurement = await withService({ target: at, runtime: run.runtime }, (service) =>
          closedHttp(
            service.url,
            run,
            () => body(spec.variables(at)),
            service.pid,
            {},
            {
              costOf: service.url,
              window: { opened: () => void (opened = counts()), closed: () => void (closed = counts()) },
            },
          ),
        );
        const [before, after] = [await opened!, await closed!];
        const per = (n: number) => Math.round((n / Math.max(1, measurement.requests)) * 100) / 100;
        const servers = (['master', 'replica'] as const).map((server, i) => {
          const scripts = after[i]!.scripts - before[i]!.scripts;
          const commands = after[i]!.commands - before[i]!.commands;
          return { server, scripts, commands, scriptsPerRequest: per(scripts), commandsPerRequest: per(commands) };
        });
        const measured = row(`${at.label}: ${scenario} HTTP`, 'service', measurement);
        const published: Report = {
          scenario: 'replicas',
          params: { scenario, target: at.label, players: options.players, run: runId, seconds: run.seconds, warmup: run.warmup, connections: run.connections },
          rows: [{ ...measured, extra: { ...measured.extra, servers } }],
          notes: [
            ...servers.map(
              (s) =>
                `${s.server}: ${s.scripts} script calls (${s.scriptsPerRequest} a request), ${s.commands} commands of every kind (${s.commandsPerRequest} a request) in the measured window`,
            ),
          ],
        };
        publish(published);
        reports.push(published);
      }
    }
  } finally {
    for (const client of clients) client.disconnect();
    await replica?.kill();
    await master?.kill();
    say('the run’s redis-servers are stopped');
  }
  return reports;
}
