import { execFile } from 'node:child_process';
import { appendFile, chown, mkdtemp, readFile, readdir, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { freePort } from './ports.js';
import { until } from './wait.js';

/**
 * A PostgreSQL 15 server of the test's own (Debian's binaries), in a temporary directory, on a free
 * port of 127.0.0.1, trusting every local connection: a primary, or a streaming standby of one made
 * with `pg_basebackup -R`. The machine's shared PostgreSQL is never touched. As root, every binary
 * runs as the `postgres` user (initdb refuses root), and the directory is given to it.
 */
export interface OwnPostgres {
  host: string;
  port: number;
  /** The data directory. */
  dataDir: string;
  /** `host:port`. */
  address: string;
  /** A URL to `database` on this server, as the superuser `postgres`. */
  url(database?: string): string;
  /** The postmaster's pid (from postmaster.pid). */
  pid(): Promise<number>;
  /**
   * Kills the postmaster and every process it started (its backends, WAL sender and writer) with
   * SIGKILL at once, as the loss of its machine would, and waits until they are gone.
   */
  kill(): Promise<void>;
  /** Promotes a standby (pg_ctl promote, which waits until it accepts writes). */
  promote(): Promise<void>;
  /** Stops the server if it runs (immediate shutdown) and removes its directory. */
  remove(): Promise<void>;
}

export const POSTGRES_BIN = process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin';

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;

/** Runs one of the PostgreSQL binaries, as `postgres` when this process is root. */
async function pgBinary(name: string, args: string[]): Promise<string> {
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(POSTGRES_BIN, name), ...args]] : [join(POSTGRES_BIN, name), args];
  try {
    const { stdout } = await run(file, argv, { maxBuffer: 10 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`${name} ${args.join(' ')} failed: ${stderr ?? ''}${stdout ?? ''}`, { cause: error });
  }
}

/** A temporary directory the server's user owns. */
async function ownDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  return dir;
}

