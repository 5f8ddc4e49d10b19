/**
 * The read scenarios on the 1,000,000-player board: standing, around, top and friends, each over
 * HTTP and over graphql-ws, beside the stock Yoga `{ __typename }` (HTTP, and stock graphql-ws)
 * and the raw store operations underneath, measured in the same run with the same connections.
 */
import { join } from 'node:path';
import { print } from 'graphql';
import { OpenBoardDocument } from '../../client/src/index.js';
import { graphqlBody } from '../lib/clients.js';
import { BOARD_ID, type BenchTarget, FRIEND_READERS, PLAYERS, playerId, randomPlayer } from '../lib/env.js';
import type { Measurement } from '../lib/load.js';
import { type Report, RESULTS_DIR, type Row, type Target, row } from '../lib/report.js';
import { type BenchStores, openBenchStores } from '../seed.js';
import type { BoardBucket } from '../../src/ranking/index.js';
import { playerShardKey, shardKeys } from '../../src/ranking/keys.js';
import { profileNote } from '../profile-summary.js';
import { measureWakeup, wakeupNote } from '../lib/wakeup.js';
import { type RunOptions, closedHttp, closedRaw, closedWs, plainBytesHttp, ratio, stockGraphqlWs, stockYogaHttp, withService } from './common.js';
import { interleavedReads, summariseRounds } from './rounds.js';

export const READ_SCENARIOS = ['standing', 'standing-named', 'around', 'top', 'open', 'open-client', 'open-client-times', 'friends'] as const;
export type ReadScenario = (typeof READ_SCENARIOS)[number];

/** One raw baseline: the store operations underneath one read, in words and as a call. */
interface RawOperation {
  name: string;
  run: () => Promise<unknown>;
}

interface ReadSpec {
  query: string;
  variables: (target: BenchTarget) => Record<string, unknown>;
  /**
   * The raw store operations underneath one read of the ALL_TIME bucket `at`: on a one-shard board
   * what the sorted set answers; on a sharded one the same on one shard, and (standing, top) the
   * scatter-gather over every shard, so the price of the scatter is known.
   */
  raw: (stores: BenchStores, at: BoardBucket, players: number) => RawOperation[];
}

const names = (stores: BenchStores, ids: string[]) =>
  stores.database.sql`select id, display_name from players where id = any(${stores.database.sql.array(ids)})`;

/** [id, packed, id, packed, …] → ids. */
const idsOf = (rows: string[]) => rows.filter((_v, i) => i % 2 === 0);

const sharded = (at: BoardBucket) => at.board.shards > 1;
const shardWords = (at: BoardBucket) => (sharded(at) ? " on the player's shard" : '');

/** ZREVRANK+ZSCORE+ZCARD of a random player on the sorted set holding it, pipelined: answers its packed score. */
async function ownShardStanding(stores: BenchStores, at: BoardBucket, players: number): Promise<{ id: string; packed: string | null }> {
  const id = randomPlayer(players);
  const key = playerShardKey(at, id);
  const replies = (await stores.redis.pipeline().zrevrank(key, id).zscore(key, id).zcard(key).exec()) as [Error | null, unknown][];
  return { id, packed: replies[1]![1] as string | null };
}

/** ZRANGE 0 9 REV WITHSCORES + ZCARD on one sorted set, pipelined: answers the rows. */
async function topTen(stores: BenchStores, key: string): Promise<string[]> {
  const [[, rows]] = (await stores.redis.pipeline().zrange(key, 0, 9, 'REV', 'WITHSCORES').zcard(key).exec()) as [[null, string[]]];
  return rows;
}

/** The store operations underneath a board's screen: the top ten, a player's place and the five either side, their names. */
function openRaw(stores: BenchStores, at: BoardBucket, players: number): RawOperation[] {
  return [
    {
      name: `raw ZRANGE 0 9 REV + ZCARD, ZREVRANK+ZSCORE, ZRANGE ±5 REV${shardWords(at)}, PG names`,
      run: async () => {
        const id = randomPlayer(players);
        const key = playerShardKey(at, id);
        const [top, rank] = await Promise.all([topTen(stores, shardKeys(at)[0]!), stores.redis.zrevrank(key, id), stores.redis.zscore(key, id)]);
        const rows = await stores.redis.zrange(key, Math.max(0, (rank ?? 0) - 5), (rank ?? 0) + 5, 'REV', 'WITHSCORES');
        return names(stores, [...new Set([...idsOf(top), id, ...idsOf(rows)])]);
      },
    },
  ];
}

