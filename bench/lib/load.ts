/**
 * The load drivers: a closed loop (a fixed number of requests in flight, each sent as soon as the
 * last answered) and an open loop (requests sent on a schedule, whatever the answers do, so a slow
 * service shows as latency instead of hiding behind a slower sender). Both warm up first and then
 * record every latency of the measured window into an HDR histogram (microseconds, 3 significant
 * digits).
 */
import * as hdr from 'hdr-histogram-js';
import { type CpuSample, cpuSince, sampleCpu, waitForQuiet } from './cpu.js';
import { type CostPerRequest, type StoreCalls, costPerRequest, readStoreCalls } from './store-calls.js';

/** The figures of one measured operation. Latencies in milliseconds. */
export interface Measurement {
  /** Requests answered without error in the measured window. */
  requests: number;
  errors: number;
  /** The first error seen, for the report. */
  firstError?: string;
  /** The errors by kind (see {@link errorKind}), when there were any. */
  errorKinds?: Record<string, number>;
  /** The measured window. */
  seconds: number;
  /** requests / seconds. */
  throughput: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
  /** CPU use over the measured window, in cores (1 = one core busy). */
  cpu?: Record<string, number>;
  /** False when other jobs kept the machine busy right before the measurement (see waitForQuiet). */
  quiet?: boolean;
  /** What one request cost the service's stores and CPU, from its /metrics (see store-calls.ts). */
  cost?: CostPerRequest;
}

/** Whether each measurement first waits for the machine to be quiet, and how long at most. */
export const quietGate = { enabled: true, maxWaitMs: 10 * 60_000 };

async function quietBefore(): Promise<boolean> {
  return quietGate.enabled ? waitForQuiet({ maxWaitMs: quietGate.maxWaitMs }) : true;
}

/** An open-loop stream's figures: a {@link Measurement} plus whether the schedule was kept up with. */
export interface OpenMeasurement extends Measurement {
  /** The rate asked for, requests a second. */
  targetRate: number;
  /** Answers a second that arrived (by arrival time) in the measured window. */
  achievedRate: number;
  /** Requests sent but not answered at the end of the window. */
  backlogAtEnd: number;
  /** How late the sender was, at worst, against the schedule (timer slack): latency counts it. */
  maxSendLagMs: number;
  /** Requests due in the window but not sent because the stream already had `maxInFlight` unanswered. */
  skipped: number;
  /**
   * Held: answers arrived at 99% of the target rate or more, without errors, and less than one
   * second of traffic was waiting at the end of the window.
   */
  held: boolean;
}

/**
 * What kind of error `error` is, for counting: its `kind` when it has one (a refusal the client
 * named, e.g. RATE_LIMITED), else its `code` (ECONNRESET, UND_ERR_SOCKET…), else "error".
 */
export function errorKind(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const { kind, code } = error as { kind?: unknown; code?: unknown };
    if (typeof kind === 'string') return kind;
    if (typeof code === 'string') return code;
  }
  return 'error';
}

/** Latencies of one operation, in an HDR histogram of microseconds. */
export class Recorder {
  private readonly histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: 3 });
  requests = 0;
  errors = 0;
  firstError: string | undefined;
  readonly errorKinds: Record<string, number> = {};

  /** Records one answered request that took `ms` milliseconds. O(1). */
  record(ms: number): void {
    this.requests++;
    this.histogram.recordValue(Math.max(1, Math.round(ms * 1000)));
  }

  error(error: unknown): void {
    this.errors++;
    const kind = errorKind(error);
    this.errorKinds[kind] = (this.errorKinds[kind] ?? 0) + 1;
    this.firstError ??= error instanceof Error ? error.message : String(error);
  }

  figures(seconds: number, requests = this.requests): Measurement {
    const at = (percentile: number) => this.histogram.getValueAtPercentile(percentile) / 1000;
    return {
      requests,
      errors: this.errors,
      ...(this.firstError ? { firstError: this.firstError.slice(0, 300) } : {}),
      ...(this.errors > 0 ? { errorKinds: { ...this.errorKinds } } : {}),
      seconds,
      throughput: requests / seconds,
      p50: at(50),
      p95: at(95),
      p99: at(99),
      max: this.histogram.maxValue / 1000,
      mean: this.histogram.mean / 1000,
    };
  }
}

export interface WindowOptions {
  /** Seconds of load before recording starts. */
  warmupSeconds: number;
  /** Seconds recorded. */
  seconds: number;
  /** Processes whose CPU use is reported beside the figures, by name. Default: none. */
  watchPids?: Record<string, number | undefined>;
  /**
   * Called when the measured window opens and when it closes (while the load still runs, so that
   * counters another process flushes late, like PostgreSQL's table statistics, lag the same at
   * both ends). Default: none.
   */
  window?: { opened(): void; closed(): void };
  /** A service's …/graphql address: its store calls and CPU per request are read from its /metrics. Default: none. */
  costOf?: string;
}

