import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { deleteKeys } from './redis-keys.js';
import { ensureDatabase, migrateDatabase } from '../../src/db/client.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A migrated database that each test app copies (CREATE DATABASE ... TEMPLATE). */
    templateDatabaseUrl: string;
    /** This run's own prefix: every Redis key of the run starts with it. */
    redisRunPrefix: string;
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

  return async () => {
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
