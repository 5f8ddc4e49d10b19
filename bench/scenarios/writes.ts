/**
 * The write scenarios: submitScore (one result a call) and submitScores (100 results a call, one
 * match), random players of the 1,000,000-player board, every period. Beside them, in the same
 * run: the stock Yoga `{ __typename }`, the raw PostgreSQL write of the durable rows alone (each
 * result's idempotency key and log row, one statement), the raw PostgreSQL transaction of the
 * service's durable rows (the key claimed, the result logged, the board score of each bucket the
 * board keeps as a row upserted, committed), and the raw Redis writes underneath (ZADD GT
 * and the place read back, per bucket, pipelined) into copies of the live keys. On a sharded board
 * the raw writes go into the player's shard, and every other shard counts the members ahead of
 * each place (ZCOUNT), as the service's scatter does. With `run.targetOnly` (the cluster run), the
 * service and the raw Redis writes alone. Beside each PostgreSQL figure, what a result cost:
 * rows written (per table), statements sent, and the CPU of each process (bench/lib/write-costs.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Sql, TransactionSql } from 'postgres';
import { join } from 'node:path';
import { graphqlBody } from '../lib/clients.js';
import { BENCH_SERVER_KEY, BOARD_ID, type BenchTarget, MAX_SCORE, PLAYERS, benchDatabaseUrl, randomPlayer } from '../lib/env.js';
import { type Report, RESULTS_DIR, type Row, type Target, row } from '../lib/report.js';
import { profileNote } from '../profile-summary.js';
import { type BenchStores, openBenchStores } from '../seed.js';
import { keepsBoardScores } from '../../src/model/board.js';
import type { Measurement } from '../lib/load.js';
import { type WriteCostProbe, type WriteCosts, costsNote, databaseNote, databaseState, writeCostProbe } from '../lib/write-costs.js';
import type { BoardBucket } from '../../src/ranking/index.js';
import { shardKeys, shardOf } from '../../src/ranking/keys.js';
import { pack, packingFor } from '../../src/ranking/packing.js';
import type { RedisClient } from '../../src/redis.js';
import { type RunOptions, closedHttp, closedRaw, ratio, stockYogaHttp, withService } from './common.js';
import { measureWakeup, wakeupNote } from '../lib/wakeup.js';

export type WriteScenario = 'submit' | 'submit-batch';

const PAYLOAD = 'duplicate improved standings { period bucket standing { rank score metadata @include(if: $withMetadata) } }';
const SUBMIT = `mutation Submit($input: SubmitScoreInput!, $withMetadata: Boolean!) { submitScore(input: $input) { ${PAYLOAD} } }`;
const SUBMIT_BATCH = `mutation SubmitBatch($inputs: [SubmitScoreInput!]!, $withMetadata: Boolean!) { submitScores(inputs: $inputs) { ${PAYLOAD} } }`;

/** What `--metadata` attaches to each result: a car and a replay id, about 50 bytes, as a racing game would. */
const entryMetadata = (match: number) => ({ car: 'R8 LMS', replay: `rp-${match.toString(36)}-5f1c2a`, laps: 12 });

const randomScore = () => Math.floor(Math.random() * (MAX_SCORE + 1));

/** `count` distinct random players among `players`. */
function randomPlayers(count: number, players = PLAYERS): string[] {
  const picked = new Set<string>();
  while (picked.size < count) picked.add(randomPlayer(players));
  return [...picked];
}

/** The results of one match: `size` players of a target's board (default the bench board), one matchId. */
export function matchInputs(
  run: string,
  match: number,
  size: number,
  target: Pick<BenchTarget, 'boardId' | 'players'> = { boardId: BOARD_ID, players: PLAYERS },
) {
  const matchId = `${run}-${match}`;
  return randomPlayers(size, target.players).map((id) => ({ board: target.boardId, playerId: id, score: randomScore(), matchId }));
}

/**
 * The raw PostgreSQL write of a batch's durable rows alone, as the service's log statement makes
 * them: each result's idempotency key claimed (result_keys) and, where it was new, the result
 * logged into its month's partition; one statement, committed on its own. What PostgreSQL can take
 * when nothing but the log is written in the transaction.
 */
function rawLog(stores: BenchStores, size: number, run: string, target: BenchTarget) {
  const sql = stores.database.sql;
  const boardId = target.boardId;
  let n = 0;
  return () => {
    const players = randomPlayers(size, target.players);
    return logged(sql, boardId, players, `rawlog-${run}-${n++}`);
  };
}

