/**
 * The read scenarios on the 1,000,000-player board: standing, around, top and friends, each over
 * HTTP and over graphql-ws, beside the stock Yoga `{ __typename }` (HTTP, and stock graphql-ws)
 * and the raw store operations underneath, measured in the same run with the same connections.
 */
import { join } from 'node:path';
import { graphqlBody } from '../lib/clients.js';
import { BOARD_ID, FRIEND_READERS, playerId, randomPlayer } from '../lib/env.js';
import { type Report, RESULTS_DIR, type Target, row } from '../lib/report.js';
import { type BenchStores, openBenchStores } from '../seed.js';
import { bucketKey } from '../../src/ranking/keys.js';
import { profileNote } from '../profile-summary.js';
import { type RunOptions, closedHttp, closedRaw, closedWs, ratio, stockGraphqlWs, stockYogaHttp, withService } from './common.js';

export const READ_SCENARIOS = ['standing', 'around', 'top', 'friends'] as const;
export type ReadScenario = (typeof READ_SCENARIOS)[number];

interface ReadSpec {
  query: string;
  variables: () => Record<string, unknown>;
  /** What the raw baseline does, in words. */
  rawName: string;
  /** The raw store operations underneath one read. */
  raw: (stores: BenchStores, key: string) => () => Promise<unknown>;
}

const names = (stores: BenchStores, ids: string[]) => stores.database.sql`select id, display_name from players where id = any(${stores.database.sql.array(ids)})`;

/** [id, packed, id, packed, …] → ids. */
const idsOf = (rows: string[]) => rows.filter((_v, i) => i % 2 === 0);

const SPECS: Record<ReadScenario, ReadSpec> = {
  standing: {
    query: 'query Standing($board: ID!, $playerId: ID!) { standing(board: $board, playerId: $playerId) { rank score percentile } }',
    variables: () => ({ board: BOARD_ID, playerId: randomPlayer() }),
    rawName: 'raw Redis ZREVRANK+ZSCORE+ZCARD (pipelined)',
    raw: (stores, key) => () => {
      const id = randomPlayer();
      return stores.redis.pipeline().zrevrank(key, id).zscore(key, id).zcard(key).exec();
    },
  },
  around: {
    query:
      'query Around($board: ID!, $playerId: ID!) { around(board: $board, playerId: $playerId, radius: 5) { rank score player { id displayName } } }',
    variables: () => ({ board: BOARD_ID, playerId: randomPlayer() }),
    rawName: 'raw ZREVRANK, ZRANGE ±5 REV, PG names',
    raw: (stores, key) => async () => {
      const rank = (await stores.redis.zrevrank(key, randomPlayer())) ?? 0;
      const rows = await stores.redis.zrange(key, Math.max(0, rank - 5), rank + 5, 'REV', 'WITHSCORES');
      return names(stores, idsOf(rows));
    },
  },
  top: {
    query: 'query Top($board: ID!) { top(board: $board, limit: 10) { size entries { rank score player { id displayName } } } }',
    variables: () => ({ board: BOARD_ID }),
    rawName: 'raw ZRANGE 0 9 REV + ZCARD, PG names',
    raw: (stores, key) => async () => {
      const [[, rows]] = (await stores.redis.pipeline().zrange(key, 0, 9, 'REV', 'WITHSCORES').zcard(key).exec()) as [[null, string[]]];
      return names(stores, idsOf(rows));
    },
  },
  friends: {
    query: 'query Friends($board: ID!, $playerId: ID!) { friends(board: $board, playerId: $playerId) { rank score player { id displayName } } }',
    variables: () => ({ board: BOARD_ID, playerId: playerId(1 + Math.floor(Math.random() * FRIEND_READERS)) }),
    rawName: 'raw PG friend list, 201× ZREVRANK+ZSCORE (pipelined), PG names',
    raw: (stores, key) => async () => {
      const me = playerId(1 + Math.floor(Math.random() * FRIEND_READERS));
      const friends = await stores.database.sql<{ friend_id: string }[]>`select friend_id from friendships where player_id = ${me}`;
      const ids = [me, ...friends.map((f) => f.friend_id)];
      const pipeline = stores.redis.pipeline().zcard(key);
      for (const id of ids) pipeline.zrevrank(key, id).zscore(key, id);
      await pipeline.exec();
      return names(stores, ids);
    },
  },
};

export async function runRead(scenario: ReadScenario, run: RunOptions): Promise<Report> {
  const spec = SPECS[scenario];
  const body = graphqlBody(spec.query);
  const profileDir = join(RESULTS_DIR, 'profiles');
  const startedAt = Date.now();

  // HTTP and graphql-ws against the service; with --profile, the HTTP phase in a profiled process of its own.
  const http = await withService({ runtime: run.runtime, ...(run.profile ? { cpuProfileDir: profileDir } : {}) }, (service) =>
    closedHttp(service.url, run, () => body(spec.variables()), service.pid),
  );
  const ws = await withService({ runtime: run.runtime }, (service) => closedWs(service.wsUrl, run, spec.query, spec.variables, service.pid));
  const yoga = await stockYogaHttp(run);
  const stockWs = await stockGraphqlWs(run);

  const stores = await openBenchStores(10);
  let raw;
  try {
    const allTime = stores.buckets.find((at) => at.bucket.period === 'ALL_TIME')!;
    raw = await closedRaw(run, run.connections, spec.raw(stores, bucketKey(allTime)));
  } finally {
    await stores.close();
  }

  const targets: Target[] = [];
  if (scenario === 'standing') {
    const httpRatio = ratio(http.throughput, yoga.throughput);
    const wsRatio = ratio(ws.throughput, yoga.throughput);
    targets.push(
      { description: 'standing over HTTP ≥ 1.8× stock Yoga {__typename}', measured: `${httpRatio}×`, met: httpRatio >= 1.8 },
      { description: `standing over HTTP p99 < 50 ms at ${run.connections} connections`, measured: `${http.p99.toFixed(1)} ms`, met: http.requests > 0 && http.p99 < 50 },
      { description: 'standing over graphql-ws ≥ 5× stock Yoga {__typename} (HTTP)', measured: `${wsRatio}×`, met: wsRatio >= 5 },
    );
  }
  const notes: string[] = [`graphql-ws: ${run.connections} sockets × ${run.inflight} operations in flight`];
  if (run.profile) notes.push(...profileNote(profileDir, startedAt));
  return {
    scenario,
    params: { seconds: run.seconds, warmup: run.warmup, connections: run.connections, inflight: run.inflight, runtime: run.runtime, profiled: run.profile, query: spec.query },
    rows: [
      row(`service ${scenario} (HTTP)`, 'service', http),
      row(`service ${scenario} (graphql-ws)`, 'service', ws),
      row('stock Yoga {__typename} (HTTP)', 'baseline', yoga),
      row('stock graphql-ws {__typename}', 'baseline', stockWs),
      row(spec.rawName, 'baseline', raw),
    ],
    ratios: {
      'service HTTP / stock Yoga HTTP': ratio(http.throughput, yoga.throughput),
      'service graphql-ws / stock Yoga HTTP': ratio(ws.throughput, yoga.throughput),
      'service graphql-ws / stock graphql-ws': ratio(ws.throughput, stockWs.throughput),
      'service HTTP / raw': ratio(http.throughput, raw.throughput),
    },
    targets,
    notes,
  };
}
