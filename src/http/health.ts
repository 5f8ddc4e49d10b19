import type { ServerResponse } from 'node:http';
import type { RedisClient } from '../redis.js';
import type { Database } from '../db/client.js';

/** How long a readiness probe waits for each store. */
const PROBE_TIMEOUT_MS = 1_000;

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** `/healthz`: 200 while the process runs. */
export function answerHealth(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end('ok\n');
}

/** `/readyz`: 200 when PostgreSQL and Redis both answer, 503 (saying which does not) otherwise. */
export async function answerReadiness(res: ServerResponse, stores: { database: Database; redis: RedisClient }): Promise<void> {
  const [postgres, redis] = await Promise.allSettled([
    within(stores.database.sql`select 1`, PROBE_TIMEOUT_MS),
    within(stores.redis.ping(), PROBE_TIMEOUT_MS),
  ]);
  const body = { postgres: postgres.status === 'fulfilled' ? 'up' : 'down', redis: redis.status === 'fulfilled' ? 'up' : 'down' };
  const ready = body.postgres === 'up' && body.redis === 'up';
  res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(`${JSON.stringify(body)}\n`);
}
