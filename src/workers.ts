import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';

/**
 * Several API processes on one port (node:cluster): the primary forks the workers and supervises
 * them, and does nothing else but gather their metrics for `/metrics` (http/cluster-metrics.ts): no
 * store connection, no request. Each worker is the ordinary app,
 * started by src/main.ts as a single process would be; the primary hands it connections (round
 * robin, Node's default outside Windows).
 *
 * Why this is safe with the app unchanged: every piece of state shared between requests lives in
 * PostgreSQL or Redis, and what a process keeps for itself is bounded (the top cache, about a
 * second; the open season cache, a second; board definitions, half a second) or told about
 * changes (API keys by NOTIFY, live tops by Redis pub/sub); the rate limits are per worker. Work
 * that must run once per deployment takes a lock in the stores (see the README, "Several API
 * processes").
 */

export interface WorkerSupervisorOptions {
  /** How many workers to keep running. */
  workers: number;
  log: Logger;
  /**
   * How long, after SIGTERM or SIGINT, the workers get to stop before they are killed. Give it more
   * than a worker's own shutdown deadline. Default 15,000 ms.
   */
  stopTimeoutMs?: number;
  /** The wait before the first restart of a crashed worker; it doubles with each crash still in the window. Default 100 ms. */
  restartDelayMs?: number;
  /** The longest wait before a restart. Default 5,000 ms. */
  maxRestartDelayMs?: number;
  /**
   * Unexpected exits within {@link WorkerSupervisorOptions.crashWindowMs} after which the primary
   * stops every worker and exits 1: the workers are crash-looping, and the process manager above
   * (systemd, Kubernetes) should see it rather than the primary hiding it. Default 5.
   */
  maxCrashes?: number;
  /** The window crashes are counted over. Default 60,000 ms. */
  crashWindowMs?: number;
}

/**
 * Forks `workers` workers and keeps them running until SIGTERM or SIGINT, which it passes on to
 * every worker (each stops as a single process does: WebSocket clients, HTTP server, PostgreSQL,
 * Redis). Answers the exit code for the primary: 0 when every worker stopped cleanly, 1 when one
 * did not, did not stop in time, or the workers crash-looped. A worker that exits without being
 * asked to is replaced after a backoff. O(workers) per start, exit or signal.
 *
 * Call from the primary only (cluster.isPrimary); workers run the same script.
 */
export function superviseWorkers(options: WorkerSupervisorOptions): Promise<number> {
  const { workers, log } = options;
  const stopTimeoutMs = options.stopTimeoutMs ?? 15_000;
  const restartDelayMs = options.restartDelayMs ?? 100;
  const maxRestartDelayMs = options.maxRestartDelayMs ?? 5_000;
  const maxCrashes = options.maxCrashes ?? 5;
  const crashWindowMs = options.crashWindowMs ?? 60_000;

  return new Promise<number>((resolve) => {
    const running = new Set<Worker>();
    const restarts = new Set<NodeJS.Timeout>();
    let crashes: number[] = [];
    let stopping = false;
    let exitCode = 0;

    const fork = () => {
      const worker = cluster.fork();
      running.add(worker);
      log.info({ worker: worker.id, workerPid: worker.process.pid }, 'worker started');
    };

    const stopAll = (signal: NodeJS.Signals) => {
      stopping = true;
      for (const timer of restarts) clearTimeout(timer);
      restarts.clear();
      for (const worker of running) worker.process.kill(signal);
      if (running.size === 0) return resolve(exitCode);
      const deadline = setTimeout(() => {
        log.error({ workerPids: [...running].map((w) => w.process.pid) }, 'workers did not stop in time; killing them');
        exitCode = 1;
        for (const worker of running) worker.process.kill('SIGKILL');
      }, stopTimeoutMs);
      deadline.unref();
    };

    cluster.on('exit', (worker, code, signal) => {
      running.delete(worker);
      if (stopping) {
        if (code !== 0) exitCode = 1;
        log.info({ worker: worker.id, workerPid: worker.process.pid, code, signal }, 'worker stopped');
        if (running.size === 0) resolve(exitCode);
        return;
      }
      const now = Date.now();
      crashes = [...crashes.filter((at) => now - at < crashWindowMs), now];
      if (crashes.length > maxCrashes) {
        log.fatal(
          { worker: worker.id, workerPid: worker.process.pid, code, signal, crashes: crashes.length, windowMs: crashWindowMs },
          'workers keep dying; giving up: stopping every worker and exiting 1',
        );
        exitCode = 1;
        stopAll('SIGTERM');
        return;
      }
      const delayMs = Math.min(restartDelayMs * 2 ** (crashes.length - 1), maxRestartDelayMs);
      log.error({ worker: worker.id, workerPid: worker.process.pid, code, signal, restartInMs: delayMs }, 'worker died unexpectedly; replacing it');
      const timer = setTimeout(() => {
        restarts.delete(timer);
        fork();
      }, delayMs);
      restarts.add(timer);
    });

    // Repeated signals (a second Ctrl-C) are ignored: the workers are stopping already, and the
    // deadline above bounds how long that takes.
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return;
      log.info({ signal, workers: running.size }, 'stopping every worker');
      stopAll(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);

    for (let i = 0; i < workers; i++) fork();
  });
}
