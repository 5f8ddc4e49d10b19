/**
 * The benchmark harness, run by hand, never by npm test:
 *
 *     npm run bench -- <scenario> [--seconds 20] [--warmup 5] [--connections 50] [--inflight 4]
 *                                 [--match 10] [--scale 1] [--runtime dist|tsx] [--profile] [--metadata] [--force]
 *                                 [--players 1000000] [--rounds 0] [--no-quiet-wait] [--pgbouncer]
 *
 * Scenarios: seed, submit, submit-batch, standing, standing-named, around, top, open, open-client, open-client-times, friends, peak, abuse,
 * abuse-cost-walk, abuse-introspection, abuse-validation, abuse-body-hold, abuse-idle-connections, abuse-scalar-reads, rebuild,
 * memory, sql-rank, or all (every one, in that order); and cluster, which is not part of all: it starts a
 * Redis Cluster of its own, seeds two boards of its own into it and takes ≈ 15 minutes more
 * (bench/scenarios/cluster.ts; --players sets its boards' players); and replicas, not part of all either: the
 * standing and top reads on a Redis node of its own with and without a read replica of it, with the
 * commands each server ran (bench/scenarios/replicas.ts; --players, default 100,000); and standing-unnamed, not part of all
 * either: the standing read with the name when one player in ten is named, beside every player named, on two boards of
 * its own (bench/scenarios/unnamed.ts; --players, default 200,000). Each service scenario runs the service as a real
 * process (bench/lib/service.ts) on the bench board (seeded first when it is not: bench/seed.ts),
 * warms up, measures for a fixed time with a fixed number of connections, and prints throughput
 * and p50/p95/p99 latency beside its baselines measured in the same run; each report is appended
 * to bench/results/<scenario>.jsonl (bench/chart.ts draws them). See bench/RESULTS.md.
 *
 * Before each measurement it waits (up to 10 minutes) for the machine to be quiet, so another job's
 * load is not counted as the service's; --no-quiet-wait skips that. The cpu column says who had
 * the cores during each measurement ("other" is everybody else).
 *
 * --pgbouncer: every service process reaches PostgreSQL through a PgBouncer of its own in
 * transaction pooling mode (DATABASE_POOLING=transaction), to compare with a run without it.
 *
 * --rounds N (read scenarios with an HTTP target) adds N rounds of stock Yoga and the service over
 * HTTP (and over graphql-ws for standing and standing-named) taken in turn, seconds apart, and
 * prints each round's ratios and their medians beside the scenario's own
 * (bench/scenarios/rounds.ts, interleavedReads): on a machine whose speed drifts over minutes, the
 * ratios to set beside a target.
 *
 * abuse and the abuse-… scenarios (bench/scenarios/abuse.ts, abuse-cases.ts) each measure a
 * well-behaved probe client alone and then beside one abusive client (from 127.0.0.2), in one
 * service process with its default per-client limits, for --warmup and --seconds each; the
 * abuse-… ones are the six ways of issue 53 in which one client slowed everyone. E.g.
 *
 *     npm run bench -- abuse-idle-connections --seconds 20 --warmup 5
 */
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { alwaysWatched } from './lib/cpu.js';
import { quietGate } from './lib/load.js';
import { BENCH_TARGET, PLAYERS, REDIS_URL } from './lib/env.js';
import { type Report, publish } from './lib/report.js';
import { CLUSTER_SCENARIOS, type ClusterScenario, redisPid, runCluster } from './scenarios/cluster.js';
import type { RunOptions } from './scenarios/common.js';
import { runAbuse } from './scenarios/abuse.js';
import { ABUSE_CASES, runAbuseCase } from './scenarios/abuse-cases.js';
import { runMemory } from './scenarios/memory.js';
import { runPeak } from './scenarios/peak.js';
import { READ_SCENARIOS, runRead } from './scenarios/reads.js';
import { runRebuild } from './scenarios/rebuild.js';
import { runReplicas } from './scenarios/replicas.js';
import { runSqlRank } from './scenarios/sql-rank.js';
import { UNNAMED_PLAYERS, runUnnamed } from './scenarios/unnamed.js';
import { runWrite } from './scenarios/writes.js';
import { seed } from './seed.js';

/** What `all` runs, in this order. */
const ALL = ['seed', 'submit', 'submit-batch', ...READ_SCENARIOS, 'peak', 'abuse', ...ABUSE_CASES, 'rebuild', 'memory', 'sql-rank'] as const;
const SCENARIOS = [...ALL, 'cluster', 'replicas', 'standing-unnamed'] as const;
type Scenario = (typeof SCENARIOS)[number];

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '5' },
    connections: { type: 'string' },
    inflight: { type: 'string', default: '4' },
    match: { type: 'string', default: '10' },
    scale: { type: 'string', default: '1' },
    runtime: { type: 'string', default: 'dist' },
    profile: { type: 'boolean', default: false },
    metadata: { type: 'boolean', default: false },
    force: { type: 'boolean', default: false },
    players: { type: 'string' },
    only: { type: 'string' },
    rounds: { type: 'string', default: '0' },
    'no-quiet-wait': { type: 'boolean', default: false },
    pgbouncer: { type: 'boolean', default: false },
  },
});
// Every service the run starts reaches PostgreSQL through a PgBouncer of its own (bench/lib/service.ts).
if (values.pgbouncer) process.env.BENCH_PGBOUNCER = '1';