/** The typed client's OpenBoard as printed, on ALL_TIME, with achievedAt or without. */
function clientOpen(withAchievedAt: boolean): ReadSpec {
  return {
    query: print(OpenBoardDocument),
    variables: (target) => ({ board: target.boardId, playerId: randomPlayer(target.players), period: 'ALL_TIME', limit: 10, radius: 5, withAchievedAt }),
    raw: (stores, at, players) => openRaw(stores, at, players),
  };
}

/** What a game client asks when it opens a board: the top ten, my standing and the five either side of me, with names, in one request. */
const OPEN = `query Open($board: ID!, $playerId: ID!) {
  top(board: $board, limit: 10) { size entries { rank score player { id displayName } } }
  me: standing(board: $board, playerId: $playerId) { rank score percentile player { id displayName } }
  around(board: $board, playerId: $playerId, radius: 5) { rank score player { id displayName } }
}`;

/** The targets of issue 13, each against stock Yoga's {__typename} over HTTP in the same run. */
const HTTP_TARGETS: Partial<Record<ReadScenario, number>> = {
  standing: 1.8,
  'standing-named': 2.5,
  open: 1.5,
  'open-client': 1.5,
  'open-client-times': 1.5,
  top: 3,
};

/** The graphql-ws targets of issue 13, against the same stock Yoga over HTTP. */
const WS_TARGETS: Partial<Record<ReadScenario, number>> = { standing: 5, 'standing-named': 5 };

/** Each read scenario's document, variables and raw operations (the replica run, bench/scenarios/replicas.ts, sends the same). */
export const SPECS: Record<ReadScenario, ReadSpec> = {
  standing: {
    query: 'query Standing($board: ID!, $playerId: ID!) { standing(board: $board, playerId: $playerId) { rank score percentile } }',
    variables: (target) => ({ board: target.boardId, playerId: randomPlayer(target.players) }),
    raw: (stores, at, players) => {
      const operations: RawOperation[] = [
        { name: `raw Redis ZREVRANK+ZSCORE+ZCARD${shardWords(at)} (pipelined)`, run: () => ownShardStanding(stores, at, players) },
      ];
      if (sharded(at)) {
        const keys = shardKeys(at);
        operations.push({
          name: `raw Redis scatter over ${keys.length} shards: that, then ZCARD+ZCOUNT ahead on each other shard`,
          run: async () => {
            const { id, packed } = await ownShardStanding(stores, at, players);
            if (packed === null) return;
            const own = playerShardKey(at, id);
            // One pipeline per shard key (one slot each); ioredis sends those bound for one node together.
            await Promise.all(keys.filter((key) => key !== own).map((key) => stores.redis.pipeline().zcard(key).zcount(key, `(${packed}`, '+inf').exec()));
          },
        });
      }
      return operations;
    },
  },
  around: {
    query: 'query Around($board: ID!, $playerId: ID!) { around(board: $board, playerId: $playerId, radius: 5) { rank score player { id displayName } } }',
    variables: (target) => ({ board: target.boardId, playerId: randomPlayer(target.players) }),
    raw: (stores, at, players) => [
      {
        name: `raw ZREVRANK, ZRANGE ±5 REV${shardWords(at)}, PG names`,
        run: async () => {
          const id = randomPlayer(players);
          const key = playerShardKey(at, id);
          const rank = (await stores.redis.zrevrank(key, id)) ?? 0;
          const rows = await stores.redis.zrange(key, Math.max(0, rank - 5), rank + 5, 'REV', 'WITHSCORES');
          return names(stores, idsOf(rows));
        },
      },
    ],
  },
  'standing-named': {
    query: 'query StandingNamed($board: ID!, $playerId: ID!) { standing(board: $board, playerId: $playerId) { rank score percentile player { displayName } } }',
    variables: (target) => ({ board: target.boardId, playerId: randomPlayer(target.players) }),
    raw: (stores, at, players) => [
      {
        name: `raw Redis ZREVRANK+ZSCORE+ZCARD${shardWords(at)} (pipelined), PG name`,
        run: async () => names(stores, [(await ownShardStanding(stores, at, players)).id]),
      },
    ],
  },
  open: {
    query: OPEN,
    variables: (target) => ({ board: target.boardId, playerId: randomPlayer(target.players) }),
    raw: (stores, at, players) => openRaw(stores, at, players),
  },
  // The same screen as the typed client sends it (its OpenBoard document: every field of its
  // fragments, avatarUrl, percentile and the top's asOf among them), on ALL_TIME.
  'open-client': clientOpen(false),
  // The same with withAchievedAt: ALL_TIME's time unit is coarse on this board (maxScore 1e9), so
  // the times of my standing and the players around me are looked up in PostgreSQL.
  'open-client-times': clientOpen(true),
  top: {
    query: 'query Top($board: ID!) { top(board: $board, limit: 10) { size entries { rank score player { id displayName } } } }',
    variables: (target) => ({ board: target.boardId }),
    raw: (stores, at) => {
      const keys = shardKeys(at);
      const operations: RawOperation[] = [
        {
          name: `raw ZRANGE 0 9 REV + ZCARD${sharded(at) ? ' on one shard' : ''}, PG names`,
          run: async () => names(stores, idsOf(await topTen(stores, keys[0]!))),
        },
      ];
      if (sharded(at)) {
        operations.push({
          name: `raw scatter over ${keys.length} shards: ZRANGE 0 9 REV + ZCARD on each, merged, PG names`,
          run: async () => {
            const rows = await Promise.all(keys.map((key) => topTen(stores, key)));
            const merged = rows
              .flatMap((pairs) => idsOf(pairs).map((id, i) => ({ id, packed: Number(pairs[2 * i + 1]) })))
              .sort((a, b) => b.packed - a.packed)
              .slice(0, 10);
            return names(
              stores,
              merged.map((member) => member.id),
            );
          },
        });
      }
      return operations;
    },
  },
  friends: {
    query: 'query Friends($board: ID!, $playerId: ID!) { friends(board: $board, playerId: $playerId) { rank score player { id displayName } } }',
    variables: (target) => ({ board: target.boardId, playerId: playerId(1 + Math.floor(Math.random() * FRIEND_READERS)) }),
    raw: (stores, at) => [
      {
        name: `raw PG friend list, 201× ZREVRANK+ZSCORE${shardWords(at)} (pipelined), PG names`,
        run: async () => {
          const me = playerId(1 + Math.floor(Math.random() * FRIEND_READERS));
          const friends = await stores.database.sql<{ friend_id: string }[]>`select friend_id from friendships where player_id = ${me}`;
          const ids = [me, ...friends.map((f) => f.friend_id)];
          // One pipeline per sorted set (one slot each): the whole list on a one-shard board.
          const byKey = new Map<string, string[]>();
          for (const id of ids) {
            const key = playerShardKey(at, id);
            byKey.set(key, [...(byKey.get(key) ?? []), id]);
          }
          await Promise.all(
            [...byKey].map(([key, held]) => {
              const pipeline = stores.redis.pipeline().zcard(key);
              for (const id of held) pipeline.zrevrank(key, id).zscore(key, id);
              return pipeline.exec();
            }),
          );
          return names(stores, ids);
        },
      },
    ],
  },
};

