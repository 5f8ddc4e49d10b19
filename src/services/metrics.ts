import type { ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ReplicaReads } from '../ranking/replicas.js';

/** Latency buckets (seconds) from a fast Redis call to a slow request. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * The service's Prometheus metrics, on a registry of its own (so several apps in one process,
 * as in tests, do not collide). `/metrics` serves `registry.metrics()`.
 */
export function createMetrics() {
  const registry = new Registry();
  // Node's default metrics under their standard names (process_cpu_seconds_total, nodejs_*), so
  // stock Node.js dashboards and alerts find them; only the service's own carry `leaderboard_`.
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    operationSeconds: new Histogram({
      name: 'leaderboard_operation_seconds',
      help: 'GraphQL operations, from execution start to result. type: query, mutation or subscription. field: the root fields, comma-separated (top, standing, submitScore, ...). outcome: ok, or the error codes of the answer, comma-separated: BAD_USER_INPUT, UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, RATE_LIMITED, UNAVAILABLE, INTERNAL.',
      labelNames: ['type', 'field', 'outcome'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    storeSeconds: new Histogram({
      name: 'leaderboard_store_seconds',
      help: "Every call to a store, from the call to its answer. store: postgres or redis. call: for postgres the statement's first keyword (select, insert, update, delete, with, ...) or begin (a whole transaction); for redis the command or script (zadd, hmget, readTop, applyScores, ...). outcome: ok or error.",
      labelNames: ['store', 'call', 'outcome'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    postgresStatements: new Counter({
      name: 'leaderboard_postgres_statements_total',
      help: "Statements sent to PostgreSQL, those inside transactions included, a transaction's BEGIN and COMMIT (or ROLLBACK) one each: what a studio sizes its PostgreSQL by (divide by leaderboard_submissions_total for statements per result).",
      registers: [registry],
    }),
    submissions: new Counter({
      name: 'leaderboard_submissions_total',
      help: 'Submitted results by outcome: accepted, duplicate (recorded before), rejected (BAD_USER_INPUT or NOT_FOUND), rate_limited, unavailable (a store is down: nothing recorded), failed (an internal error).',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    indexBacklog: new Gauge({
      name: 'leaderboard_index_backlog',
      help: 'Committed (board, player) batches the index has not confirmed yet (counted up to 100,000): above 0 for more than a few seconds, the index is behind.',
      // The deployment's, not the process's: never summed over workers (see cluster-metrics.ts).
      aggregator: 'omit',
      registers: [registry],
    }),
    inactivePlayersRemoved: new Counter({
      name: 'leaderboard_inactive_players_removed_total',
      help: "Members taken out of a board's ALL_TIME and SEASON sorted sets (each region's and shard's counted apart) because the player had no result for the board's inactiveAfterDays (see jobs/inactive-players.ts); those who came back at once are not counted.",
      labelNames: ['board'] as const,
      registers: [registry],
    }),
    indexBehind: new Counter({
      name: 'leaderboard_index_write_failures_total',
      help: 'Committed batches whose index write failed: the index is behind until it is caught up.',
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: 'leaderboard_webhook_deliveries_total',
      help: 'Webhook delivery attempts made by this process. outcome: delivered (a 2xx in time), retried (failed, tried again later) or failed (failed past the 24 hours: FAILED).',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    webhookPending: new Gauge({
      name: 'leaderboard_webhook_pending_deliveries',
      help: 'Webhook deliveries waiting (PENDING) in the deployment, as last counted by this process (each minute).',
      registers: [registry],
    }),
    topChangedEvents: new Counter({
      name: 'leaderboard_top_changed_events_total',
      help: 'topChanged views sent to subscribers.',
      registers: [registry],
    }),
    topChangedSubscribers: new Gauge({
      name: 'leaderboard_top_changed_subscribers',
      help: 'Open topChanged subscriptions in this process.',
      registers: [registry],
    }),
    cohortChangedEvents: new Counter({
      name: 'leaderboard_cohort_changed_events_total',
      help: 'cohortChanged views sent to subscribers.',
      registers: [registry],
    }),
    cohortChangedSubscribers: new Gauge({
      name: 'leaderboard_cohort_changed_subscribers',
      help: 'Open cohortChanged subscriptions in this process.',
      registers: [registry],
    }),
    friendOvertakenEvents: new Counter({
      name: 'leaderboard_friend_overtaken_events_total',
      help: 'Overtakings told (a passer and a player passed, to webhooks and friendOvertook subscribers).',
      registers: [registry],
    }),
    friendOvertookSubscribers: new Gauge({
      name: 'leaderboard_friend_overtook_subscribers',
      help: 'Open friendOvertook subscriptions in this process.',
      registers: [registry],
    }),
    indexDrift: new Gauge({
      name: 'leaderboard_index_drift',
      help: "Per live bucket: durable board scores (unflagged) minus the sorted set's size. Not 0 means the index is missing players (or holds extra). board: the board id. period: ALL_TIME, SEASON, MONTHLY, WEEKLY or DAILY. bucket: its label (all, a season id, 2026-11, 2026-W48, 2026-11-29). region: a region of the board, or empty for the global list.",
      labelNames: ['board', 'period', 'bucket', 'region'] as const,
      // The deployment's last measurement, the same in every process; never summed over workers (see cluster-metrics.ts).
      aggregator: 'omit',
      registers: [registry],
    }),
    postgresPrimary: new Gauge({
      name: 'leaderboard_postgres_primary',
      help: '1 for the PostgreSQL host (host:port, as DATABASE_URL names it) the process writes to: with several hosts, the one found to be the primary (pg_is_in_recovery() false). No series while none is a primary: after the primary is lost, until a standby is promoted. With WORKERS, a host any worker writes to.',
      labelNames: ['host'] as const,
      aggregator: 'max',
      registers: [registry],
    }),
    indexDriftMeasuredAt: new Gauge({
      name: 'leaderboard_index_drift_timestamp_seconds',
      help: 'When the figures of leaderboard_index_drift were measured (Unix time, seconds): they are renewed at most once per INDEX_DRIFT_INTERVAL_MS by one process of the deployment.',
      aggregator: 'omit',
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** `leaderboard_postgres_primary`: 1 for the host the pool writes to, no series while none is a primary (see db/primary.ts). */
export function showPostgresPrimary(metrics: Metrics, host: string | null): void {
  metrics.postgresPrimary.reset();
  if (host) metrics.postgresPrimary.set({ host }, 1);
}

/**
 * The replicas' gauges, read from the heartbeats when /metrics is asked:
 * `leaderboard_redis_replica_lag_seconds{replica}` (no series for one that did not answer its last
 * heartbeat read) and `leaderboard_redis_replica_reads{replica}`, 1 while reads go to it.
 */
export function showReplicas(metrics: Metrics, replicas: Pick<ReplicaReads, 'states'>): void {
  new Gauge({
    name: 'leaderboard_redis_replica_lag_seconds',
    help: 'How far each Redis read replica (host:port) is behind its master, from the heartbeat this process wrote on the master and last read back from it (see REDIS_REPLICA_MAX_LAG_MS). No series for a replica whose last heartbeat read failed. With WORKERS, the largest of the workers.',
    labelNames: ['replica'] as const,
    aggregator: 'max',
    registers: [metrics.registry],
    collect() {
      this.reset();
      for (const { replica, lagMs } of replicas.states()) if (lagMs !== null) this.set({ replica }, lagMs / 1000);
    },
  });
  new Gauge({
    name: 'leaderboard_redis_replica_reads',
    help: '1 while the reads that may be a little stale go to this Redis read replica (host:port), 0 while it is skipped (behind by more than REDIS_REPLICA_MAX_LAG_MS, or not answering). With WORKERS, 1 only when every worker reads from it.',
    labelNames: ['replica'] as const,
    aggregator: 'min',
    registers: [metrics.registry],
    collect() {
      this.reset();
      for (const { replica, fresh } of replicas.states()) this.set({ replica }, fresh ? 1 : 0);
    },
  });
}

/**
 * `/metrics`: the Prometheus text format, after `refresh` updates the gauges measured on demand.
 * With `everyWorker` (WORKERS > 1, see cluster-metrics.ts) the per-process metrics are every
 * worker's aggregate, and the deployment-wide gauges this process's; 503 when they cannot be
 * gathered, rather than one worker's counters passed off as the whole.
 */
export async function answerMetrics(res: ServerResponse, metrics: Metrics, refresh: () => Promise<void>, everyWorker?: () => Promise<string>): Promise<void> {
  // A store that does not answer must not cost us the rest of the metrics.
  await refresh().catch(() => undefined);
  let body: string;
  try {
    body = everyWorker
      ? `${await everyWorker()}\n${await metrics.registry.getSingleMetricAsString('leaderboard_index_backlog')}\n\n${await metrics.registry.getSingleMetricAsString('leaderboard_index_drift')}\n`
      : await metrics.registry.metrics();
  } catch (error) {
    res.writeHead(503, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end(`${error instanceof Error ? error.message : String(error)}\n`);
    return;
  }
  res.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' }).end(body);
}
