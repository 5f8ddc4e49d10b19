import { existsSync } from 'node:fs';
import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionTimeouts } from '../../src/db/client.js';
import { freePort } from './ports.js';
import { until } from './wait.js';

/** Debian's pgbouncer (.ci/run installs it). */
export const PGBOUNCER = '/usr/sbin/pgbouncer';

/**
 * Whether Debian's pgbouncer is installed; when it is not, the PgBouncer tests are skipped with a
 * message, as the browser tests are without Chromium (`.ci/run` installs it, so CI always runs them).
 */
export function pgBouncerFor(testName: string): boolean {
  const found = existsSync(PGBOUNCER);
  if (!found) console.warn(`${testName} skipped: ${PGBOUNCER} is missing (apt-get install pgbouncer; .ci/run installs it).`);
  return found;
}

export interface PgBouncerOptions {
  /** The PostgreSQL every database is pooled to. Default 127.0.0.1:5432 (the machine's). */
  server?: { host: string; port: number };
  /**
   * The session timeouts each server connection gets as it opens (connect_query), as
   * docs/production-topology.md has a deployment set them; null for none. Default: none.
   */
  timeouts?: SessionTimeouts | null;
  /** Server connections per database and user. Default 20. */
  poolSize?: number;
}

export interface PgBouncerFixture {
  port: number;
  /** `url` with its host and port replaced by this PgBouncer's: the same database, pooled. */
  via(url: string): string;
  /** Kills it (SIGKILL), as a crash would; its clients' connections drop. */
  kill(): Promise<void>;
  /** Starts it again, on the same port with the same ini, and waits until it accepts connections. */
  start(): Promise<void>;
  /** Stops it (SIGINT: at once, its server connections closed) and removes its directory. */
  stop(): Promise<void>;
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** The connect_query that sets `timeouts` on each server connection PgBouncer opens. */
export function timeoutsQuery(timeouts: SessionTimeouts): string {
  return (
    `set statement_timeout = ${timeouts.statementMs}; set lock_timeout = ${timeouts.lockMs}; ` +
    `set idle_in_transaction_session_timeout = ${timeouts.idleInTransactionMs}`
  );
}

/**
 * A PgBouncer of the test's own in transaction pooling mode, on a free port of 127.0.0.1, with its
 * ini in a temporary directory, run in the foreground as a child process (as the postgres user when
 * the test runs as root: PgBouncer refuses root). Every database name is pooled to `server` (`* =`),
 * trusting every user, as the machine's PostgreSQL does.
 */
export async function startPgBouncer(options: PgBouncerOptions = {}): Promise<PgBouncerFixture> {
  const server = options.server ?? { host: '127.0.0.1', port: 5432 };
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'lb-pgbouncer-'));
  // The postgres user reads the ini and the auth file.
  await chmod(dir, 0o755);
  const connectQuery = options.timeouts ? ` connect_query='${timeoutsQuery(options.timeouts)}'` : '';
  const ini = [
    '[databases]',
    `* = host=${server.host} port=${server.port}${connectQuery}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'users.txt')}`,
    'pool_mode = transaction',
    'max_client_conn = 5000',
    `default_pool_size = ${options.poolSize ?? 20}`,
    'max_db_connections = 0',
    // The test suite drops each app's database at its end: no server connection outlives that long.
    'server_idle_timeout = 10',
    'autodb_idle_timeout = 30',
    'log_connections = 0',
    'log_disconnections = 0',
    '',
  ].join('\n');
  await writeFile(join(dir, 'pgbouncer.ini'), ini, { mode: 0o644 });
  await writeFile(join(dir, 'users.txt'), '"postgres" ""\n', { mode: 0o644 });
  const asRoot = process.getuid?.() === 0;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  // Never left running by a process that ends without stop() (a failed bench, a killed test run).
  const orphaned = () => child?.kill('SIGKILL');
  process.once('exit', orphaned);

  async function start(): Promise<void> {
    const running: ChildProcess = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child = running;
    let log = '';
    running.stderr?.on('data', (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-4_000);
    });
    exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    await until(
      async () => {
        if (running.exitCode !== null) throw new Error(`pgbouncer exited (${running.exitCode}): ${log}`);
        return accepts(port);
      },
      10_000,
      () => `pgbouncer on port ${port} accepting: ${log}`,
      50,
    );
  }

  async function kill(signal: NodeJS.Signals): Promise<void> {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      await exited;
    }
  }

  await start();
  return {
    port,
    via(url: string) {
      const pooled = new URL(url);
      pooled.hostname = '127.0.0.1';
      pooled.port = String(port);
      return pooled.toString();
    },
    kill: () => kill('SIGKILL'),
    start,
    async stop() {
      process.off('exit', orphaned);
      await kill('SIGINT');
      await rm(dir, { recursive: true, force: true });
    },
  };
}