/** The statement that claims each result's idempotency key and logs the new ones, as the service's log statement does. */
const logged = (sql: Sql | TransactionSql, boardId: string, players: string[], matchId: string) => sql`
  with keyed as (
    insert into result_keys (board_id, player_id, match_id, achieved_at, region)
    select ${boardId}, p, ${matchId}, now(), null from unnest(${sql.array(players)}::text[]) as p
    on conflict do nothing
    returning board_id, player_id, match_id, achieved_at)
  insert into results (board_id, player_id, match_id, score, region, achieved_at)
  select board_id, player_id, match_id, 0, null, achieved_at from keyed`;

/** Statements a {@link rawLog} call sends: the one statement (its own transaction). */
const RAW_LOG_STATEMENTS = 1;
/** Statements a {@link rawPostgres} call sends: BEGIN, the two statements, COMMIT. */
const RAW_TRANSACTION_STATEMENTS = 4;

/** The bench board's current buckets that it keeps as board-score rows (keepsBoardScores); the others are derived from the log. */
const keptBuckets = (stores: BenchStores) => stores.buckets.filter((at) => keepsBoardScores(at.board, at.bucket.period));

/**
 * The raw PostgreSQL transaction of a batch, the durable rows the service writes: claim the
 * results' idempotency keys and log them, upsert the board score of every bucket the board keeps
 * as a row keeping the best, commit. Scores of 0 leave every board score as it is (BEST), so the index
 * stays true to PostgreSQL, but each upsert still writes its row, as a real one does.
 */
function rawPostgres(stores: BenchStores, size: number, run: string, target: BenchTarget) {
  const sql = stores.database.sql;
  const boardId = target.boardId;
  const kept = keptBuckets(stores);
  const periods = kept.map((at) => at.bucket.period);
  const labels = kept.map((at) => at.bucket.label);
  let n = 0;
  return () => {
    const players = randomPlayers(size, target.players);
    const matchId = `raw-${run}-${n++}`;
    return sql.begin(async (tx) => {
      await logged(tx, boardId, players, matchId);
      await tx`
        insert into board_scores as s (board_id, period, bucket, region, player_id, score, reached_at)
        select ${boardId}, b.period, b.bucket, '', p, 0, now()
        from unnest(${tx.array(players)}::text[]) as p, unnest(${tx.array(periods)}::text[], ${tx.array(labels)}::text[]) as b(period, bucket)
        on conflict (board_id, period, bucket, region, player_id) do update
        set score = greatest(s.score, excluded.score),
            reached_at = case when excluded.score > s.score then excluded.reached_at else s.reached_at end
        returning score`;
    });
  };
}

/**
 * Takes the raw baselines' rows out of the bench board's log again (every match id they write
 * starts with "raw", which the service's hex run ids and the seed's never do), this run's and any
 * an interrupted run left, then vacuums. They are the bench's rows, not the board's: left in, the
 * baselines grew the log and its keys by about half a million rows a run, and every run measured a
 * larger database than the last (PostgreSQL's cost a result rose from 224 to 476 µs over one
 * session's runs).
 */
async function forgetRawRows(sql: Sql, boardId: string): Promise<void> {
  await sql`delete from results where board_id = ${boardId} and match_id like 'raw%'`;
  await sql`delete from result_keys where board_id = ${boardId} and match_id like 'raw%'`;
  await sql`vacuum (analyze) results, result_keys`;
}

/** A copy of one shard's sorted set (the bucket's on a one-shard board) the raw writes go into: the live key + `#benchcopy`, in the same slot. */
interface ShardCopy {
  at: BoardBucket;
  shard: number;
  key: string;
}

/**
 * The raw Redis writes of a batch into copies of the live keys: per player and bucket, ZADD GT,
 * ZREVRANK and ZSCORE on the player's shard; per shard, ZCARD and, on a sharded board, a ZCOUNT of
 * the members ahead of each place written into another shard. One pipeline per key (one slot each;
 * ioredis sends those bound for one node together).
 */
