import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRankable, streamBoardScores } from '../src/db/board-scores.js';
import { type Database, createDatabase } from '../src/db/client.js';
import { createLogger } from '../src/logger.js';
import { findRebuild, startRebuild } from '../src/writes/rebuild.js';
import { createStorage } from '../src/db/storage.js';
import { createRankingIndex } from '../src/ranking/index.js';
import { createBoardDirectory } from '../src/services/board-directory.js';
import { createRebuildJobs } from '../src/services/rebuild-jobs.js';
import { createSeasonDirectory } from '../src/services/season-directory.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * A rebuild reads a whole list from PostgreSQL, the drift gauge and a rebuild's job count one, and the pool's sessions
 * cancel any statement that runs longer than half a request's bound. Neither is a request: on a
 * busy month the sort before a derived list's first row alone took 8 to 12 s here, so a Redis that
 * lost the index could never have that bucket back. Here the pool's bound is 20 ms and the list
 * 400,000 rows: the reads outlast the bound by far, and must still come whole, while the pool keeps
 * its bound for everything else.
 */

const ROWS = 400_000;
const STATEMENT_MS = 20;

describe('reads of a whole list in the background', () => {
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

  const list = { boardId: 'global', period: 'ALL_TIME' as const, bucket: 'all', region: '', derived: null };

  it("a rebuild's read comes whole though it outlasts the statement timeout, which the pool keeps for everything else", async () => {
    let rows = 0;
    for await (const chunk of streamBoardScores(database.sql, list)) {
      rows += chunk.length;
    }
    expect(rows).toBe(ROWS);
    const [setting] = await database.sql<{ statement_timeout: string }[]>`show statement_timeout`;
    expect(setting!.statement_timeout).toBe(`${STATEMENT_MS}ms`);
    await expect(database.sql`select pg_sleep(0.2)`).rejects.toThrow(/statement timeout/);
  });

  it('a read stopped early, with the next chunk asked for ahead, gives its connection back with the cursor closed', async () => {
    let chunks = 0;
    for await (const chunk of streamBoardScores(database.sql, list, { chunkSize: 1_000 })) {
      expect(chunk).toHaveLength(1_000);
      if (++chunks === 2) break;
    }
    // The pool's one connection answers (a cursor left open or a fetch left waiting would hold it), with its bound.
    const [setting] = await database.sql<{ statement_timeout: string }[]>`show statement_timeout`;
    expect(setting!.statement_timeout).toBe(`${STATEMENT_MS}ms`);
    let rows = 0;
    for await (const chunk of streamBoardScores(database.sql, list)) rows += chunk.length;
    expect(rows).toBe(ROWS);
  });

  it("the drift gauge's count does too, where a request's count keeps the bound", async () => {
    await expect(countRankable(database.sql, list)).rejects.toThrow(/statement timeout/);
    expect(await countRankable(database.sql, list, { unbounded: true })).toBe(ROWS);
    const [setting] = await database.sql<{ statement_timeout: string }[]>`show statement_timeout`;
    expect(setting!.statement_timeout).toBe(`${STATEMENT_MS}ms`);
  });

  it('a rebuild started from the console answers at once and counts the list in its job, past the statement timeout', { timeout: 60_000 }, async () => {
    // What a rebuild started from the console takes, over this test's pool (see RebuildBoardDeps).
    const log = createLogger('silent');
    const storage = createStorage(database);
    const services = {
      storage,
      index: createRankingIndex(t.redis),
      boards: createBoardDirectory(storage.boards),
      seasons: createSeasonDirectory(storage.seasons, t.redis),
      rebuilds: createRebuildJobs(t.redis, { log }),
      now: () => new Date(),
      log,
    };
    const job = await startRebuild(services, { board: 'global', period: 'ALL_TIME' });
    expect(job).toMatchObject({ state: 'RUNNING', rowsTotal: 0 });
    await expect.poll(async () => (await findRebuild(services, job.id))?.state, { timeout: 50_000, interval: 100 }).toBe('DONE');
    expect(await findRebuild(services, job.id)).toMatchObject({ rowsRead: ROWS, rowsTotal: ROWS, size: ROWS, error: null });
    expect(await t.redis.zcard('lb:{global:ALL_TIME:all}')).toBe(ROWS);
  });
});
