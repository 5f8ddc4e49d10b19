/** What the scenarios share: the run's options and the processes they measure. */
import { type BaselineProcess, startBaselineYoga } from '../lib/baseline-yoga.js';
import { graphqlBody, httpGraphql, wsGraphql } from '../lib/clients.js';
import { type Measurement, type WindowOptions, closedLoop } from '../lib/load.js';
import type { BenchTarget } from '../lib/env.js';
import { type ServiceOptions, type ServiceProcess, startService } from '../lib/service.js';

export interface RunOptions {
  /** Seconds measured per measurement. */
  seconds: number;
  /** Seconds of load before each measurement. */
  warmup: number;
  /** HTTP connections, or WebSocket sockets, of the load generator. */
  connections: number;
  /** Operations in flight per WebSocket socket in closed-loop scenarios. */
  inflight: number;
  /** Players a match has in the peak scenario (its results go in one submitScores). */
  match: number;
  /** Multiplies the peak scenario's rates. */
  scale: number;
  runtime: 'tsx' | 'dist';
  /**
   * Entry metadata in use: each result carries a small object, and every Standing selection asks for
   * `metadata` (reads and submit payloads), to show what the feature costs when used. Default false:
   * nothing sent or selected, the figures to compare with those before the feature.
   */
  metadata: boolean;
  /** Write a CPU profile of the service during the HTTP phase (standing, around, top, friends). */
  profile: boolean;
  /** Where it runs: database, Redis, board, players. The runner sets BENCH_TARGET; the cluster run others. */
  target: BenchTarget;
  /**
   * Measure only what depends on the target: the service over HTTP and the raw Redis operations,
   * not graphql-ws, the stock servers nor the raw PostgreSQL transaction. The cluster run sets it.
   */
  targetOnly: boolean;
  /**
   * Rounds of stock Yoga and the service over HTTP (and over graphql-ws for `standing` and
   * `standing-named`) taken in turn after a read scenario's phases (see rounds.ts, interleavedReads),
   * for the scenarios with an HTTP target. Default 0: none.
   */
  rounds: number;
}

/**
 * The run of a script that measures reads of its own against `target` over HTTP (one request in
 * flight a connection, no metadata, no profile), from its command line's options as given.
 */
export function targetReadRun(
  target: BenchTarget,
  options: { seconds: string; warmup: string; connections: string; runtime: string; rounds?: string | undefined },
): RunOptions {
  return {
    seconds: Number(options.seconds),
    warmup: Number(options.warmup),
    connections: Number(options.connections),
    inflight: 1,
    match: 10,
    scale: 1,
    runtime: options.runtime === 'tsx' ? 'tsx' : 'dist',
    metadata: false,
    profile: false,
    target,
    targetOnly: true,
    rounds: Number(options.rounds ?? 0),
  };
}

/** Runs `fn` against a fresh service process, stopped afterwards. */
export async function withService<T>(options: ServiceOptions, fn: (service: ServiceProcess) => Promise<T>): Promise<T> {
  const service = await startService(options);
  try {
    return await fn(service);
  } finally {
    await service.stop();
  }
}

/** Runs `fn` against a fresh stock Yoga (and stock graphql-ws) process, stopped afterwards. */
export async function withStock<T>(fn: (stock: BaselineProcess) => Promise<T>): Promise<T> {
  const stock = await startBaselineYoga();
  try {
    return await fn(stock);
  } finally {
    await stock.stop();
  }
}

export const TYPENAME = '{ __typename }';

/** The request body every stock Yoga measurement sends. */
const TYPENAME_BODY = graphqlBody(TYPENAME)();

/** A running stock Yoga's `{ __typename }` over HTTP with the run's connections: what every HTTP target is set against. */
export const measureStockYoga = (stock: BaselineProcess, run: RunOptions): Promise<Measurement> => closedHttp(stock.url, run, () => TYPENAME_BODY, stock.pid);

/** Closed loop of one HTTP query, `connections` at once; `body` builds each request's body. */
export async function closedHttp(
  url: string,
  run: RunOptions,
  body: () => string,
  pid: number | undefined,
  headers: Record<string, string> = {},
  /** Hooks at the measured window's ends (see WindowOptions), and the service whose costs per request are read. */
  { window, costOf }: { window?: WindowOptions['window']; costOf?: string } = {},
): Promise<Measurement> {
  const client = httpGraphql(url, run.connections, headers);
  try {
    return await closedLoop({
      concurrency: run.connections,
      warmupSeconds: run.warmup,
      seconds: run.seconds,
      watchPids: { server: pid },
      ...(window ? { window } : {}),
      ...(costOf ? { costOf } : {}),
      operation: () => client.post(body()),
    });
  } finally {
    await client.close();
  }
}

/** Closed loop over graphql-ws: `connections` sockets, `inflight` operations in flight on each. */
export async function closedWs(
  url: string,
  run: RunOptions,
  query: string,
  variables: (() => Record<string, unknown>) | undefined,
  pid: number | undefined,
  costOf?: string,
): Promise<Measurement> {
  const client = await wsGraphql(url, run.connections);
  try {
    return await closedLoop({
      concurrency: run.connections * run.inflight,
      warmupSeconds: run.warmup,
      seconds: run.seconds,
      watchPids: { server: pid },
      ...(costOf ? { costOf } : {}),
      operation: (worker) => client.run(worker, query, variables?.()),
    });
  } finally {
    await client.close();
  }
}

/** The stock Yoga's `{ __typename }` over HTTP with the same connections: the figure targets are set against. */
export async function stockYogaHttp(run: RunOptions): Promise<Measurement> {
  return withStock((stock) => measureStockYoga(stock, run));
}

/** Plain node:http answering fixed bytes to the same bodies, with the same connections: the ceiling of any Node HTTP server here. */
export async function plainBytesHttp(run: RunOptions, body: () => string): Promise<Measurement> {
  return withStock((stock) => closedHttp(stock.bytesUrl, run, body, stock.pid));
}

/** The stock graphql-ws server's `{ __typename }` with the same sockets and operations in flight. */
export async function stockGraphqlWs(run: RunOptions): Promise<Measurement> {
  return withStock((stock) => closedWs(stock.wsUrl, run, TYPENAME, undefined, stock.pid));
}

export const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 100) / 100 : NaN);

/** Closed loop of an in-process operation (a raw store call): `concurrency` at once. */
export function closedRaw(
  run: RunOptions,
  concurrency: number,
  operation: () => Promise<unknown>,
  watchPids: Record<string, number | undefined> = {},
  window?: WindowOptions['window'],
) {
  return closedLoop({ concurrency, warmupSeconds: run.warmup, seconds: run.seconds, watchPids, operation, ...(window ? { window } : {}) });
}
