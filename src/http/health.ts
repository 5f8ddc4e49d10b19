import type { ServerResponse } from 'node:http';
import type { StoreProbes } from '../services/store-health.js';
import type { SubmissionHealth } from '../services/submission-health.js';

/** `/healthz`: 200 while the process runs. */
export function answerHealth(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end('ok\n');
}

/**
 * `/readyz`: 200 when PostgreSQL commits a transaction, Redis (every master of a Cluster) answers,
 * and submissions have not been failing (see SubmissionHealth); 503, saying which is not, otherwise.
 * `postgresHost` says which host of DATABASE_URL the pool writes to (`host:port`), null while none
 * of them is a primary: after the primary is lost, 503 until a standby is promoted and found.
 */
export async function answerReadiness(
  res: ServerResponse,
  deps: { probeStores(): Promise<StoreProbes>; submissionHealth: Pick<SubmissionHealth, 'problem'> },
  primary?: { current(): string | null },
): Promise<void> {
  const { postgres, redis } = await deps.probeStores();
  const failing = deps.submissionHealth.problem();
  const body = {
    postgres: postgres.up ? 'up' : 'down',
    ...(primary ? { postgresHost: postgres.up ? primary.current() : null } : {}),
    redis: redis.up ? 'up' : 'down',
    submissions: failing ? 'failing' : 'ok',
    ...(failing ? { problem: failing } : {}),
  };
  const ready = body.postgres === 'up' && body.redis === 'up' && !failing;
  res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(`${JSON.stringify(body)}\n`);
}
