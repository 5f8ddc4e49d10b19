/**
 * The sql-rank scenario: the my-rank question answered by PostgreSQL, counting the players ahead
 * (`SELECT count(*) … WHERE score > $1`, ties broken by who reached the score first), on the
 * 1,000,000-player board, beside the sorted set's ZREVRANK, with the same concurrency. Twice: with
 * the schema's indexes only, and with an index on (list, score, reached_at) made for the run and
 * dropped after, so PostgreSQL gets its best case. A sample of answers is checked against
 * ZREVRANK, so both sides answer the same question.
 */
import { PLAYERS, randomPlayer } from '../lib/env.js';
import type { Measurement } from '../lib/load.js';
import { type Report, row } from '../lib/report.js';
import { type BenchStores, openBenchStores } from '../seed.js';
import { bucketKey } from '../../src/ranking/keys.js';
import { type RunOptions, closedRaw, ratio } from './common.js';

const RANK_INDEX = 'bench_board_scores_rank_idx';

function sqlRank(stores: BenchStores, bucket: string) {
  const sql = stores.database.sql;
  return async (player: string): Promise<number> => {
    const [found] = await sql<[{ ahead: number }?]>`
      with me as (
        select score, reached_at from board_scores
        where board_id = 'bench' and period = 'ALL_TIME' and bucket = ${bucket} and region = '' and player_id = ${player})
      select count(*)::int as ahead from board_scores s, me
      where s.board_id = 'bench' and s.period = 'ALL_TIME' and s.bucket = ${bucket} and s.region = ''
        and (s.score > me.score or (s.score = me.score and s.reached_at < me.reached_at))`;
    return (found?.ahead ?? 0) + 1;
  };
}

export async function runSqlRank(run: RunOptions): Promise<Report> {
  const stores = await openBenchStores(run.target, run.connections);
  const sql = stores.database.sql;
  const allTime = stores.buckets.find((at) => at.bucket.period === 'ALL_TIME')!;
  const key = bucketKey(allTime);
  const rank = sqlRank(stores, allTime.bucket.label);
  const notes: string[] = [];
  let plain: Measurement;
  let indexed: Measurement;
  let zrevrank: Measurement;
  try {
    // Both sides answer the same question: the same rank for a sample of players (a tie inside
    // one packed time unit may order two players differently, hence "of").
    let same = 0;
    const sample = 20;
    for (let i = 0; i < sample; i++) {
      const player = randomPlayer();
      if ((await rank(player)) === ((await stores.redis.zrevrank(key, player)) ?? -2) + 1) same++;
    }
    notes.push(`${same} of ${sample} sampled ranks equal ZREVRANK + 1`);

    await sql`drop index if exists ${sql(RANK_INDEX)}`;
    plain = await closedRaw(run, run.connections, () => rank(randomPlayer()));
    const t = performance.now();
    await sql`create index ${sql(RANK_INDEX)} on board_scores (board_id, period, bucket, region, score, reached_at)`;
    notes.push(`the score index took ${((performance.now() - t) / 1000).toFixed(1)} s to build`);
    indexed = await closedRaw(run, run.connections, () => rank(randomPlayer()));
    zrevrank = await closedRaw(run, run.connections, () => stores.redis.zrevrank(key, randomPlayer()));
  } finally {
    await sql`drop index if exists ${sql(RANK_INDEX)}`;
    await stores.close();
  }
  return {
    scenario: 'sql-rank',
    params: { seconds: run.seconds, warmup: run.warmup, connections: run.connections, players: PLAYERS },
    rows: [
      row('Redis ZREVRANK (sorted set)', 'service', zrevrank),
      row('PostgreSQL count(*) ahead, schema indexes only', 'baseline', plain),
      row('PostgreSQL count(*) ahead, with a (list, score, reached_at) index', 'baseline', indexed),
    ],
    ratios: {
      'ZREVRANK / SQL count (no score index)': ratio(zrevrank.throughput, plain.throughput),
      'ZREVRANK / SQL count (score index)': ratio(zrevrank.throughput, indexed.throughput),
    },
    notes,
  };
}
