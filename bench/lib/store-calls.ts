import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * What one read costs the stores, counted by the service itself: its `/metrics` counts every Redis
 * command and script it sends and every PostgreSQL statement and transaction it runs
 * (`leaderboard_store_seconds_count`, see src/services/store-timing.ts), and its own CPU
 * (`process_cpu_seconds_total`) and the main thread's garbage-collection pauses
 * (`nodejs_gc_duration_seconds_sum`, every kind); and what its heap allocated (the bench's
 * allocation meter, allocation-meter.js, on its own socket). Sampled at the start and the end of a
 * measured window, the differences divided by the requests answered give the cost of one read. Background jobs
 * (catch-up, the season closer) are counted too: a few calls a second, which is noise at
 * thousands of reads a second.
 */

/** Totals since the service started. */
export interface StoreCalls {
  redis: number;
  /** Statements outside a transaction plus transactions (each counted once, as BEGIN … COMMIT). */
  postgres: number;
  /** Seconds of CPU the service process used (user + system). */
  cpuSeconds: number;
  /**
   * Seconds the main thread spent paused for garbage collection (minor, major, incremental and
   * weak-callback pauses together): time it served no request. What a request's allocations cost
   * it, beyond the allocation itself: a scavenge copies what is alive, so its pause grows with what
   * every request in flight holds, and it comes as often as the young generation fills.
   */
  gcSeconds: number;
  /** Bytes allocated on the JavaScript heap (allocation-meter.js); undefined where the meter is off (WORKERS > 1). */
  allocatedBytes: number | undefined;
}

/** The Unix socket the allocation meter of the service on `port` answers on (service.ts hands it the path). */
export const allocationSocket = (port: number) => join(tmpdir(), `lb-bench-allocation-${port}.sock`);

/** The allocation meter's total for the service on `port`, or undefined when it does not answer with one. */
export function readAllocated(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const asked = request({ socketPath: allocationSocket(port), path: '/' }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        const total = body === '' ? NaN : Number(body);
        resolve(Number.isFinite(total) ? total : undefined);
      });
    });
    asked.once('error', () => resolve(undefined));
    asked.end();
  });
}

const COUNT = /^leaderboard_store_seconds_count\{([^}]*)\} (\S+)$/;
const GC_SUM = /^nodejs_gc_duration_seconds_sum\{[^}]*\} (\S+)$/;

/** Reads the totals from a service's `/metrics` (`graphqlUrl` is its …/graphql address). */
export async function readStoreCalls(graphqlUrl: string): Promise<StoreCalls> {
  const url = new URL(graphqlUrl);
  const [text, allocatedBytes] = await Promise.all([fetch(new URL('/metrics', url)).then((response) => response.text()), readAllocated(Number(url.port))]);
  const calls: StoreCalls = { redis: 0, postgres: 0, cpuSeconds: 0, gcSeconds: 0, allocatedBytes };
  for (const line of text.split('\n')) {
    const count = COUNT.exec(line);
    const gc = GC_SUM.exec(line);
    if (count) {
      const store = /store="(\w+)"/.exec(count[1]!)?.[1];
      if (store === 'redis' || store === 'postgres') calls[store] += Number(count[2]);
    } else if (gc) {
      calls.gcSeconds += Number(gc[1]);
    } else if (line.startsWith('process_cpu_seconds_total ')) {
      calls.cpuSeconds = Number(line.slice('process_cpu_seconds_total '.length));
    }
  }
  return calls;
}

/** Per request over a window: Redis commands, PostgreSQL transactions, µs of service CPU, µs the main thread was paused for garbage collection, and KB allocated. */
export interface CostPerRequest {
  redisCommands: number;
  postgresTransactions: number;
  serviceCpuUs: number;
  /** Absent in runs recorded before it was measured. */
  gcPauseUs?: number;
  /** KB the service's heap allocated; absent before it was measured, and where the meter is off. */
  allocatedKb?: number;
}

export function costPerRequest(start: StoreCalls, end: StoreCalls, requests: number): CostPerRequest | undefined {
  if (requests <= 0) return undefined;
  const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;
  return {
    redisCommands: round((end.redis - start.redis) / requests, 2),
    postgresTransactions: round((end.postgres - start.postgres) / requests, 4),
    serviceCpuUs: round(((end.cpuSeconds - start.cpuSeconds) * 1e6) / requests, 0),
    gcPauseUs: round(((end.gcSeconds - start.gcSeconds) * 1e6) / requests, 0),
    ...(start.allocatedBytes === undefined || end.allocatedBytes === undefined
      ? {}
      : { allocatedKb: round((end.allocatedBytes - start.allocatedBytes) / 1e3 / requests, 1) }),
  };
}
