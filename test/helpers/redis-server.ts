import { type ChildProcess, spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './ports.js';
import { until } from './wait.js';

/**
 * A redis-server of the test's own, without persistence, so that killing and starting it again
 * gives what a restart without persistence (or a failover to a fresh node) gives: an empty Redis
 * on the same address. The machine's shared Redis is never touched.
 */
export interface OwnRedis {
  port: number;
  url: string;
  /** Kills the server (SIGKILL) and waits for it to be gone. */
  kill(): Promise<void>;
  /** Starts it again, empty, on the same port, and waits until it answers. */
  start(): Promise<void>;
}

async function answers(port: number): Promise<boolean> {
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

export interface OwnRedisOptions {
  /** The port of a redis-server (of the test's own) this one replicates (`--replicaof`). Default: none, a master. */
  replicaOf?: number;
}

export async function startOwnRedis(options: OwnRedisOptions = {}): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  // A replica loads its master's data from the socket (swapdb), never through a dump file in the working directory.
  const replicaOf = options.replicaOf === undefined ? [] : ['--replicaof', '127.0.0.1', String(options.replicaOf), '--repl-diskless-load', 'swapdb'];

  async function start(): Promise<void> {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', ...replicaOf], {
      stdio: 'ignore',
    });
    await until(() => answers(port), 10_000, `redis-server on port ${port} answering`, 50);
  }

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    async kill() {
      const running = child;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const gone = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await gone;
    },
  };
}