export interface ClosedLoopOptions extends WindowOptions {
  /** Requests in flight at any time. */
  concurrency: number;
  /** One request; throws on any error. `worker` is 0..concurrency-1, so each may keep to one socket. */
  operation: (worker: number) => Promise<unknown>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Closed loop: `concurrency` workers, each sending its next request as soon as the last one is
 * answered. Records the requests that start inside the measured window.
 */
export async function closedLoop(options: ClosedLoopOptions): Promise<Measurement> {
  const quiet = await quietBefore();
  const recorder = new Recorder();
  const started = performance.now();
  const from = started + options.warmupSeconds * 1000;
  const until = from + options.seconds * 1000;
  let cpuAtStart: CpuSample | undefined;
  let callsAtStart: Promise<StoreCalls | undefined> = Promise.resolve(undefined);
  const cpuTimer = setTimeout(
    () => {
      cpuAtStart = sampleCpu(options.watchPids);
      options.window?.opened();
      if (options.costOf) callsAtStart = readStoreCalls(options.costOf).catch(() => undefined);
    },
    Math.max(0, from - performance.now()),
  );
  const closeTimer = setTimeout(() => options.window?.closed(), Math.max(0, until - performance.now()));

  async function worker(index: number): Promise<void> {
    for (;;) {
      const t0 = performance.now();
      if (t0 >= until) return;
      try {
        await options.operation(index);
        if (t0 >= from) recorder.record(performance.now() - t0);
      } catch (error) {
        if (t0 >= from) recorder.error(error);
        // A refused connection would otherwise spin.
        else await sleep(10);
      }
    }
  }
  await Promise.all(Array.from({ length: options.concurrency }, (_, i) => worker(i)));
  clearTimeout(cpuTimer);
  clearTimeout(closeTimer);
  const measurement = recorder.figures(options.seconds);
  if (cpuAtStart) measurement.cpu = cpuSince(cpuAtStart);
  const startCalls = await callsAtStart;
  if (startCalls && options.costOf) {
    const cost = costPerRequest(startCalls, await readStoreCalls(options.costOf), recorder.requests);
    if (cost) measurement.cost = cost;
  }
  measurement.quiet = quiet;
  return measurement;
}

/** One scheduled stream of an open loop. */
export interface Stream {
  name: string;
  /** Requests a second. */
  rate: number;
  operation: () => Promise<unknown>;
  /**
   * At most this many unanswered at once: a request due while the stream has as many is not sent
   * (counted as skipped), as a client with that many connections that does not queue. Default:
   * no bound (every request is sent when due).
   */
  maxInFlight?: number;
}

export interface OpenLoopOptions extends WindowOptions {
  streams: Stream[];
  /** How long to wait for answers after the window before giving up on them. Default 10 s. */
  drainSeconds?: number;
}

/**
 * Open loop: each stream's k-th request is due at start + k / rate, and is sent then (or at the
 * next timer tick) whatever is still unanswered. Latency is measured from when the request was
 * due, not from when it was sent, so neither a late timer nor a slow answer is hidden (no
 * coordinated omission). Records the requests due inside the measured window.
 */
export async function openLoop(options: OpenLoopOptions): Promise<Record<string, OpenMeasurement>> {
  const quiet = await quietBefore();
  const started = performance.now();
  const from = started + options.warmupSeconds * 1000;
  const until = from + options.seconds * 1000;
  let cpuAtStart: CpuSample | undefined;

  const state = options.streams.map((stream) => ({
    stream,
    recorder: new Recorder(),
    sent: 0,
    inFlight: 0,
    answeredInWindow: 0,
    maxLag: 0,
    skipped: 0,
    backlogAtEnd: 0,
    pending: new Set<Promise<unknown>>(),
  }));

  function send(s: (typeof state)[number], due: number, now: number): void {
    if (due >= from) s.maxLag = Math.max(s.maxLag, now - due);
    s.inFlight++;
    const request = s.stream.operation().then(
      () => {
        const done = performance.now();
        if (done >= from && done < until) s.answeredInWindow++;
        if (due >= from && due < until) s.recorder.record(done - due);
      },
      (error: unknown) => {
        if (due >= from && due < until) s.recorder.error(error);
      },
    );
    s.pending.add(request);
    void request.finally(() => {
      s.inFlight--;
      s.pending.delete(request);
    });
  }

  await new Promise<void>((resolve) => {
    let measuring = false;
    const tick = () => {
      const now = performance.now();
      if (!measuring && now >= from) {
        measuring = true;
        cpuAtStart = sampleCpu(options.watchPids);
        options.window?.opened();
      }
      const horizon = Math.min(now, until);
      for (const s of state) {
        const interval = 1000 / s.stream.rate;
        while (started + s.sent * interval <= horizon) {
          const due = started + s.sent * interval;
          s.sent++;
          if (s.stream.maxInFlight !== undefined && s.inFlight >= s.stream.maxInFlight) {
            if (due >= from && due < until) s.skipped++;
          } else send(s, due, now);
        }
      }
      if (now >= until) {
        for (const s of state) s.backlogAtEnd = s.inFlight;
        options.window?.closed();
        resolve();
      } else setTimeout(tick, 1);
    };
    tick();
  });
  const cpu = cpuAtStart ? cpuSince(cpuAtStart) : undefined;

  // Answers still owed: waited for (their latency counts), up to the drain limit.
  const drainUntil = performance.now() + (options.drainSeconds ?? 10) * 1000;
  while (state.some((s) => s.pending.size > 0) && performance.now() < drainUntil) {
    await Promise.race([sleep(100), ...state.flatMap((s) => [...s.pending])]);
  }
  const result: Record<string, OpenMeasurement> = {};
  for (const s of state) {
    for (let i = 0; i < s.pending.size; i++) s.recorder.error(new Error(`no answer within ${options.drainSeconds ?? 10} s after the window`));
    const figures = s.recorder.figures(options.seconds);
    const achievedRate = s.answeredInWindow / options.seconds;
    result[s.stream.name] = {
      ...figures,
      ...(cpu ? { cpu } : {}),
      quiet,
      targetRate: s.stream.rate,
      achievedRate,
      backlogAtEnd: s.backlogAtEnd,
      maxSendLagMs: s.maxLag,
      skipped: s.skipped,
      held: achievedRate >= 0.99 * s.stream.rate && figures.errors === 0 && s.backlogAtEnd < s.stream.rate,
    };
  }
  return result;
}
