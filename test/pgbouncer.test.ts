import { readFile } from 'node:fs/promises';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, ensureDatabase, migrateDatabase, sessionTimeoutsFor, unsetServerTimeouts } from '../src/db/client.js';
import { RECOVERY_LOCK } from '../src/jobs/index-recovery.js';
import { whileHoldingSessionLock } from '../src/db/locks.js';
import { type PgBouncerFixture, pgBouncerFor, startPgBouncer } from './helpers/pgbouncer.js';
import { seeded } from './helpers/random.js';
import { type TestApp, codeOf, startTestApp } from './helpers/test-app.js';
import { settle, until } from './helpers/wait.js';

/**
 * The service behind PgBouncer in transaction pooling mode (DATABASE_POOLING=transaction): two
 * API processes of one deployment, each through a PgBouncer of the test's own with few server
 * connections, so that consecutive statements of one client land on different server connections.
 * Every answer is checked against what the test sent (or PostgreSQL read directly), and PostgreSQL
 * is asked directly, after each piece of work, that no session state was left on a server
 * connection: no advisory lock held, every connection's timeouts as the deployment set them.
 */

const BOARD = 'arena';
const TOP = `query($b: ID!, $n: Int!) { top(board: $b, limit: $n) { size entries { rank score player { id } } } }`;
const SUBMIT = `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`;
const SUBMIT_ONE = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate standings { period standing { rank } } } }`;
const TIMEOUTS = sessionTimeoutsFor(30_000);

interface Sent {
  board: string;
  playerId: string;
  matchId: string;
  score: number;
}

/** The oracle: each player's best score, high first, ties by player id (the results below never tie). */
function bestOf(results: Sent[], hidden: ReadonlySet<string> = new Set()): { id: string; score: number }[] {
  const best = new Map<string, number>();
  for (const r of results) if (!hidden.has(r.playerId)) best.set(r.playerId, Math.max(best.get(r.playerId) ?? -Infinity, r.score));
  return [...best].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
}

describe.skipIf(!pgBouncerFor('the PgBouncer test'))('the service behind PgBouncer in transaction pooling mode', () => {
  let bouncer: PgBouncerFixture;
  let a: TestApp;
  let b: TestApp;
  let direct: postgres.Sql;
  const sent: Sent[] = [];
  const hidden = new Set<string>();

  const top = async (app: TestApp) => {
    const answer = await app.gql<{ top: { size: number; entries: { rank: number; score: number; player: { id: string } }[] } }>(TOP, { b: BOARD, n: 100 });
    expect(answer.errors).toBeUndefined();
    return answer.data!.top.entries.map((e) => ({ id: e.player.id, score: e.score }));
  };
  /** Advisory locks any session holds on the app's database, seen directly. */
  const advisoryLocks = async () => {
    const [row] = await direct<{ n: number }[]>`
      select count(*)::int as n from pg_locks l join pg_database d on d.oid = l.database
      where l.locktype = 'advisory' and l.granted and d.datname = current_database()`;
    return row!.n;
  };

  beforeAll(async () => {
    // Two server connections a database: a client's consecutive transactions change server connection.
    bouncer = await startPgBouncer({ timeouts: TIMEOUTS, poolSize: 4 });
    a = await startTestApp({ databaseVia: { port: bouncer.port }, pooling: 'transaction' });
    b = await startTestApp({
      databaseVia: { port: bouncer.port },
      pooling: 'transaction',
      shareStoresOf: { databaseUrl: a.databaseUrl, keyPrefix: a.keyPrefix },
    });
    direct = postgres(a.databaseUrl, { max: 1, onnotice: () => {} });
    const made = await a.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
      input: { id: BOARD, title: BOARD, order: 'HIGH_FIRST', aggregate: 'BEST', maxScore: 1_000_000, periods: ['ALL_TIME', 'DAILY', 'SEASON'], topSize: 100 },
    });
    expect(made.errors).toBeUndefined();
  }, 60_000);
  afterAll(async () => {
    await direct?.end();
    await b?.close();
    await a?.close();
    await bouncer?.stop();
  });

  it('creates and migrates a database through it, several processes at once, leaving no lock behind', async () => {
    const name = `${new URL(a.databaseUrl).pathname.slice(1)}_fresh`;
    const url = new URL(a.databaseUrl);
    url.pathname = `/${name}`;
    const pooled = bouncer.via(url.toString());
    try {
      await Promise.all([1, 2, 3].map(() => ensureDatabase(pooled, 'transaction')));
      await Promise.all([1, 2, 3].map(() => migrateDatabase(pooled, 'transaction')));
      const journal = JSON.parse(await readFile(new URL('../drizzle/meta/_journal.json', import.meta.url), 'utf8')) as { entries: unknown[] };
      const fresh = postgres(url.toString(), { max: 1, onnotice: () => {} });
      try {
        const [applied] = await fresh<{ n: number }[]>`select count(*)::int as n from drizzle.__drizzle_migrations`;
        expect(applied!.n).toBe(journal.entries.length);
        // No server connection of PgBouncer's kept the migration lock.
        const [free] = await fresh<{ ok: boolean }[]>`select pg_try_advisory_lock(7361201) as ok`;
        expect(free!.ok).toBe(true);
      } finally {
        await fresh.end();
      }
    } finally {
      await direct`drop database if exists ${direct(name)} with (force)`;
    }
  });

  it("tells whether PgBouncer's server connections carry the session timeouts, which the service cannot send", async () => {
    expect(await unsetServerTimeouts(a.database.sql)).toEqual([]);
    const bare = await startPgBouncer();
    const through = createDatabase(bare.via(a.databaseUrl), { pooling: 'transaction' });
    try {
      expect(await unsetServerTimeouts(through.sql)).toEqual(['statement_timeout', 'lock_timeout', 'idle_in_transaction_session_timeout']);
    } finally {
      await through.close();
      await bare.stop();
    }
  });

  it('records submissions, alone and in batches, from both processes; replays are duplicates; reads equal the oracle', async () => {
    const next = seeded(54);
    for (let i = 0; i < 240; i++) {
      sent.push({ board: BOARD, playerId: `p${Math.floor(next() * 60)}`, matchId: `m${i}`, score: Math.floor(next() * 900_000) * 1 + i });
    }
    const batches = [];
    for (let i = 0; i < 160; i += 20) batches.push((i % 40 === 0 ? a : b).server(SUBMIT, { inputs: sent.slice(i, i + 20) }));
    const singles = sent.slice(160).map((input, i) => (i % 2 ? a : b).server<{ submitScore: { duplicate: boolean } }>(SUBMIT_ONE, { input }));
    for (const answer of await Promise.all(batches)) expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
    for (const answer of await Promise.all(singles)) {
      expect(answer.errors).toBeUndefined();
      expect(answer.data!.submitScore.duplicate).toBe(false);
    }
    const replays = await b.server<{ submitScores: { duplicate: boolean }[] }>(SUBMIT, { inputs: sent.slice(0, 50) });
    expect(replays.errors).toBeUndefined();
    expect(replays.data!.submitScores.every((r) => r.duplicate)).toBe(true);
    const [logged] = await direct<{ n: number }[]>`select count(*)::int as n from results where board_id = ${BOARD}`;
    expect(logged!.n).toBe(sent.length);
    expect(await top(a)).toEqual(bestOf(sent));
    expect(await top(b)).toEqual(bestOf(sent));
    expect(await advisoryLocks()).toBe(0);
  });

  it('flags twice, unflags and erases a player, each under the player lock, which is let go every time', async () => {
    const [first, second] = bestOf(sent);
    const flag = (app: TestApp, id: string, reason: string) =>
      app.admin(`mutation($id: ID!, $r: String!) { flagPlayer(playerId: $id, reason: $r) { id } }`, { id, r: reason });
    // The second flag of one player waits for the first one's lock: a lock left on a server connection would hold it for good.
    expect((await flag(a, first!.id, 'one')).errors).toBeUndefined();
    expect((await flag(b, first!.id, 'two')).errors).toBeUndefined();
    expect((await flag(a, first!.id, 'three')).errors).toBeUndefined();
    hidden.add(first!.id);
    expect(await top(b)).toEqual(bestOf(sent, hidden));
    expect((await b.admin(`mutation($id: ID!) { unflagPlayer(playerId: $id) { id } }`, { id: first!.id })).errors).toBeUndefined();
    hidden.delete(first!.id);
    expect(await top(a)).toEqual(bestOf(sent));
    const erased = await a.admin(`mutation($id: ID!) { deletePlayer(playerId: $id) }`, { id: second!.id });
    expect(erased.errors).toBeUndefined();
    const kept = sent.filter((r) => r.playerId !== second!.id);
    sent.length = 0;
    sent.push(...kept);
    expect(await top(b)).toEqual(bestOf(sent));
    expect(await advisoryLocks()).toBe(0);
  });

  it('starts and closes a season', async () => {
    const started = await a.admin(`mutation { startSeason(board: "${BOARD}", name: "S1") { id } }`);
    expect(started.errors).toBeUndefined();
    const input = { board: BOARD, playerId: 'seasoned', matchId: 'season-1', score: 5 };
    const answer = await b.server<{ submitScore: { standings: { period: string; standing: { rank: number } }[] } }>(SUBMIT_ONE, { input });
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.submitScore.standings).toContainEqual({ period: 'SEASON', standing: { rank: 1 } });
    sent.push(input);
    const closed = await b.admin(`mutation { closeSeason(board: "${BOARD}") { id } }`);
    expect(closed.errors).toBeUndefined();
    expect(closed.data).toEqual({ closeSeason: { id: (started.data as { startSeason: { id: string } }).startSeason.id } });
  });

  it('rebuilds a bucket from PostgreSQL; no server connection keeps the rebuild’s lifted statement timeout', async () => {
    const rebuilt = await a.admin<{ rebuildBoard: number }>(`mutation { rebuildBoard(board: "${BOARD}") }`);
    expect(rebuilt.errors).toBeUndefined();
    expect(rebuilt.data!.rebuildBoard).toBe(bestOf(sent).length);
    // (b's cached top may be a view from before the season's submission, for its short bound.)
    expect(
      await settle(
        () => top(b),
        (entries) => entries.length === bestOf(sent).length,
        5_000,
      ),
    ).toEqual(bestOf(sent));
    // Each statement lands on one of the server connections: every one still has the deployment's timeout.
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const [row] = await a.database.sql<{ statement_timeout: string }[]>`show statement_timeout`;
      seen.add(row!.statement_timeout);
    }
    expect([...seen]).toEqual([`${TIMEOUTS.statementMs / 1000}s`]);
  });

  it('the recovery lock lets one process at a time work, and is free again once the work is done', async () => {
    let release!: () => void;
    const holding = new Promise<void>((resolve) => (release = resolve));
    let entered = false;
    const first = a.app.parts.storage.whileHoldingSessionLock(RECOVERY_LOCK, async () => {
      entered = true;
      await holding;
    });
    await until(() => entered, 5_000, 'the first process holds the recovery lock');
    // Held for longer than a heartbeat: the lock's transaction stays.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await b.app.parts.storage.whileHoldingSessionLock(RECOVERY_LOCK, async () => undefined)).toBe(false);
    const [taken] = await direct<{ ok: boolean }[]>`select pg_try_advisory_lock(${RECOVERY_LOCK}) as ok`;
    expect(taken!.ok).toBe(false);
    release();
    expect(await first).toBe(true);
    let ran = false;
    expect(
      await b.app.parts.storage.whileHoldingSessionLock(RECOVERY_LOCK, async () => {
        ran = true;
      }),
    ).toBe(true);
    expect(ran).toBe(true);
    expect(await advisoryLocks()).toBe(0);
  });

  it('a lock held for longer than the idle-in-transaction timeout stays held (its transaction is kept busy)', async () => {
    const brief = await startPgBouncer({ timeouts: { statementMs: 5_000, lockMs: 2_500, idleInTransactionMs: 600 } });
    const through = createDatabase(brief.via(a.databaseUrl), { pooling: 'transaction' });
    const key = RECOVERY_LOCK + 1_000;
    try {
      const held = await whileHoldingSessionLock(through.sql, key, async () => {
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        const [taken] = await direct<{ ok: boolean }[]>`select pg_try_advisory_lock(${key}) as ok`;
        expect(taken!.ok).toBe(false);
      });
      expect(held).toBe(true);
      expect(await advisoryLocks()).toBe(0);
    } finally {
      await through.close();
      await brief.stop();
    }
  });

  it('a key made on one process works on the other; revoked there, the other refuses it within seconds (its cache would keep it 30 s)', async () => {
    const made = await a.admin<{ createApiKey: { key: string; apiKey: { id: string } } }>(
      `mutation { createApiKey(name: "bouncer", role: SERVER) { key apiKey { id } } }`,
    );
    expect(made.errors).toBeUndefined();
    const { key, apiKey } = made.data!.createApiKey;
    const submit = (app: TestApp, matchId: string) => app.gql(SUBMIT_ONE, { input: { board: BOARD, playerId: 'keyed', matchId, score: 1 } }, { key });
    expect((await submit(b, 'k1')).errors).toBeUndefined();
    const revoked = await a.admin(`mutation($k: ID!) { revokeApiKey(key: $k) { id } }`, { k: apiKey.id });
    expect(revoked.errors).toBeUndefined();
    let attempt = 0;
    const took = await until(
      async () => codeOf(await submit(b, `k-after-${++attempt}`)) === 'UNAUTHENTICATED',
      5_000,
      'the other process refuses the revoked key',
    );
    expect(took).toBeLessThan(5_000);
  });
  it('PgBouncer down: submissions UNAVAILABLE with nothing written and /readyz 503; back by themselves once it is', async () => {
    await bouncer.kill();
    const input = { board: BOARD, playerId: 'outage', matchId: 'outage-1', score: 7 };
    const started = Date.now();
    const refused = await a.server(SUBMIT_ONE, { input });
    expect(codeOf(refused)).toBe('UNAVAILABLE');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await fetch(`${a.url}/readyz`)).status).toBe(503);
    const [written] = await direct<{ n: number }[]>`select count(*)::int as n from results where match_id = 'outage-1'`;
    expect(written!.n).toBe(0);
    await bouncer.start();
    const back = await until(
      async () => (await b.server(SUBMIT_ONE, { input: { ...input, matchId: `outage-${Date.now()}` } })).errors === undefined,
      10_000,
      'a submission through PgBouncer again',
    );
    expect(back).toBeLessThan(10_000);
    await until(async () => (await fetch(`${a.url}/readyz`)).status === 200, 10_000, '/readyz 200 again');
    expect(codeOf(await a.server(SUBMIT_ONE, { input }))).toBeUndefined();
  });
});