/** `--only standing,top`: some of the cluster run's scenarios. */
function clusterScenarios(text: string): ClusterScenario[] {
  const names = text.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(CLUSTER_SCENARIOS as readonly string[]).includes(name));
  if (unknown.length > 0) usage(`--only takes ${CLUSTER_SCENARIOS.join(', ')}; not ${unknown.join(', ')}`);
  return names as ClusterScenario[];
}

function usage(problem: string): never {
  console.error(
    `${problem}\nusage: npm run bench -- <${[...SCENARIOS, 'all'].join('|')}> [--seconds 20] [--warmup 5] [--connections 50] [--inflight 4] [--match 10] [--scale 1] [--runtime tsx|dist] [--profile] [--metadata] [--force] [--players 1000000] [--only standing,standing-named,open,top,submit-batch] (both cluster only) [--rounds 0] [--no-quiet-wait] [--pgbouncer]`,
  );
  process.exit(2);
}

const positive = (name: string, text: string | undefined) => {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) usage(`--${name} must be a positive number`);
  return value;
};

async function runScenario(scenario: Scenario, base: Omit<RunOptions, 'connections'>, connections: number | undefined): Promise<Report | null> {
  // SQL counts of a million rows are slow; fifty at once on two cores only measure the queue.
  const run: RunOptions = { ...base, connections: connections ?? (scenario === 'sql-rank' ? 10 : 50) };
  switch (scenario) {
    case 'seed':
      await seed({ force: values.force });
      return null;
    case 'submit':
    case 'submit-batch':
      return runWrite(scenario, run);
    case 'peak':
      return runPeak(run);
    case 'abuse':
      return runAbuse(run);
    case 'abuse-cost-walk':
    case 'abuse-introspection':
    case 'abuse-validation':
    case 'abuse-body-hold':
    case 'abuse-idle-connections':
    case 'abuse-scalar-reads':
      return runAbuseCase(scenario, run);
    case 'rebuild':
      return runRebuild();
    case 'memory':
      return runMemory();
    case 'sql-rank':
      return runSqlRank(run);
    case 'cluster':
      // Publishes one report per (scenario, shards) itself.
      await runCluster(run, {
        players: values.players === undefined ? PLAYERS : Math.round(positive('players', values.players)),
        force: values.force,
        only: values.only === undefined ? undefined : clusterScenarios(values.only),
      });
      return null;
    case 'replicas':
      // Its own node and replica, database and board (100,000 players unless --players); publishes its reports itself.
      await runReplicas(run, { players: values.players === undefined ? 100_000 : Math.round(positive('players', values.players)) });
      return null;
    case 'standing-unnamed':
      // Its own two databases and boards (200,000 players unless --players): every player named, and one in ten.
      return runUnnamed(run, {
        players: values.players === undefined ? UNNAMED_PLAYERS : Math.round(positive('players', values.players)),
        force: values.force,
      });
    default:
      return runRead(scenario, run);
  }
}

async function main(): Promise<void> {
  const [name] = positionals;
  if (!name) usage('name a scenario');
  if (name !== 'all' && !(SCENARIOS as readonly string[]).includes(name)) usage(`no scenario "${name}"`);
  if (values.players !== undefined && name !== 'cluster' && name !== 'replicas' && name !== 'standing-unnamed')
    usage('--players is for the cluster, replicas and standing-unnamed runs only (the bench board has 1,000,000)');
  if (values.runtime !== 'tsx' && values.runtime !== 'dist') usage('--runtime is tsx or dist');
  const base: Omit<RunOptions, 'connections'> = {
    seconds: positive('seconds', values.seconds),
    warmup: Number(values.warmup) >= 0 ? Number(values.warmup) : usage('--warmup must be 0 or more'),
    inflight: positive('inflight', values.inflight),
    match: positive('match', values.match),
    scale: positive('scale', values.scale),
    runtime: values.runtime,
    profile: values.profile,
    metadata: values.metadata,
    target: BENCH_TARGET,
    targetOnly: false,
    rounds: Number.isInteger(Number(values.rounds)) && Number(values.rounds) >= 0 ? Number(values.rounds) : usage('--rounds must be a whole number, 0 or more'),
  };
  const connections = values.connections === undefined ? undefined : positive('connections', values.connections);
  // The service as npm start runs it: the build, compiled by tsc (nothing to do when it is current).
  if (base.runtime === 'dist') execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
  alwaysWatched.redis = await redisPid(REDIS_URL);
  quietGate.enabled = !values['no-quiet-wait'];

  const scenarios: Scenario[] = name === 'all' ? [...ALL] : [name as Scenario];
  // Every scenario but rebuild and cluster (which seed stores of their own) reads the seeded bench board.
  if (scenarios.some((s) => s !== 'rebuild' && s !== 'cluster' && s !== 'replicas' && s !== 'standing-unnamed') && !scenarios.includes('seed'))
    await seed({ say: (line) => console.log(`seed: ${line}`) });
  for (const scenario of scenarios) {
    console.log(`\n>> ${scenario}`);
    const report = await runScenario(scenario, base, connections);
    if (report) publish(report);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