function rawRedis(redis: RedisClient, copies: ShardCopy[], size: number, players: number) {
  const packings = new Map(copies.map(({ at }) => [at, packingFor(at.board, at.bucket.period)]));
  return () => {
    const now = new Date();
    const ids = randomPlayers(size, players);
    const buckets = [...packings.keys()];
    // Per bucket, each player's shard and packed score.
    const writes = new Map(
      buckets.map((at) => [
        at,
        ids.map((id) => ({ id, shard: shardOf(id, at.board.shards), packed: pack(at.board, packings.get(at)!, randomScore(), now, at.bucket.start) })),
      ]),
    );
    return Promise.all(
      copies.map(({ at, shard, key }) => {
        const pipeline = redis.pipeline();
        for (const write of writes.get(at)!) {
          if (write.shard === shard) pipeline.zadd(key, 'GT', write.packed, write.id).zrevrank(key, write.id).zscore(key, write.id);
          else pipeline.zcount(key, `(${write.packed}`, '+inf');
        }
        return pipeline.zcard(key).exec();
      }),
    );
  };
}

/** The issue's targets for the write scenarios (issue 14), against this run's figures. */
function writeTargets(scenario: WriteScenario, service: Measurement, costs: WriteCosts): Target[] {
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  const micros = (name: string) => costs.cpuMicros[name];
  const cpu = (name: string, label: string): Target => ({
    description: `${label} CPU ≤ 50 µs a result`,
    measured: `${micros(name) ?? '?'} µs`,
    met: (micros(name) ?? Infinity) <= 50,
  });
  if (scenario === 'submit') {
    return [
      {
        description: 'submit ≥ 5,800 results/s',
        measured: `${Math.round(service.throughput).toLocaleString('en-US')} results/s`,
        met: service.throughput >= 5_800,
      },
      { description: 'submit p99 < 50 ms', measured: ms(service.p99), met: service.requests > 0 && service.p99 < 50 },
    ];
  }
  return [
    {
      description: 'submit-batch ≥ 20,000 results/s',
      measured: `${Math.round(service.throughput * 100).toLocaleString('en-US')} results/s`,
      met: service.throughput * 100 >= 20_000,
    },
    { description: 'submit-batch p99 < 500 ms', measured: ms(service.p99), met: service.requests > 0 && service.p99 < 500 },
    cpu('postgres', 'PostgreSQL'),
    cpu('server', 'service'),
  ];
}

