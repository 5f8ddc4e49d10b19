import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { TEST_REDIS_URL } from './redis-keys.js';
import type { TestApp } from './test-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Runs `npm run cli -- <args>` as its own process on a test app's stores (its database and key
 * prefix), as an operator would; answers its output, and rejects with it when the exit code is not 0.
 * `redis`: where the CLI reaches Redis. Default: the test Redis (REDIS_URL).
 */
export function runCli(t: Pick<TestApp, 'databaseUrl' | 'keyPrefix'>, args: string[], redis: Record<string, string> = { REDIS_URL: TEST_REDIS_URL }) {
  return promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, DATABASE_URL: t.databaseUrl, ...redis, REDIS_KEY_PREFIX: t.keyPrefix, LOG_LEVEL: 'silent' },
  });
}
