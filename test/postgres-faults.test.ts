import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ModelBoard, type ModelResult, allMatch, modelBuckets } from './helpers/board-views.js';
import { seeded } from './helpers/random.js';
import { type TcpProxy, startTcpProxy } from './helpers/tcp-proxy.js';
import { SERVER_KEY, type TestApp, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';

/**
 * PostgreSQL failing the way networks fail, under load: ten game servers submit without pause
 * while every connection to PostgreSQL is dropped 25 times, 1 to 3 s apart, and then PostgreSQL
 * hangs (connections open, nothing answered) for 15 s. Whatever happens, every request is answered
 * within the bound, UNAVAILABLE means nothing was recorded, no session is left idle in a
 * transaction, submissions work again within seconds of each fault, and every acknowledged result
 * is in PostgreSQL and ranked as a plain model of the log ranks it.
 */

/** The request bound the app is given. */
const BOUND_MS = 5_000;
/** What a response may take beyond the bound: the answer's own trip. */
const SLACK_MS = 1_500;
const BOARD: ModelBoard = { id: 'flaky-eu', order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME', 'DAILY'], regions: [] };

interface Answered {
  result: ModelResult;
  ms: number;
  outcome: 'recorded' | 'unavailable' | 'in-doubt' | 'other';
  detail?: string;
}

/** For the scenario's own durations only (a fault's length, a client's pace), never to wait for a condition. */
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a flapping, then hanging PostgreSQL under ten submitting game servers', () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let direct: postgres.Sql;

  beforeAll(async () => {
    proxy = await startTcpProxy({ port: 5432 });
    t = await startTestApp({ databaseVia: proxy, requestTimeoutMs: BOUND_MS });
    direct = postgres(t.databaseUrl, { max: 2, onnotice: () => {} });
    const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
      input: { id: BOARD.id, title: 'Flaky', order: BOARD.order, aggregate: BOARD.aggregate, maxScore: 100_000, periods: BOARD.periods },
    });
    expect(created.errors).toBeUndefined();
  });
  afterAll(async () => {
    await proxy?.restore();
    await t?.close();
    await direct?.end();
    await proxy?.close();
  });

  it('answers every request within the bound and loses nothing', { timeout: 240_000 }, async () => {
    const answered: Answered[] = [];
    const next = seeded(17);
    let sent = 0;
    let stopping = false;

    async function submit(result: ModelResult): Promise<void> {
      const started = performance.now();
      let outcome: Answered['outcome'] = 'other';
      let detail: string | undefined;
      try {
        const response = await fetch(`${t.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${SERVER_KEY}` },
          body: JSON.stringify({
            query: `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }`,
            variables: {
              input: {
                board: result.board,
                playerId: result.playerId,
                matchId: result.matchId,
                score: result.score,
                achievedAt: result.achievedAt.toISOString(),
              },
            },
          }),
          // Far past the bound: a request still open then has hung.
          signal: AbortSignal.timeout(60_000),
        });
        const body = (await response.json()) as {
          data?: { submitScore: { duplicate: boolean } } | null;
          errors?: { message: string; extensions?: { code?: string } }[];
        };
        const error = body.errors?.[0];
        if (!error && body.data?.submitScore.duplicate === false) outcome = 'recorded';
        else if (error?.extensions?.code === 'UNAVAILABLE') outcome = /not known/.test(error.message) ? 'in-doubt' : 'unavailable';
        else detail = JSON.stringify(body);
      } catch (error) {
        detail = String(error);
      }
      answered.push({ result, ms: performance.now() - started, outcome, ...(detail ? { detail } : {}) });
    }

    const client = async (c: number) => {
      while (!stopping) {
        const i = sent++;
        const result: ModelResult = {
          board: BOARD.id,
          playerId: `spieler-${c}-${Math.floor(next() * 8)}`,
          matchId: `m-${i}`,
          score: 1 + Math.floor(next() * 99_999),
          region: null,
          achievedAt: new Date(),
        };
        await submit(result);
        // A game server backs off a little before its next call after a failure (its pace: a scenario parameter).
        if (answered.at(-1)!.outcome !== 'recorded') await wait(50);
      }
    };
    const recordedCount = () => answered.filter((a) => a.outcome === 'recorded').length;
    const recoversWithin = async (what: string) => {
      const before = recordedCount();
      return until(() => recordedCount() > before, 10_000, `a submission succeeds after ${what}`);
    };

    // A game client reading a player and their standing with the name beside it, throughout.
    const reads: { ms: number; outcome: string }[] = [];
    const reader = async () => {
      while (!stopping) {
        const started = performance.now();
        let outcome: string;
        try {
          const body = (await (
            await fetch(`${t.url}/graphql`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({
                query: `query($b: ID!, $p: ID!) { player(id: $p) { id displayName } standing(board: $b, playerId: $p) { rank player { id displayName } } }`,
                variables: { b: BOARD.id, p: 'spieler-0-1' },
              }),
              signal: AbortSignal.timeout(60_000),
            })
          ).json()) as { errors?: { extensions?: { code?: string } }[] };
          outcome = body.errors ? (body.errors[0]?.extensions?.code ?? JSON.stringify(body.errors)) : 'ok';
        } catch (error) {
          outcome = String(error);
        }
        reads.push({ ms: performance.now() - started, outcome });
        // The reader's pace, a scenario parameter.
        await wait(100);
      }
    };
    const readyz = async () => (await fetch(`${t.url}/readyz`)).status;

    const clients = [...Array.from({ length: 10 }, (_, c) => client(c)), reader()];
    await until(() => recordedCount() >= 20, 10_000, 'submissions flow before the faults');

    const recovery: number[] = [];
    const faults = seeded(99);
    // Why waits: the fault schedule (how long between drops, how long each lasts) is the scenario.
    for (let drop = 0; drop < 25; drop++) {
      await wait(1_000 + Math.floor(faults() * 2_000));
      proxy.cut();
      await wait(20 + Math.floor(faults() * 200));
      await proxy.restore();
    }
    recovery.push(await recoversWithin('25 drops'));

    proxy.pause();
    const hung = Date.now();
    // Not ready while submissions cannot commit, though the process itself answers.
    await until(async () => (await readyz()) === 503, BOUND_MS * 2, '/readyz answers 503 during the hang');
    // The hang's length is the fault itself.
    await wait(15_000 - (Date.now() - hung));
    proxy.resume();
    recovery.push(await recoversWithin('a 15 s hang'));
    await until(async () => (await readyz()) === 200, BOUND_MS * 2, '/readyz answers 200 again by itself');
    // Submissions flow again for a while after the recovery before the clients stop.
    const recoveredWith = recordedCount();
    await until(() => recordedCount() >= recoveredWith + 20, 10_000, 'submissions flow after the recovery');
    stopping = true;
    await Promise.all(clients);

    const longest = Math.max(...answered.map((a) => a.ms));
    const longestRead = Math.max(...reads.map((r) => r.ms));
    const count = (outcome: string) => answered.filter((a) => a.outcome === outcome).length;
    console.info(
      `postgres faults: ${answered.length} submissions (${count('recorded')} recorded, ${count('unavailable')} UNAVAILABLE, ${count('in-doubt')} in doubt), ` +
        `longest ${Math.round(longest)} ms; ${reads.length} reads, longest ${Math.round(longestRead)} ms (bound ${BOUND_MS} ms); ` +
        `back after the drops in ${recovery[0]} ms, after the hang in ${recovery[1]} ms`,
    );
    expect(answered.filter((a) => a.outcome === 'other').map((a) => a.detail)).toEqual([]);
    expect(longest).toBeLessThan(BOUND_MS + SLACK_MS);
    expect(reads.filter((r) => r.outcome !== 'ok' && r.outcome !== 'UNAVAILABLE')).toEqual([]);
    expect(longestRead).toBeLessThan(BOUND_MS + SLACK_MS);

    // No session of the app's is left inside a transaction.
    await until(
      async () => {
        const [row] = await direct<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and state like 'idle in transaction%'`;
        return row!.n === 0;
      },
      BOUND_MS * 2,
      'no session idle in transaction',
    );

    // Acknowledged: in the log. UNAVAILABLE (not in doubt): not in the log.
    const logged = new Set((await direct<{ match_id: string }[]>`select match_id from results where board_id = ${BOARD.id}`).map((r) => r.match_id));
    expect(answered.filter((a) => a.outcome === 'recorded' && !logged.has(a.result.matchId)).map((a) => a.result.matchId)).toEqual([]);
    expect(answered.filter((a) => a.outcome === 'unavailable' && logged.has(a.result.matchId)).map((a) => a.result.matchId)).toEqual([]);

    // The index ranks exactly what the log holds (the catch-up re-applies what a fault left out).
    const log = await direct<{ player_id: string; match_id: string; score: number; achieved_at: Date }[]>`
      select player_id, match_id, score::int as score, achieved_at from results where board_id = ${BOARD.id}`;
    const truth: ModelResult[] = log.map((r) => ({
      board: BOARD.id,
      playerId: r.player_id,
      matchId: r.match_id,
      score: r.score,
      region: null,
      achievedAt: r.achieved_at,
    }));
    const buckets = modelBuckets([BOARD], truth);
    await until(() => allMatch(t, buckets), 20_000, 'every bucket equals the model of the log');
  });
});
