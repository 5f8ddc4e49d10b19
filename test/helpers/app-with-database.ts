import postgres from 'postgres';
import { afterAll, beforeAll } from 'vitest';
import { type TestApp, type TestAppOptions, startTestApp } from './test-app.js';

/**
 * A test app for the describe block that calls this, started before its tests, and a small pool
 * on the app's own database for the test to read (and seed) what the app records; the pool ends
 * after the block (the app is closed by test-app.ts). Read both inside the tests, once started.
 */
export function appWithDatabase(options: TestAppOptions = {}): { app(): TestApp; sql(): postgres.Sql } {
  let app: TestApp | undefined;
  let sql: postgres.Sql | undefined;
  beforeAll(async () => {
    app = await startTestApp(options);
    sql = postgres(app.databaseUrl, { max: 2, onnotice: () => {} });
  });
  afterAll(async () => {
    await sql?.end();
  });
  return { app: () => app!, sql: () => sql! };
}