/** Whether a server answers on `port` (a query, not only a TCP accept). */
async function answers(port: number): Promise<boolean> {
  const sql = postgres({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/**
 * The pids of the running processes whose working directory is `dir`: every process of a server
 * (the postmaster and each process it starts work in the data directory), even one its postmaster
 * no longer parents. Zombies are left out.
 */
async function processesIn(dir: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if ((await readlink(`/proc/${entry}/cwd`)) === dir && (await isAlive(Number(entry)))) found.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/** Whether `pid` still runs: a zombie (killed, not yet reaped by whoever adopted it) does not. */
async function isAlive(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Settings every own server gets: small, quick, and logging to its directory. */
const BASE_SETTINGS: Record<string, string | number> = {
  listen_addresses: "'127.0.0.1'",
  shared_buffers: "'16MB'",
  max_connections: 60,
  // The test kills processes, never the machine: what PostgreSQL wrote is in the page cache.
  fsync: 'off',
  wal_level: 'replica',
  max_wal_senders: 5,
  wal_keep_size: "'64MB'",
  hot_standby: 'on',
  logging_collector: 'off',
};

/** The server whose directory is `home`: its data in home/data, its socket and log beside. */
function serverOf(home: string, port: number): OwnPostgres {
  const host = '127.0.0.1';
  const dataDir = join(home, 'data');
  const pid = async () => Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  const self: OwnPostgres = {
    host,
    port,
    dataDir,
    address: `${host}:${port}`,
    url: (database = 'postgres') => `postgres://postgres@${host}:${port}/${database}`,
    pid,
    async kill() {
      const postmaster = await pid();
      // Frozen first, so that it forks no new backend meanwhile; then every process of the server
      // (each child is a session of its own, so there is no process group to kill at once), until none is left.
      process.kill(postmaster, 'SIGSTOP');
      await until(
        async () => {
          const left = await processesIn(dataDir);
          for (const target of left) {
            try {
              process.kill(target, 'SIGKILL');
            } catch {
              // Already gone.
            }
          }
          return left.length === 0;
        },
        10_000,
        `PostgreSQL on ${port} gone after SIGKILL`,
        10,
      );
    },
    async promote() {
      await pgBinary('pg_ctl', ['promote', '-w', '-t', '30', '-D', dataDir]);
    },
    async remove() {
      try {
        const postmaster = await pid();
        if (await isAlive(postmaster)) await pgBinary('pg_ctl', ['stop', '-m', 'immediate', '-w', '-D', dataDir]).catch(() => self.kill());
      } catch {
        // Never started, or killed.
      }
      await rm(home, { recursive: true, force: true });
    },
  };
  return self;
}

/** Starts the server of `home` and waits until it answers; removes its directory when it cannot. */
async function startServer(home: string, port: number): Promise<OwnPostgres> {
  const server = serverOf(home, port);
  try {
    await pgBinary('pg_ctl', ['start', '-w', '-t', '60', '-D', server.dataDir, '-l', join(home, 'server.log'), '-o', `-p ${port} -k ${home}`]);
    await until(() => answers(port), 30_000, `PostgreSQL on ${port} answering`, 50);
  } catch (error) {
    const log = await readFile(join(home, 'server.log'), 'utf8').catch(() => '');
    await server.remove();
    throw new Error(`PostgreSQL on ${port} did not start: ${log.slice(-2_000)}`, { cause: error });
  }
  return server;
}

export interface OwnPostgresOptions {
  /** postgresql.conf settings on top of BASE_SETTINGS (values as the file spells them: quote strings). */
  settings?: Record<string, string | number>;
}

/** A primary of its own: initdb, the settings, started and answering. */
export async function startOwnPostgres(options: OwnPostgresOptions = {}): Promise<OwnPostgres> {
  const home = await ownDir('lb-pg-');
  const dataDir = join(home, 'data');
  const port = await freePort();
  await pgBinary('initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale', 'C.UTF-8']);
  const settings = { ...BASE_SETTINGS, ...options.settings };
  await appendFile(
    join(dataDir, 'postgresql.conf'),
    `\n${Object.entries(settings)
      .map(([key, value]) => `${key} = ${value}`)
      .join('\n')}\n`,
  );
  return startServer(home, port);
}

/**
 * A streaming standby of `primary`: `pg_basebackup -R` (which writes standby.signal and
 * primary_conninfo), started and answering. Its application_name is `name`, so the primary's
 * synchronous_standby_names may name it; with `'*'` any standby is synchronous. It copies the
 * primary's postgresql.conf; `settings` go on top (postgresql.auto.conf): a standby to be promoted
 * with no standby of its own needs `synchronous_standby_names: "''"`, or its commits wait forever.
 */
export async function startStandby(primary: OwnPostgres, options: { name?: string; settings?: Record<string, string | number> } = {}): Promise<OwnPostgres> {
  const name = options.name ?? 'standby';
  const home = await ownDir('lb-pg-standby-');
  const dataDir = join(home, 'data');
  const port = await freePort();
  await pgBinary('pg_basebackup', [
    '-h',
    primary.host,
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    '-D',
    dataDir,
    '-R',
    '-X',
    'stream',
    '-c',
    'fast',
    '--no-sync',
  ]);
  await appendFile(
    join(dataDir, 'postgresql.auto.conf'),
    [
      '',
      `primary_conninfo = 'host=${primary.host} port=${primary.port} user=postgres application_name=${name}'`,
      ...Object.entries(options.settings ?? {}).map(([key, value]) => `${key} = ${value}`),
      '',
    ].join('\n'),
  );
  return startServer(home, port);
}

/** Waits until `primary` streams to a standby it counts as synchronous (pg_stat_replication.sync_state). */
export async function waitForSyncStandby(primary: OwnPostgres, timeoutMs = 30_000): Promise<void> {
  const sql = postgres(primary.url(), { max: 1, onnotice: () => {} });
  try {
    await until(
      async () => (await sql<{ sync_state: string }[]>`select sync_state from pg_stat_replication`).some((row) => row.sync_state === 'sync'),
      timeoutMs,
      `a synchronous standby streaming from ${primary.address}`,
      50,
    );
  } finally {
    await sql.end({ timeout: 1 });
  }
}
