import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { POSTGRES_URL } from './helpers/global-setup.js';
import { deleteKeys } from './helpers/redis-keys.js';
import { startService } from './helpers/service-process.js';

const id = randomBytes(4).toString('hex');
const databaseName = `lb_main_test_${id}`;
const keyPrefix = `lbtest:main:${id}:`;

describe('the entry: config, clients, app; and back on SIGTERM', () => {
  afterAll(async () => {
    const sql = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    await sql`drop database if exists ${sql(databaseName)} with (force)`;
    await sql.end();
    await deleteKeys(keyPrefix);
  });

  it('creates a missing database, migrates it, seeds the global board, serves, and exits 0 on SIGTERM', async () => {
    const databaseUrl = new URL(POSTGRES_URL);
    databaseUrl.pathname = `/${databaseName}`;
    const service = startService({ PORT: '0', DATABASE_URL: databaseUrl.toString(), REDIS_KEY_PREFIX: keyPrefix });
    const url = await service.listening;

    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    const boards = (await (await fetch(`${url}/graphql?query=${encodeURIComponent('{ boards { id order aggregate periods } }')}`)).json()) as {
      data: { boards: unknown[] };
    };
    expect(boards.data.boards).toEqual([
      { id: 'global', order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME', 'SEASON', 'MONTHLY', 'WEEKLY', 'DAILY'] },
    ]);

    const exited = new Promise<number | null>((resolve) => service.child.once('exit', resolve));
    const started = Date.now();
    service.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(service.output()).toContain('"msg":"stopped"');
  });

  it('refuses to start on a bad environment, listing every problem', async () => {
    const service = startService({ PORT: 'eighty', REDIS_URL: 'nope', ADMIN_API_KEY: 'short' });
    await expect(service.listening).rejects.toThrow(/exited with 1/);
    for (const name of ['PORT', 'REDIS_URL', 'ADMIN_API_KEY']) expect(service.output()).toContain(name);
  });
});
