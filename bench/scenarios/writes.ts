/**
 * The write scenarios: submitScore (one result a call) and submitScores (100 results a call, one
 * match), random players of the 1,000,000-player board, every period. Beside them, in the same
 * run: the stock Yoga `{ __typename }`, the raw PostgreSQL transaction underneath (the result
 * logged, its five board scores upserted, committed), and the raw Redis writes underneath (ZADD GT
 * and the place read back, per bucket, pipelined) into copies of the live keys.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { graphqlBody } from '../lib/clients.js';
import { BENCH_SERVER_KEY, BOARD_ID, MAX_SCORE, PLAYERS, randomPlayer } from '../lib/env.js';
import { type Report, RESULTS_DIR, type Target, row } from '../lib/report.js';
import { profileNote } from '../profile-summary.js';
import { type BenchStores, openBenchStores } from '../seed.js';
import type { BoardBucket } from '../../src/ranking/index.js';
import { bucketKey } from '../../src/ranking/keys.js';
import { pack, packingFor } from '../../src/ranking/packing.js';
import { type RunOptions, closedHttp, closedRaw, ratio, stockYogaHttp, withService } from './common.js';

export type WriteScenario = 'submit' | 'submit-batch';

const PAYLOAD = 'duplicate improved standings { period bucket standing { rank score } }';
const SUBMIT = `mutation Submit($input: SubmitScoreInput!) { submitScore(input: $input) { ${PAYLOAD} } }`;
const SUBMIT_BATCH = `mutation SubmitBatch($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { ${PAYLOAD} } }`;

const randomScore = () => Math.floor(Math.random() * (MAX_SCORE + 1));

/** `count` distinct random players. */
function randomPlayers(count: number): string[] {
  const picked = new Set<string>();
  while (picked.size < count) picked.add(randomPlayer());
  return [...picked];
}

/** The results of one match: `size` players, one matchId. */
export function matchInputs(run: string, match: number, size: number) {
  const matchId = `${run}-${match}`;
  return randomPlayers(size).map((id) => ({ board: BOARD_ID, playerId: id, score: randomScore(), matchId }));
}

/**
 * The raw PostgreSQL transaction of a batch: log the results, upsert every period's board score
 * keeping the best, commit. Scores of 0 leave every board score as it is (BEST), so the index
 * stays true to PostgreSQL, but each upsert still writes its row, as a real one does.
 */
function rawPostgres(stores: BenchStores, size: number, run: string) {
  const sql = stores.database.sql;
  const periods = stores.buckets.map((at) => at.bucket.period);
  const labels = stores.buckets.map((at) => at.bucket.label);
  let n = 0;
  return () => {
    const players = randomPlayers(size);
    const matchId = `raw-${run}-${n++}`;
    return sql.begin(async (tx) => {
      await tx`
        insert into results (board_id, match_id, player_id, score, achieved_at)
        select ${BOARD_ID}, ${matchId}, p, 0, now() from unnest(${tx.array(players)}::text[]) as p
        on conflict do nothing`;
      await tx`
        insert into board_scores as s (board_id, period, bucket, region, player_id, score, reached_at)
        select ${BOARD_ID}, b.period, b.bucket, '', p, 0, now()
        from unnest(${tx.array(players)}::text[]) as p, unnest(${tx.array(periods)}::text[], ${tx.array(labels)}::text[]) as b(period, bucket)
        on conflict (board_id, period, bucket, region, player_id) do update
        set score = greatest(s.score, excluded.score),
            reached_at = case when excluded.score > s.score then excluded.reached_at else s.reached_at end
        returning score`;
    });
  };
}

