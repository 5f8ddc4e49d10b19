import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, createDatabase } from '../src/db/client.js';
import { MAX_LOG_STRING, createLogger } from '../src/logger.js';
import { createTestStores } from './helpers/test-app.js';

/**
 * What a failed statement leaves in the log: its SQLSTATE and message, never the values it was sent
 * with (drizzle writes them into its error's message, PostgreSQL into `where` and `detail`), and no
 * string longer than MAX_LOG_STRING, however large the statement's parameters.
 */
describe('log lines carry no bound values and stay bounded', () => {
  let stores: Awaited<ReturnType<typeof createTestStores>>;
  let database: Database;
  beforeAll(async () => {
    stores = await createTestStores();
    database = createDatabase(stores.databaseUrl);
  });
  afterAll(async () => {
    await database?.close();
    await stores?.drop();
  });

  /** The lines a logger wrote while `act` ran. */
  async function linesOf(act: (log: ReturnType<typeof createLogger>) => void): Promise<string[]> {
    const lines: string[] = [];
    const log = createLogger('info', { write: (line: string) => void lines.push(line) });
    act(log);
    await new Promise((resolve) => setImmediate(resolve));
    return lines;
  }

  it('a statement refused for its parameters (a NUL, a huge batch of names) is logged without them', async () => {
    const secret = 'Jörg «the-secret-display-name»';
    const batch = Array.from({ length: 20_000 }, (_, i) => `${secret} #${i}`);
    const failures = await Promise.all([
      database.db.execute(sql`select ${`${secret}\u0000`}::text as t`).catch((error: unknown) => error),
      database.db.execute(sql`select (${database.sql.array(batch)}::text[])[1]::int as n`).catch((error: unknown) => error),
      database.sql`insert into players (id, display_name) values (${'dup'}, ${secret}), (${'dup'}, ${secret})`.catch((error: unknown) => error),
    ]);
    for (const failure of failures) expect(failure).toBeInstanceOf(Error);
    const lines = await linesOf((log) => failures.forEach((err) => log.error({ err }, 'unexpected error')));
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line).not.toContain('the-secret-display-name');
      const parsed = JSON.parse(line) as { err: { message: string; code?: string } };
      expect(parsed.err.message).toBeTruthy();
      expect(line.length).toBeLessThan(4 * MAX_LOG_STRING + 2_000);
    }
    // The SQLSTATEs still say what went wrong: a bad byte sequence, a bad cast, a duplicate key.
    expect(lines.map((line) => (JSON.parse(line) as { err: { code?: string; cause?: { code?: string } } }).err)).toMatchObject([
      { cause: { code: '22021' } },
      { cause: { code: '22P02' } },
      { code: '23505' },
    ]);
  });

  it('any long string of a line is cut, saying how long it was', async () => {
    const [line] = await linesOf((log) => log.warn({ note: 'x'.repeat(100_000) }, 'y'.repeat(10_000)));
    const parsed = JSON.parse(line!) as { note: string; msg: string };
    expect(parsed.note).toMatch(/… \(100000 characters\)$/);
    expect(parsed.msg).toMatch(/… \(10000 characters\)$/);
    expect(line!.length).toBeLessThan(3 * MAX_LOG_STRING);
  });
});