/**
 * One read scenario on `run.target`: the service over HTTP and graphql-ws, the stock servers, and
 * the raw store operations, all in the same run; with `run.targetOnly`, the service over HTTP and
 * the raw Redis operations alone (the cluster run).
 */
export async function runRead(scenario: ReadScenario, run: RunOptions): Promise<Report> {
  // --metadata: every Standing selection asks for its entry metadata too.
  const spec = run.metadata ? { ...SPECS[scenario], query: SPECS[scenario].query.replaceAll('rank score', 'rank score metadata') } : SPECS[scenario];
  const { target } = run;
  const body = graphqlBody(spec.query);
  const variables = () => spec.variables(target);
  const profileDir = join(RESULTS_DIR, 'profiles');
  const startedAt = Date.now();

  // HTTP and graphql-ws against the service, each in a process of its own; with --profile, each profiled into a folder of its own.
  const profiled = (phase: string) => (run.profile ? { cpuProfileDir: join(profileDir, phase) } : {});
  const http = await withService({ target, runtime: run.runtime, ...profiled('http') }, (service) =>
    closedHttp(service.url, run, () => body(variables()), service.pid, {}, { costOf: service.url }),
  );
  const ws = run.targetOnly
    ? undefined
    : await withService({ target, runtime: run.runtime, ...profiled('graphql-ws') }, (service) =>
        closedWs(service.wsUrl, run, spec.query, variables, service.pid, service.url),
      );
  const yoga = run.targetOnly ? undefined : await stockYogaHttp(run);
  const stockWs = run.targetOnly ? undefined : await stockGraphqlWs(run);
  const plain = run.targetOnly ? undefined : await plainBytesHttp(run, () => body(variables()));

  const stores = await openBenchStores(target, 10);
  const raw: { name: string; measurement: Measurement }[] = [];
  try {
    const allTime = stores.buckets.find((at) => at.bucket.period === 'ALL_TIME')!;
    for (const operation of spec.raw(stores, allTime, target.players)) {
      raw.push({ name: operation.name, measurement: await closedRaw(run, run.connections, operation.run) });
    }
  } finally {
    await stores.close();
  }
  const httpTarget = HTTP_TARGETS[scenario];
  const wsTarget = WS_TARGETS[scenario];
  // --rounds: stock Yoga and the service in turn, seconds apart (see interleavedReads), in a service
  // process of its own; over graphql-ws too where the scenario has a graphql-ws target.
  const rounds =
    run.rounds > 0 && !run.targetOnly && httpTarget !== undefined
      ? await withService({ target, runtime: run.runtime }, (service) =>
          interleavedReads(run, service, () => body(variables()), wsTarget !== undefined ? { query: spec.query, variables } : undefined),
        )
      : [];
  // With nothing else running: what a wake-up costs on this machine, to compare runs across machines.
  const wakeup = await measureWakeup();

  const targets: Target[] = [];
  if (httpTarget !== undefined && yoga) {
    const httpRatio = ratio(http.throughput, yoga.throughput);
    targets.push({ description: `${scenario} over HTTP ≥ ${httpTarget}× stock Yoga {__typename}`, measured: `${httpRatio}×`, met: httpRatio >= httpTarget });
  }
  const summary = summariseRounds(scenario, rounds, { http: httpTarget, ws: wsTarget });
  if (summary.targets.http) targets.push(summary.targets.http);
  if (wsTarget !== undefined && yoga && ws) {
    const wsRatio = ratio(ws.throughput, yoga.throughput);
    targets.push(
      {
        description: `${scenario} over HTTP p99 < 50 ms at ${run.connections} connections`,
        measured: `${http.p99.toFixed(1)} ms`,
        met: http.requests > 0 && http.p99 < 50,
      },
      { description: `${scenario} over graphql-ws ≥ ${wsTarget}× stock Yoga {__typename} (HTTP)`, measured: `${wsRatio}×`, met: wsRatio >= wsTarget },
    );
  }
  if (summary.targets.ws) targets.push(summary.targets.ws);
  if (scenario === 'standing-named') {
    for (const [transport, m] of [
      ['HTTP', http],
      ['graphql-ws', ws],
    ] as const) {
      if (m?.cost)
        targets.push({
          description: `${scenario} over ${transport}: PostgreSQL transactions a read < 0.01`,
          measured: String(m.cost.postgresTransactions),
          met: m.cost.postgresTransactions < 0.01,
        });
    }
  }
  const notes: string[] = [
    ...(ws ? [`graphql-ws: ${run.connections} sockets × ${run.inflight} operations in flight`] : []),
    wakeupNote(wakeup),
    ...summary.notes,
  ];
  if (run.profile)
    notes.push(...profileNote(join(profileDir, 'http'), startedAt, 'HTTP'), ...profileNote(join(profileDir, 'graphql-ws'), startedAt, 'graphql-ws'));
  const rows: Row[] = [row(`service ${scenario} (HTTP)`, 'service', http)];
  if (ws) rows.push(row(`service ${scenario} (graphql-ws)`, 'service', ws));
  if (yoga) rows.push(row('stock Yoga {__typename} (HTTP)', 'baseline', yoga));
  if (plain) rows.push(row('plain node:http, fixed bytes, same bodies (HTTP)', 'baseline', plain));
  if (stockWs) rows.push(row('stock graphql-ws {__typename}', 'baseline', stockWs));
  rows.push(...raw.map(({ name, measurement }) => row(name, 'baseline', measurement)));
  const ratios: Record<string, number> = {};
  if (yoga && ws && stockWs) {
    ratios['service HTTP / stock Yoga HTTP'] = ratio(http.throughput, yoga.throughput);
    ratios['service graphql-ws / stock Yoga HTTP'] = ratio(ws.throughput, yoga.throughput);
    ratios['service graphql-ws / stock graphql-ws'] = ratio(ws.throughput, stockWs.throughput);
  }
  if (yoga && plain) {
    // The ceiling: no HTTP server in Node does better here, whatever it computes.
    ratios['plain node:http / stock Yoga HTTP'] = ratio(plain.throughput, yoga.throughput);
    ratios['service HTTP / plain node:http'] = ratio(http.throughput, plain.throughput);
  }
  ratios['service HTTP / raw'] = ratio(http.throughput, raw[0]!.measurement.throughput);
  Object.assign(ratios, summary.ratios);
  return {
    scenario,
    params: {
      seconds: run.seconds,
      warmup: run.warmup,
      connections: run.connections,
      inflight: run.inflight,
      runtime: run.runtime,
      profiled: run.profile,
      query: spec.query,
      ...(run.rounds > 0 ? { rounds: run.rounds } : {}),
      ...(target.players === PLAYERS && target.boardId === BOARD_ID ? {} : { board: target.boardId, players: target.players, shards: target.shards }),
    },
    rows,
    ratios,
    targets,
    notes,
  };
}
