import type { Histogram } from 'prom-client';
import type { TestApp } from './test-app.js';

/**
 * How many observations an app's histogram `metric` holds over every series whose labels include
 * `labels` (its `_count`, summed), read from its own registry: how many store calls of one kind
 * it made (leaderboard_store_seconds, `{ call }`), how many operations it answered with an
 * outcome (leaderboard_operation_seconds, `{ field, outcome }`). 0 before the first.
 */
export async function observations(app: TestApp, metric: string, labels: Record<string, string>): Promise<number> {
  const values = (await (app.app.parts.metrics.registry.getSingleMetric(metric) as Histogram | undefined)?.get())?.values ?? [];
  const wanted = Object.entries(labels);
  return values
    .filter((value) => value.metricName === `${metric}_count` && wanted.every(([name, label]) => value.labels[name] === label))
    .reduce((total, value) => total + value.value, 0);
}
