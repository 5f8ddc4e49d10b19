/**
 * The standing read when few players are named (`npm run bench -- standing-unnamed [--players
 * 200000]`), as an outside harness measured it (issue 55, item 8): 200,000 players, random players
 * read, 50 connections, the anonymous document
 * `query($b:ID!,$p:ID!){ standing(board:$b, playerId:$p){ rank score percentile player{ displayName } } }`,
 * on a board whose every player is named beside one where one player in ten is (the others never
 * had upsertPlayer: no row in players), in the same run. A player without a profile is a normal
 * player: reading one must cost what reading a named one does.
 *
 * Three measurements of the service over HTTP, each in a process of its own:
 * - every player named, their profiles held in Redis (as upsertPlayer leaves them);
 * - one in ten named, and what every player has, a profile or none, held in Redis: as a player's
 *   first result leaves it (the index tells the profile cache whom a write placed for the first
 *   time: ProfileCache.remember); the seed writes the board by SQL, so it is brought in the same
 *   way here, through the service's profile cache, for every player;
 * - one in ten named, the others' none not in Redis (players placed without the service, or their
 *   hashes expired or emptied): the first read of each asks PostgreSQL, once for every process,
 *   and the measured window holds many such first reads (what the harness measured before the
 *   first result remembered it).
 * Each row carries what one read cost: service CPU (µs), KB allocated, Redis commands, PostgreSQL
 * transactions. Stock Yoga's `{ __typename }` with the same connections is the baseline.
 *
 * Its stores are its own: the databases lb_bench_named and lb_bench_unnamed (seeded by
 * bench/seed.ts, board `bench`, one shard), under the key prefixes `bench-named:` and
 * `bench-unnamed:`.
 */
import { graphqlBody } from '../lib/clients.js';
import { BOARD_ID, type BenchTarget, REDIS_URL, randomPlayer } from '../lib/env.js';
import type { Measurement } from '../lib/load.js';
import { type Report, type Row, type Target, row } from '../lib/report.js';
import { resetProfiles, seed, warmEveryProfile } from '../seed.js';
import { type RunOptions, closedHttp, ratio, stockYogaHttp, withService } from './common.js';

/** The harness's document: anonymous, its variables named $b and $p. */
export const UNNAMED_QUERY = 'query($b:ID!,$p:ID!){ standing(board:$b, playerId:$p){ rank score percentile player{ displayName } } }';

/** The players on each board unless --players says. */
export const UNNAMED_PLAYERS = 200_000;

/** One player in this many is named on the board of few names. */
const NAMED_EVERY = 10;

export interface UnnamedRunOptions {
  /** Players on each board. Default {@link UNNAMED_PLAYERS}. */
  players: number;
  /** Empty both databases first and seed them again. Default false. */
  force?: boolean | undefined;
}

/** The two targets: every player named, and one in NAMED_EVERY. */
export function unnamedTargets(players: number): { named: BenchTarget; few: BenchTarget } {
  const base = { redis: REDIS_URL, boardId: BOARD_ID, shards: 1, players };
  return {
    named: { ...base, label: 'every player named', database: 'lb_bench_named', keyPrefix: 'bench-named:' },
    few: { ...base, label: `one player in ${NAMED_EVERY} named`, database: 'lb_bench_unnamed', keyPrefix: 'bench-unnamed:', namedEvery: NAMED_EVERY },
  };
}

/** The service over HTTP on `target`, the harness's document for random players, in a process of its own. */
function measure(run: RunOptions, target: BenchTarget): Promise<Measurement> {
  const body = graphqlBody(UNNAMED_QUERY);
  return withService({ target, runtime: run.runtime }, (service) =>
    closedHttp(service.url, run, () => body({ b: target.boardId, p: randomPlayer(target.players) }), service.pid, {}, { costOf: service.url }),
  );
}

/** What one read cost, for a note: CPU, allocation, Redis commands, PostgreSQL transactions. */
function costWords(name: string, m: Measurement): string {
  const cost = m.cost;
  if (!cost) return `${name}: no cost read`;
  const kb = cost.allocatedKb === undefined ? '' : `, ${cost.allocatedKb} KB allocated`;
  return `${name}: ${cost.serviceCpuUs} µs CPU${kb}, ${cost.redisCommands} Redis commands, ${cost.postgresTransactions} PostgreSQL transactions a read`;
}

export async function runUnnamed(run: RunOptions, options: UnnamedRunOptions): Promise<Report> {
  const say = (line: string) => console.log(`seed: ${line}`);
  const { named, few } = unnamedTargets(options.players);
  await seed({ target: named, force: options.force ?? false, say });
  await seed({ target: few, force: options.force ?? false, say });

  console.log(`\n>> standing-unnamed: ${named.label}`);
  const allNamed = await measure(run, named);
  // As a first result leaves each player: a profile, or none, in Redis.
  await warmEveryProfile(few);
  console.log(`>> standing-unnamed: ${few.label}, every player's profile or none in Redis`);
  const remembered = await measure(run, few);
  // The others' none dropped: only the named players' profiles held.
  await resetProfiles(few);
  console.log(`>> standing-unnamed: ${few.label}, the others' none not in Redis`);
  const firstReads = await measure(run, few);
  const yoga = await stockYogaHttp(run);

  const rows: Row[] = [
    row(`service standing, ${named.label} (HTTP)`, 'service', allNamed),
    row(`service standing, ${few.label}, every player's profile or none in Redis (HTTP)`, 'service', remembered),
    row(`service standing, ${few.label}, the others' none not in Redis (HTTP)`, 'service', firstReads),
    row('stock Yoga {__typename} (HTTP)', 'baseline', yoga),
  ];
  const targets: Target[] = [];
  // The target is the case a deployment is in: every player's first result remembered what they have.
  for (const [words, m] of [['every profile or none in Redis', remembered]] as const) {
    const cost = m.cost;
    const base = allNamed.cost;
    if (!cost || !base) continue;
    targets.push(
      {
        description: `${few.label}, ${words}: PostgreSQL transactions a read < 0.01`,
        measured: String(cost.postgresTransactions),
        met: cost.postgresTransactions < 0.01,
      },
      {
        description: `${few.label}, ${words}: Redis commands a read within 20% of every player named (${base.redisCommands})`,
        measured: String(cost.redisCommands),
        met: cost.redisCommands <= base.redisCommands * 1.2,
      },
    );
  }
  return {
    scenario: 'standing-unnamed',
    params: {
      seconds: run.seconds,
      warmup: run.warmup,
      connections: run.connections,
      runtime: run.runtime,
      players: options.players,
      namedEvery: NAMED_EVERY,
      query: UNNAMED_QUERY,
    },
    rows,
    ratios: {
      [`service, ${named.label} / stock Yoga`]: ratio(allNamed.throughput, yoga.throughput),
      [`service, ${few.label}, every profile or none in Redis / stock Yoga`]: ratio(remembered.throughput, yoga.throughput),
      [`service, ${few.label}, the others' none not in Redis / stock Yoga`]: ratio(firstReads.throughput, yoga.throughput),
    },
    targets,
    notes: [
      `databases ${named.database} and ${few.database}, ${options.players.toLocaleString('en-US')} players each, one shard`,
      costWords(named.label, allNamed),
      costWords(`${few.label}, every player's profile or none in Redis`, remembered),
      costWords(`${few.label}, the others' none not in Redis`, firstReads),
    ],
  };
}