/** The raw Redis writes of a batch into copies of the live keys: per player and bucket, ZADD GT, ZREVRANK, ZSCORE; ZCARD per bucket. */
function rawRedis(redis: Redis, copies: { at: BoardBucket; key: string }[], size: number) {
  const packings = copies.map(({ at }) => packingFor(at.board, at.bucket.period));
  return () => {
    const now = new Date();
    const pipeline = redis.pipeline();
    for (const id of randomPlayers(size)) {
      copies.forEach(({ at, key }, i) => {
        pipeline.zadd(key, 'GT', pack(at.board, packings[i]!, randomScore(), now, at.bucket.start), id).zrevrank(key, id).zscore(key, id);
      });
    }
    for (const { key } of copies) pipeline.zcard(key);
    return pipeline.exec();
  };
}

export async function runWrite(scenario: WriteScenario, run: RunOptions): Promise<Report> {
  const size = scenario === 'submit' ? 1 : 100;
  const runId = randomBytes(4).toString('hex');
  let match = 0;
  const submit = graphqlBody(SUBMIT);
  const batch = graphqlBody(SUBMIT_BATCH);
  const body =
    scenario === 'submit'
      ? () => submit({ input: { board: BOARD_ID, playerId: randomPlayer(), score: randomScore(), matchId: `${runId}-${match++}` } })
      : () => batch({ inputs: matchInputs(runId, match++, size) });
  const auth = { authorization: `Bearer ${BENCH_SERVER_KEY}` };

  const startedAt = Date.now();
  const profileDir = join(RESULTS_DIR, 'profiles');
  const service = await withService({ runtime: run.runtime, ...(run.profile ? { cpuProfileDir: profileDir } : {}) }, (s) =>
    closedHttp(s.url, run, body, s.pid, auth),
  );
  const yoga = await stockYogaHttp(run);

  const stores = await openBenchStores(10);
  let postgres;
  let redis;
  const copies = stores.buckets.map((at) => ({ at, key: `${bucketKey(at)}#benchcopy` }));
  try {
    postgres = await closedRaw(run, run.connections, rawPostgres(stores, size, runId));
    for (const { at, key } of copies) await stores.redis.copy(bucketKey(at), key, 'REPLACE');
    redis = await closedRaw(run, run.connections, rawRedis(stores.redis, copies, size));
  } finally {
    await stores.redis.unlink(...copies.map((c) => c.key));
    await stores.close();
  }

  const unit = 'results/s';
  const targets: Target[] = [];
  if (scenario === 'submit-batch') {
    targets.push(
      { description: 'submit-batch ≥ 20,000 results/s', measured: `${Math.round(service.throughput * size).toLocaleString('en-US')} results/s`, met: service.throughput * size >= 20_000 },
      { description: 'submit-batch p99 < 100 ms', measured: `${service.p99.toFixed(1)} ms`, met: service.requests > 0 && service.p99 < 100 },
    );
  }
  return {
    scenario,
    params: { seconds: run.seconds, warmup: run.warmup, connections: run.connections, resultsPerCall: size, players: PLAYERS, runtime: run.runtime, profiled: run.profile },
    rows: [
      row(scenario === 'submit' ? 'service submitScore (HTTP)' : 'service submitScores ×100 (HTTP)', 'service', service, size, unit),
      row('stock Yoga {__typename} (HTTP)', 'baseline', yoga),
      row(`raw PostgreSQL transaction (${size} result${size > 1 ? 's' : ''} + ${size * copies.length} board-score upserts)`, 'baseline', postgres, size, unit),
      row(`raw Redis pipeline (${size * copies.length}× ZADD GT+ZREVRANK+ZSCORE)`, 'baseline', redis, size, unit),
    ],
    ratios: {
      'service calls / stock Yoga requests': ratio(service.throughput, yoga.throughput),
      'service / raw PostgreSQL': ratio(service.throughput, postgres.throughput),
      'service / raw Redis': ratio(service.throughput, redis.throughput),
    },
    targets,
    notes: [
      ...(run.profile ? profileNote(profileDir, startedAt) : []),
      `each call's results are ${size === 1 ? 'one random player' : `${size} distinct random players of one match`}; the service writes ${copies.length} buckets per result (every period, no region)`],
  };
}
