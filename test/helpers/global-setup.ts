import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { deleteKeys } from './redis-keys.js';
import { ensureDatabase, migrateDatabase, sessionTimeoutsFor } from '../../src/db/client.js';
import { startPgBouncer } from './pgbouncer.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A migrated database that each test app copies (CREATE DATABASE ... TEMPLATE). */
    templateDatabaseUrl: string;
    /** This run's own prefix: every Redis key of the run starts with it. */
    redisRunPrefix: string;
    /**
     * With LB_TEST_PGBOUNCER=1, the port of the run's PgBouncer (transaction pooling): every test
     * app reaches its database through it (see test-app.ts). Unset otherwise.
     */
    pgbouncerPort?: number;
  }
}

export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** One migrated template database per run; dropped at the end, with every copy made from it. */
export default async function setup(project: TestProject) {
  const run = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const templateUrl = new URL(POSTGRES_URL);
  templateUrl.pathname = `/lb_test_${run}`;
  await ensureDatabase(templateUrl.toString());
  await migrateDatabase(templateUrl.toString());
  project.provide('templateDatabaseUrl', templateUrl.toString());
  project.provide('redisRunPrefix', `lbtest:${run}:`);
  // Only the apps' databases go through it: the template stays direct, as CREATE DATABASE ...
  // TEMPLATE fails while any session (a pooled server connection) is open on the template. The
  // server connections get the test apps' session timeouts (their 30 s bound), as a deployment's would.
  const pgbouncer = process.env.LB_TEST_PGBOUNCER === '1' ? await startPgBouncer({ timeouts: sessionTimeoutsFor(30_000), poolSize: 40 }) : undefined;
  if (pgbouncer) project.provide('pgbouncerPort', pgbouncer.port);

  return async () => {
    await pgbouncer?.stop();
    const sql = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    try {
      const copies = await sql<{ datname: string }[]>`select datname from pg_database where datname like ${`lb_test_${run}%`}`;
      for (const { datname } of copies) await sql`drop database if exists ${sql(datname)} with (force)`;
    } finally {
      await sql.end();
    }
    await deleteKeys(`lbtest:${run}:`);
  };
}
