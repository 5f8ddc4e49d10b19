import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamBoardScores } from '../src/db/board-scores.js';
import { type Database, createDatabase } from '../src/db/client.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * A rebuild reads a whole list from PostgreSQL, and the pool's sessions cancel any statement that
 * runs longer than half a request's bound. A rebuild is not a request: on a busy month the sort
 * before a derived list's first row alone took 8 to 12 s here, so a Redis that lost the index could
 * never have that bucket back. Here the pool's bound is 20 ms and the list 200,000 rows: the read
 * outlasts the bound by far, and must still come whole, while the pool keeps its bound.
 */

const ROWS = 200_000;
const STATEMENT_MS = 20;

describe("a rebuild's read of PostgreSQL", () => {
  let t: TestApp;
  let database: Database;
  beforeAll(async () => {
    t = await startTestApp();
    const admin = postgres(t.databaseUrl, { max: 1, onnotice: () => undefined });
    await admin`
      insert into board_scores (board_id, period, bucket, region, player_id, score, reached_at)
      select 'global', 'ALL_TIME', 'all', '', 'p' || g, g % 1000, now() - g * interval '1 second'
      from generate_series(1, ${ROWS}) as g`;
    await admin.end();
    // One connection, so that what the read leaves on it is what the next statement meets.
    database = createDatabase(t.databaseUrl, { maxConnections: 1, timeouts: { statementMs: STATEMENT_MS, lockMs: STATEMENT_MS, idleInTransactionMs: 10_000 } });
  });
  afterAll(async () => {
    await database?.close();
    await t?.close();
  });

  it('comes whole though it outlasts the statement timeout, which the pool keeps for everything else', async () => {
    let rows = 0;
    for await (const chunk of streamBoardScores(database.sql, { boardId: 'global', period: 'ALL_TIME', bucket: 'all', region: '', derived: null })) {
      rows += chunk.length;
    }
    expect(rows).toBe(ROWS);
    const [setting] = await database.sql<{ statement_timeout: string }[]>`show statement_timeout`;
    expect(setting!.statement_timeout).toBe(`${STATEMENT_MS}ms`);
    await expect(database.sql`select pg_sleep(0.2)`).rejects.toThrow(/statement timeout/);
  });
});
