import type { ServerResponse } from 'node:http';
import type { RedisClient } from '../redis.js';
import type { Database } from '../db/client.js';
import { probeStores } from '../resolvers/store-health.js';

/** `/healthz`: 200 while the process runs. */
export function answerHealth(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end('ok\n');
}

/** `/readyz`: 200 when PostgreSQL and Redis (every master of a Cluster) both answer, 503 (saying which does not) otherwise. */
export async function answerReadiness(res: ServerResponse, stores: { database: Database; redis: RedisClient }): Promise<void> {
  const { postgres, redis } = await probeStores(stores);
  const body = { postgres: postgres.up ? 'up' : 'down', redis: redis.up ? 'up' : 'down' };
  const ready = body.postgres === 'up' && body.redis === 'up';
  res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(`${JSON.stringify(body)}\n`);
}
