import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { TEST_REDIS_URL } from './redis-keys.js';
import { type TestApp, startTestApp } from './test-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/** What an operator works with between two runs of the service; see {@link operatorSession}. */
export interface OperatorSession {
  /** The service as it first ran (stopped by the test when the operator stops every process). */
  readonly first: TestApp;
  /** The service that answers now: `first`, or the last one started by restart(). */
  readonly api: TestApp;
  /** A scratch directory for the operator's files (dumps); removed after the file's tests. */
  readonly dir: string;
  /** Starts the service again on the same stores (as the next start of its process would); it answers from then on. */
  restart: () => Promise<TestApp>;
  /** Runs a shell command in `dir`, with the service's DATABASE_URL, REDIS_URL and REDIS_KEY_PREFIX set. */
  sh: (command: string) => Promise<{ stdout: string; stderr: string }>;
  /** Runs the service's CLI (`npm run cli -- ...args`), with the same settings. */
  cli: (...args: string[]) => Promise<{ stdout: string; stderr: string }>;
}

/**
 * For tests of what an operator does between two runs of the service (dump and restore, archive a
 * month, rebuild): an app started before the file's tests, the apps started after it on the same
 * stores, a scratch directory and the shell and CLI the README's commands run in. Every app is
 * closed and the directory removed after the file's tests.
 */
export function operatorSession(name: string): OperatorSession {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  const apps: TestApp[] = [];
  const env = () => ({
    PATH: process.env.PATH,
    DATABASE_URL: apps[0]!.databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: apps[0]!.keyPrefix,
    LOG_LEVEL: 'silent',
  });
  beforeAll(async () => {
    apps.push(await startTestApp());
  });
  afterAll(async () => {
    for (const app of apps.reverse()) await app.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get first() {
      return apps[0]!;
    },
    get api() {
      return apps.at(-1)!;
    },
    dir,
    async restart() {
      const app = await startTestApp({ shareStoresOf: { databaseUrl: apps[0]!.databaseUrl, keyPrefix: apps[0]!.keyPrefix } });
      apps.push(app);
      return app;
    },
    sh: (command) => run('sh', ['-c', command], { cwd: dir, env: env() }),
    cli: (...args) => run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: ROOT, env: env() }),
  };
}