export async function runWrite(scenario: WriteScenario, run: RunOptions): Promise<Report> {
  const { target } = run;
  const size = scenario === 'submit' ? 1 : 100;
  const runId = randomBytes(4).toString('hex');
  let match = 0;
  const submit = graphqlBody(SUBMIT);
  const batch = graphqlBody(SUBMIT_BATCH);
  const withMetadata = run.metadata;
  const metadataOf = (m: number) => (withMetadata ? { metadata: entryMetadata(m) } : {});
  const body =
    scenario === 'submit'
      ? () => {
          const m = match++;
          return submit({
            input: { board: target.boardId, playerId: randomPlayer(target.players), score: randomScore(), matchId: `${runId}-${m}`, ...metadataOf(m) },
            withMetadata,
          });
        }
      : () => {
          const m = match++;
          return batch({ inputs: matchInputs(runId, m, size, target).map((input) => ({ ...input, ...metadataOf(m) })), withMetadata });
        };
  const auth = { authorization: `Bearer ${BENCH_SERVER_KEY}` };

  const startedAt = Date.now();
  const profileDir = join(RESULTS_DIR, 'profiles');
  const databaseUrl = benchDatabaseUrl(target.database);
  const costs: { name: string; costs: WriteCosts }[] = [];
  /** Runs `measure` with a probe on its window and keeps what a result cost beside the measurement. */
  async function costed(name: string, statements: Parameters<typeof writeCostProbe>[1], measure: (window: WriteCostProbe['window']) => Promise<Measurement>) {
    const probe = writeCostProbe(databaseUrl, statements);
    try {
      const measurement = await measure(probe.window);
      const found = await probe.costs(measurement, size);
      costs.push({ name, costs: found });
      return { measurement, costs: found };
    } finally {
      await probe.close();
    }
  }
  const state = await databaseState(databaseUrl, target.boardId);
  const serviceName = scenario === 'submit' ? 'service submitScore (HTTP)' : `service submitScores ×${size} (HTTP)`;
  const service = await withService({ target, runtime: run.runtime, ...(run.profile ? { cpuProfileDir: profileDir } : {}) }, (s) =>
    costed(serviceName, { metricsUrl: s.url.replace(/\/graphql$/, '/metrics') }, (window) => closedHttp(s.url, run, body, s.pid, auth, { window })),
  );
  const yoga = run.targetOnly ? undefined : await stockYogaHttp(run);

  const stores = await openBenchStores(target, 10);
  let log;
  let postgres;
  let redis;
  const buckets = stores.buckets.length;
  const logName = `raw PostgreSQL log write (${size} result${size > 1 ? 's' : ''}: idempotency key + log row, one statement)`;
  const postgresName = `raw PostgreSQL transaction (${size} result${size > 1 ? 's' : ''}: keys, log rows + ${size * keptBuckets(stores).length} board-score upserts)`;
  const copies: ShardCopy[] = stores.buckets.flatMap((at) => shardKeys(at).map((live, shard) => ({ at, shard, key: `${live}#benchcopy` })));
  try {
    if (!run.targetOnly) {
      log = await costed(logName, { perRequest: RAW_LOG_STATEMENTS }, (window) =>
        closedRaw(run, run.connections, rawLog(stores, size, runId, target), {}, window),
      );
      postgres = await costed(postgresName, { perRequest: RAW_TRANSACTION_STATEMENTS }, (window) =>
        closedRaw(run, run.connections, rawPostgres(stores, size, runId, target), {}, window),
      );
    }
    for (const { at, shard, key } of copies) await stores.redis.copy(shardKeys(at)[shard]!, key, 'REPLACE');
    redis = await closedRaw(run, run.connections, rawRedis(stores.redis, copies, size, target.players));
  } finally {
    // One UNLINK per key: on a cluster the copies are in many slots.
    await Promise.all(copies.map((copy) => stores.redis.unlink(copy.key)));
    if (!run.targetOnly) await forgetRawRows(stores.database.sql, target.boardId);
    await stores.close();
  }
  // With nothing else running: what a wake-up costs on this machine, to compare runs across machines.
  const wakeup = await measureWakeup();

  const unit = 'results/s';
  const targets: Target[] = run.targetOnly ? [] : writeTargets(scenario, service.measurement, service.costs);
  const shards = target.shards;
  const withCosts = (made: Row, found: WriteCosts): Row => ({ ...made, extra: { ...made.extra, perResult: found } });
  const rows: Row[] = [withCosts(row(serviceName, 'service', service.measurement, size, unit), service.costs)];
  if (yoga) rows.push(row('stock Yoga {__typename} (HTTP)', 'baseline', yoga));
  if (log) rows.push(withCosts(row(logName, 'baseline', log.measurement, size, unit), log.costs));
  if (postgres) rows.push(withCosts(row(postgresName, 'baseline', postgres.measurement, size, unit), postgres.costs));
  rows.push(
    row(
      `raw Redis (${size * buckets}× ZADD GT+ZREVRANK+ZSCORE${shards > 1 ? ` on the player's shard, ZCOUNT ahead on the ${shards - 1} others` : ''}, a pipeline per key)`,
      'baseline',
      redis,
      size,
      unit,
    ),
  );
  const ratios: Record<string, number> = {};
  if (yoga) ratios['service calls / stock Yoga requests'] = ratio(service.measurement.throughput, yoga.throughput);
  if (log) ratios['service / raw PostgreSQL log write'] = ratio(service.measurement.throughput, log.measurement.throughput);
  if (postgres) ratios['service / raw PostgreSQL transaction'] = ratio(service.measurement.throughput, postgres.measurement.throughput);
  ratios['service / raw Redis'] = ratio(service.measurement.throughput, redis.throughput);
  return {
    scenario,
    params: {
      seconds: run.seconds,
      warmup: run.warmup,
      connections: run.connections,
      resultsPerCall: size,
      players: target.players,
      runtime: run.runtime,
      profiled: run.profile,
      metadata: run.metadata,
      database: state,
      ...(target.boardId === BOARD_ID && shards === 1 ? {} : { board: target.boardId, shards }),
    },
    rows,
    ratios,
    targets,
    notes: [
      databaseNote(state),
      ...(run.profile ? profileNote(profileDir, startedAt) : []),
      ...costs.map(({ name, costs: found }) => costsNote(name, found)),
      `each call's results are ${size === 1 ? 'one random player' : `${size} distinct random players of one match`}; the service writes ${buckets} buckets per result (every period, no region)`,
      wakeupNote(wakeup),
    ],
  };
}
