import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, Registry } from 'prom-client';

/**
 * `/metrics` under WORKERS > 1. The workers share one port, so a scrape lands on any one of them;
 * serving that worker's own counters would make every series jump between workers from scrape to
 * scrape. Instead the worker that takes the scrape asks the primary, which gathers every worker's
 * registry (prom-client's AggregatorRegistry, over the cluster's IPC channel) and answers their
 * aggregate: counters and histograms summed, the default process metrics as prom-client
 * aggregates each. Gauges that measure the deployment rather than the process (the index backlog
 * and drift) are marked `aggregator: 'omit'` and served from the scraped worker alone.
 */

const REQUEST = 'leaderboard:metrics-request';
const ANSWER = 'leaderboard:metrics-answer';

interface MetricsRequest {
  type: typeof REQUEST;
  id: string;
}
interface MetricsAnswer {
  type: typeof ANSWER;
  id: string;
  text?: string;
  error?: string;
}

const isRequest = (message: unknown): message is MetricsRequest => (message as MetricsRequest | null)?.type === REQUEST;
const isAnswer = (message: unknown): message is MetricsAnswer => (message as MetricsAnswer | null)?.type === ANSWER;

/** Primary: answers the workers' requests for every worker's metrics. Call once, before forking. */
export function answerWorkersMetricsRequests(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (!isRequest(message)) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: ANSWER, id: message.id, text } satisfies MetricsAnswer),
      (error: unknown) => worker.send({ type: ANSWER, id: message.id, error: error instanceof Error ? error.message : String(error) } satisfies MetricsAnswer),
    );
  });
}

export interface WorkerMetrics {
  /** Serves `registry` to the primary from now on (until then, nothing). */
  share(registry: Registry): void;
  /** Every worker's metrics, through the primary; rejects when they do not come within 10 s. O(metrics × workers), in the primary. */
  everyWorker: () => Promise<string>;
}

/**
 * Worker: answers the primary's requests for this worker's metrics at once (empty until
 * {@link WorkerMetrics.share}), so that a worker still starting never holds up a scrape, and reads
 * every worker's metrics through the primary.
 */
export function joinWorkerMetrics(timeoutMs = 10_000): WorkerMetrics {
  AggregatorRegistry.setRegistries([new Registry()]);
  // Constructing it in a worker installs prom-client's responder to the primary's requests.
  new AggregatorRegistry();
  const waiting = new Map<string, { resolve: (text: string) => void; reject: (error: Error) => void }>();
  process.on('message', (message: unknown) => {
    if (!isAnswer(message)) return;
    const request = waiting.get(message.id);
    waiting.delete(message.id);
    if (message.text !== undefined) request?.resolve(message.text);
    else request?.reject(new Error(`the primary could not gather the workers' metrics: ${message.error}`));
  });
  return {
    share(registry) {
      AggregatorRegistry.setRegistries([registry]);
    },
    everyWorker: () =>
      new Promise<string>((resolve, reject) => {
        const id = randomUUID();
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`the primary did not answer with the workers' metrics within ${timeoutMs} ms`));
        }, timeoutMs);
        const settle =
          <T>(done: (value: T) => void) =>
          (value: T) => {
            clearTimeout(timer);
            done(value);
          };
        waiting.set(id, { resolve: settle(resolve), reject: settle(reject) });
        process.send?.({ type: REQUEST, id } satisfies MetricsRequest);
      }),
  };
}
