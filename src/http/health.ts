import type { ServerResponse } from 'node:http';
import { type RedisClient, isCluster, mastersOf } from '../redis.js';
import type { Database } from '../db/client.js';
import type { SubmissionHealth } from '../resolvers/submission-health.js';

/** How long a readiness probe waits for each store. */
const PROBE_TIMEOUT_MS = 1_000;

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Whether Redis answers: the node PINGs; on a Cluster, the cluster says it is whole (cluster_state:ok,
 * every slot served) and every master PINGs, since a master away leaves its buckets unreadable.
 * O(masters).
 */
async function redisAnswers(redis: RedisClient): Promise<void> {
  if (!isCluster(redis)) {
    await redis.ping();
    return;
  }
  if (redis.status !== 'ready') throw new Error(`the cluster client is ${redis.status}`);
  const info = await redis.cluster('INFO');
  if (!/^cluster_state:ok\b/m.test(info)) throw new Error('the cluster is not whole');
  await Promise.all(mastersOf(redis).map((master) => master.ping()));
}

/** `/healthz`: 200 while the process runs. */
export function answerHealth(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end('ok\n');
}

/**
 * `/readyz`: 200 when PostgreSQL commits a transaction, Redis (every master of a Cluster) answers,
 * and submissions have not been failing (see SubmissionHealth); 503, saying which is not, otherwise.
 */
export async function answerReadiness(
  res: ServerResponse,
  stores: { database: Database; redis: RedisClient; submissions: SubmissionHealth },
): Promise<void> {
  const [postgres, redis] = await Promise.allSettled([
    // A transaction, not a bare select: BEGIN and COMMIT are what a submission needs to get through.
    within(stores.database.sql.begin((tx) => tx`select 1`), PROBE_TIMEOUT_MS),
    within(redisAnswers(stores.redis), PROBE_TIMEOUT_MS),
  ]);
  const failing = stores.submissions.problem();
  const body = {
    postgres: postgres.status === 'fulfilled' ? 'up' : 'down',
    redis: redis.status === 'fulfilled' ? 'up' : 'down',
    submissions: failing ? 'failing' : 'ok',
    ...(failing ? { problem: failing } : {}),
  };
  const ready = body.postgres === 'up' && body.redis === 'up' && !failing;
  res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(`${JSON.stringify(body)}\n`);
}
