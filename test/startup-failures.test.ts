import { type Server, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStores } from './helpers/test-app.js';
import { freePort } from './helpers/ports.js';
import { startService } from './helpers/service-process.js';

/**
 * Start-up failures an operator can act on: PostgreSQL unreachable, Redis unreachable, the port in
 * use. Each is one line naming the store or the port, the setting that points at it and what to
 * check; exit code 1; no stack (the cause's stack only at LOG_LEVEL=debug).
 */

/** The service's exit code and what it wrote that is not a JSON log line. */
async function failedStart(env: Record<string, string>) {
  const service = startService({ LOG_LEVEL: 'warn', ...env });
  const code = await service.exited;
  const lines = service
    .output()
    .split('\n')
    .filter((line) => line.length > 0 && !line.startsWith('{'));
  return { code, lines };
}

const STACK_FRAME = /^\s+at /;

describe('start-up failures', () => {
  let stores: Awaited<ReturnType<typeof createTestStores>>;
  let occupied: Server;
  let occupiedPort: number;
  beforeAll(async () => {
    stores = await createTestStores();
    occupied = createServer();
    await new Promise<void>((resolve) => occupied.listen(0, '127.0.0.1', resolve));
    occupiedPort = (occupied.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => occupied?.close(() => resolve()));
    await stores?.drop();
  });

  it('PostgreSQL unreachable: one line naming it and DATABASE_URL, exit 1, no stack', { timeout: 30_000 }, async () => {
    const port = await freePort();
    const { code, lines } = await failedStart({
      PORT: '0',
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/leaderboard`,
      REDIS_KEY_PREFIX: stores.keyPrefix,
    });
    expect(code).toBe(1);
    expect(lines).toEqual([
      `failed to start: PostgreSQL at 127.0.0.1:${port}/leaderboard (DATABASE_URL): connect ECONNREFUSED 127.0.0.1:${port}. Check that PostgreSQL is running there and accepts this user and database.`,
    ]);
  });

  it('Redis unreachable: one line naming it and REDIS_URL, exit 1, no stack', { timeout: 30_000 }, async () => {
    const port = await freePort();
    const { code, lines } = await failedStart({
      PORT: '0',
      DATABASE_URL: stores.databaseUrl,
      REDIS_URL: `redis://127.0.0.1:${port}`,
      REDIS_KEY_PREFIX: stores.keyPrefix,
    });
    expect(code).toBe(1);
    expect(lines).toEqual([
      `failed to start: Redis at 127.0.0.1:${port} (REDIS_URL): connect ECONNREFUSED 127.0.0.1:${port}. Check that Redis is running there (and its password, if any).`,
    ]);
  });

  it('the port in use: one line naming it and PORT, exit 1, no stack', { timeout: 30_000 }, async () => {
    const { code, lines } = await failedStart({ PORT: String(occupiedPort), DATABASE_URL: stores.databaseUrl, REDIS_KEY_PREFIX: stores.keyPrefix });
    expect(code).toBe(1);
    expect(lines).toEqual([
      `failed to start: port ${occupiedPort} on 127.0.0.1 (PORT): listen EADDRINUSE: address already in use 127.0.0.1:${occupiedPort}. Check that no other process listens there (or set PORT, HOST to a free address).`,
    ]);
  });

  it('at LOG_LEVEL=debug, the same line followed by the cause with its stack', { timeout: 30_000 }, async () => {
    const port = await freePort();
    const { code, lines } = await failedStart({
      LOG_LEVEL: 'debug',
      PORT: '0',
      DATABASE_URL: stores.databaseUrl,
      REDIS_URL: `redis://127.0.0.1:${port}`,
      REDIS_KEY_PREFIX: stores.keyPrefix,
    });
    expect(code).toBe(1);
    expect(lines[0]).toMatch(/^failed to start: Redis at .* \(REDIS_URL\)/);
    expect(lines.slice(1).some((line) => STACK_FRAME.test(line))).toBe(true);
  });
});
