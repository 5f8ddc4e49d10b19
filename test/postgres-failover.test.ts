import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { type OwnPostgres, startOwnPostgres, startStandby, waitForSyncStandby } from './helpers/postgres-server.js';
import { TEST_REDIS_URL, deleteKeys } from './helpers/redis-keys.js';
import { type ServiceProcess, startService } from './helpers/service-process.js';
import { until } from './helpers/wait.js';
import { freePort } from './helpers/ports.js';
import { createDatabase } from '../src/db/client.js';
import { isStoreUnavailable } from '../src/store-errors.js';
import { POSTGRES_URL } from './helpers/global-setup.js';

/**
 * PostgreSQL failover with a synchronous standby (issue 54, part 1), on servers of the test's own:
 * a primary (synchronous_standby_names = '*', synchronous_commit = on) and a streaming standby made
 * with pg_basebackup -R; the real service as a process, its DATABASE_URL naming both hosts with
 * target_session_attrs=read-write. Game servers submit; the primary is killed (SIGKILL, every process
 * of it at once), the standby promoted (pg_ctl promote), and the game servers go on submitting.
 *
 * The oracle is the promoted database itself (result_keys, read directly) and the index (the
 * service's standings, read after the catch-up):
 * - every acknowledged result is in the promoted database and in the index;
 * - every result answered UNAVAILABLE is not in the database, unless it was answered "not known
 *   yet", and then its replay (same matchId) answers duplicate: true;
 * - no other error ("Unexpected error." was answered 300–400 times per run before: connections on
 *   the standby, "cannot execute ... in a read-only transaction");
 * - submissions succeed again within 10 s of the promotion, with no restart;
 * - /readyz is 503 between the kill and the promotion, and names the new host after it, as the
 *   metric leaderboard_postgres_primary does.
 */

const SERVER_KEY = 'failover-server-key-0123456789';
const id = randomBytes(4).toString('hex');
const prefixes: string[] = [];
/**
 * Every service and server started, stopped again here even when a test timed out (its own
 * `finally` then never runs): a server outlives the test process otherwise (pg_ctl detaches it).
 */
const started: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const stop of started.reverse()) await stop().catch(() => undefined);
  for (const prefix of prefixes) await deleteKeys(prefix);
});

interface Pair {
  primary: OwnPostgres;
  standby: OwnPostgres;
  remove(): Promise<void>;
}

/** A primary with a synchronous standby streaming from it; the standby, once promoted, has none of its own. */
async function startPair(): Promise<Pair> {
  const primary = await startOwnPostgres({ settings: { synchronous_standby_names: "'*'", synchronous_commit: 'on' } });
  started.push(() => primary.remove());
  try {
    // Promoted, it has no standby: with the primary's '*' (copied by pg_basebackup) every commit would wait forever.
    const standby = await startStandby(primary, { settings: { synchronous_standby_names: "''" } });
    const remove = async () => void (await Promise.all([primary.remove(), standby.remove()]));
    started.push(remove);
    await waitForSyncStandby(primary);
    return { primary, standby, remove };
  } catch (error) {
    await primary.remove();
    throw error;
  }
}

interface Running {
  service: ServiceProcess;
  url: string;
  stop(): Promise<void>;
}

async function startOn(pair: Pair, round: number, env: Record<string, string> = {}): Promise<Running> {
  const prefix = `lbtest:failover:${id}:${round}:`;
  prefixes.push(prefix);
  // The standby first in every other round: the service must find the primary wherever it is named.
  const hosts = round % 2 === 0 ? [pair.primary.address, pair.standby.address] : [pair.standby.address, pair.primary.address];
  const service = startService({
    PORT: '0',
    DATABASE_URL: `postgres://postgres@${hosts.join(',')}/leaderboard?target_session_attrs=read-write`,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    SERVER_API_KEYS: SERVER_KEY,
    // The test reads the whole index, again and again until it has caught up: no budget in the way.
    RATE_LIMIT_READS_PER_SECOND: '0',
    RATE_LIMIT_READ_ROWS_PER_SECOND: '0',
    RATE_LIMIT_SUBMISSIONS_PER_SECOND: '0',
    ...env,
  });
  const stop = async () => {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGTERM');
    await service.exited;
  };
  started.push(stop);
  const url = await service.listening;
  return { service, url, stop };
}

type Outcome = 'acknowledged' | 'duplicate' | 'unavailable' | 'in-doubt' | 'other';

interface Answer {
  playerId: string;
  matchId: string;
  score: number;
  started: number;
  ended: number;
  outcome: Outcome;
  message: string;
}

interface GraphQLAnswer {
  data?: { submitScore?: { duplicate: boolean } | null } | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

async function submit(url: string, playerId: string, matchId: string, score: number): Promise<Answer> {
  const started = performance.now();
  let outcome: Outcome = 'other';
  let message: string;
  try {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${SERVER_KEY}` },
      body: JSON.stringify({
        query: 'mutation($p: ID!, $m: ID!, $s: Float!) { submitScore(input: { board: "global", playerId: $p, matchId: $m, score: $s }) { duplicate } }',
        variables: { p: playerId, m: matchId, s: score },
      }),
      signal: AbortSignal.timeout(60_000),
    });
    const answer = (await response.json()) as GraphQLAnswer;
    const error = answer.errors?.[0];
    if (answer.data?.submitScore) outcome = answer.data.submitScore.duplicate ? 'duplicate' : 'acknowledged';
    else if (error?.extensions?.code === 'UNAVAILABLE') outcome = /not known yet/.test(error.message) ? 'in-doubt' : 'unavailable';
    message = error ? `${error.extensions?.code ?? ''}: ${error.message}` : '';
  } catch (error) {
    message = String(error);
  }
  return { playerId, matchId, score, started, ended: performance.now(), outcome, message };
}

/** Every (player, match) key recorded in the database on `server`. */
async function recordedKeys(server: OwnPostgres): Promise<Set<string>> {
  const sql = postgres(server.url('leaderboard'), { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<{ player_id: string; match_id: string }[]>`select player_id, match_id from result_keys where board_id = 'global'`;
    return new Set(rows.map((row) => `${row.player_id}|${row.match_id}`));
  } finally {
    await sql.end();
  }
}

/** The ALL_TIME standings the service serves from the index: player -> score. */
async function indexed(url: string): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  let after: string | null = null;
  for (;;) {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${SERVER_KEY}` },
      body: JSON.stringify({
        query:
          'query($after: String) { standings(board: "global", first: 1000, after: $after) { edges { node { score player { id } } } pageInfo { hasNextPage endCursor } } }',
        variables: { after },
      }),
    });
    const answer = (await response.json()) as {
      data?: { standings: { edges: { node: { score: number; player: { id: string } } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } };
      errors?: unknown[];
    };
    if (!answer.data) throw new Error(`standings: ${JSON.stringify(answer.errors)}`);
    for (const { node } of answer.data.standings.edges) found.set(node.player.id, node.score);
    if (!answer.data.standings.pageInfo.hasNextPage) return found;
    after = answer.data.standings.pageInfo.endCursor;
  }
}

interface Readiness {
  started: number;
  ended: number;
  status: number;
  host: string | null | undefined;
}

/** Polls /readyz every 100 ms until stopped. */
function pollReadiness(url: string) {
  const seen: Readiness[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) });
        const body = (await response.json()) as { postgresHost?: string | null };
        seen.push({ started, ended: performance.now(), status: response.status, host: body.postgresHost });
      } catch {
        seen.push({ started, ended: performance.now(), status: 0, host: undefined });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    seen,
    async stop() {
      running = false;
      await done;
    },
  };
}

/**
 * Checks the pass conditions on every answer against the promoted database and the index; replays
 * the results answered "not known yet". Answers a line for the report.
 */
async function checkAnswers(url: string, promoted: OwnPostgres, answers: Answer[]): Promise<string> {
  const keyOf = (a: Answer) => `${a.playerId}|${a.matchId}`;
  const count = (outcome: Outcome) => answers.filter((a) => a.outcome === outcome).length;
  expect(
    answers.filter((a) => a.outcome === 'other' || a.outcome === 'duplicate').map((a) => a.message),
    'no answer but acknowledged or UNAVAILABLE (unique matchIds: never duplicate)',
  ).toEqual([]);
  const recorded = await recordedKeys(promoted);
  const lost = answers.filter((a) => a.outcome === 'acknowledged' && !recorded.has(keyOf(a)));
  expect(lost.map(keyOf), 'acknowledged results missing from the promoted database').toEqual([]);
  const unavailableButRecorded = answers.filter((a) => a.outcome === 'unavailable' && recorded.has(keyOf(a)));
  expect(unavailableButRecorded.map(keyOf), 'results answered UNAVAILABLE ("nothing was recorded") yet recorded').toEqual([]);

  // "Not known yet": the replay tells, and must agree with the database.
  const acknowledged = answers.filter((a) => a.outcome === 'acknowledged');
  for (const doubted of answers.filter((a) => a.outcome === 'in-doubt')) {
    const replay = await submit(url, doubted.playerId, doubted.matchId, doubted.score);
    expect(replay.outcome, `the replay of ${keyOf(doubted)}`).toBe(recorded.has(keyOf(doubted)) ? 'duplicate' : 'acknowledged');
    acknowledged.push(doubted);
  }

  // Every acknowledged result in the index once it has caught up (each player submits once: its score is the result's).
  let index = new Map<string, number>();
  const missing = () => acknowledged.filter((a) => index.get(a.playerId) !== a.score);
  await until(
    async () => {
      index = await indexed(url);
      return missing().length === 0;
    },
    20_000,
    () => `every acknowledged result in the index; missing: ${missing().slice(0, 5).map(keyOf).join(', ')} (${missing().length})`,
    250,
  );
  return `${answers.length} submissions: ${count('acknowledged')} acknowledged, ${count('unavailable')} UNAVAILABLE, ${count('in-doubt')} not known yet`;
}

describe('PostgreSQL failover with a synchronous standby', () => {
  it('finds the primary wherever DATABASE_URL names it, and fails at once, UNAVAILABLE, while no host is one', async () => {
    // postgres.js's own host list tried the hosts one after the other with no pause and never
    // failed the waiting query while none suited: a request hung until its deadline.
    const [dead, alsoDead] = [await freePort(), await freePort()];
    const shared = new URL(POSTGRES_URL).host;
    const found = createDatabase(`postgres://postgres@127.0.0.1:${dead},${shared}/postgres?target_session_attrs=read-write`, { maxConnections: 2 });
    const none = createDatabase(`postgres://postgres@127.0.0.1:${dead},127.0.0.1:${alsoDead}/postgres`, { maxConnections: 2 });
    try {
      const [row] = await found.sql<{ standby: boolean }[]>`select pg_is_in_recovery() as standby`;
      expect(row!.standby).toBe(false);
      expect(found.primary.current()).toBe(shared);
      const started = performance.now();
      const error = await none.sql`select 1`.then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(performance.now() - started).toBeLessThan(3_000);
      expect((error as Error).message).toMatch(/no PostgreSQL primary among .* does not answer/);
      expect(isStoreUnavailable(error)).toBe(true);
      expect(none.primary.current()).toBeNull();
    } finally {
      await Promise.all([found.close(), none.close()]);
    }
  });

  it('never acknowledges a COMMIT that did not reach the standby, though the promoted standby hands its transaction id to another', async () => {
    // The loss of issue 54 made certain: the primary's WAL sender is stopped (SIGSTOP), so a group's
    // COMMIT is flushed on the primary and waits for the standby, which never receives a byte of
    // that transaction. The primary is killed with the COMMIT on the wire: the service cannot know
    // whether it committed, and asks the database it writes to next, the promoted standby. That
    // one hands out the same transaction ids again, so pg_xact_status answered 'committed' once
    // the standby's own next transaction took the id, and the group was acknowledged, its results nowhere.
    const pair = await startPair();
    let running: Running | undefined;
    try {
      running = await startOn(pair, 100, { REQUEST_TIMEOUT_MS: '30000' });
      const { url } = running;
      expect((await submit(url, 'before', 'm0', 1)).outcome).toBe('acknowledged');

      const sql = postgres(pair.primary.url(), { max: 1, onnotice: () => {} });
      const [sender] = await sql<{ pid: number }[]>`select pid from pg_stat_replication`;
      await sql.end();
      process.kill(sender!.pid, 'SIGSTOP');
      // One group in doubt: the group commit's other slot goes on committing on the promoted standby.
      const doubted = [submit(url, 'doubted', 'm0', 10)];
      const watch = postgres(pair.primary.url(), { max: 1, onnotice: () => {} });
      await until(
        async () => (await watch<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where wait_event = 'SyncRep'`)[0]!.n > 0,
        10_000,
        "a COMMIT waiting for the stopped standby's acknowledgement",
        20,
      );
      await watch.end({ timeout: 1 });
      await pair.primary.kill();
      await pair.standby.promote();
      // The promoted standby's own transactions take the ids the lost ones had.
      const after: Answer[] = [];
      for (let n = 0; n < 40; n++) after.push(await submit(url, `after-${n}`, `m${n}`, 100 + n));
      const answers = await Promise.all(doubted);
      expect(after.filter((a) => a.outcome === 'acknowledged').length).toBeGreaterThan(0);

      // Its COMMIT was waiting when the primary died: it is not in the promoted database.
      const recorded = await recordedKeys(pair.standby);
      const lostCommits = answers.filter((a) => !recorded.has(`${a.playerId}|${a.matchId}`));
      expect(lostCommits.length, 'results whose COMMIT never reached the standby').toBe(1);
      console.log(
        `a lost COMMIT: ${answers.map((a) => `${a.playerId} ${a.outcome}${recorded.has(`${a.playerId}|${a.matchId}`) ? ' (recorded)' : ''}`).join(', ')}`,
      );
      await checkAnswers(url, pair.standby, [...answers, ...after]);
    } finally {
      await running?.stop();
      await pair.remove();
    }
  }, 90_000);

  it('loses no acknowledged result, answers UNAVAILABLE while no primary is up, and writes to the promoted standby within 10 s, round after round', async () => {
    const ROUNDS = 5;
    const CLIENTS = 32;
    const report: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const pair = await startPair();
      let running: Running | undefined;
      try {
        running = await startOn(pair, round);
        const { url } = running;
        await until(async () => (await fetch(`${url}/readyz`)).status === 200, 20_000, 'the service ready');
        const readiness = pollReadiness(url);
        const answers: Answer[] = [];
        let stopAt = Number.POSITIVE_INFINITY;
        let sequence = 0;
        const client = async (c: number) => {
          while (performance.now() < stopAt) {
            const n = sequence++;
            answers.push(await submit(url, `r${round}-c${c}-p${n}`, `m${n}`, 1 + (n % 100_000)));
          }
        };
        const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));

        await new Promise((resolve) => setTimeout(resolve, 2_500 + round * 200));
        const killed = performance.now();
        await pair.primary.kill();
        // Long enough for every connection to have noticed, and for readyz to be asked a few times
        // (a probe waits up to a second for PostgreSQL).
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        const promoting = performance.now();
        await pair.standby.promote();
        const promoted = performance.now();
        await until(
          () => answers.some((a) => a.started >= promoted && a.outcome === 'acknowledged'),
          10_000,
          'a submission sent after the promotion acknowledged within 10 s',
          20,
        );
        const back = Math.min(...answers.filter((a) => a.started >= promoted && a.outcome === 'acknowledged').map((a) => a.ended)) - promoted;
        stopAt = performance.now() + 1_000;
        await Promise.all(clients);
        await readiness.stop();
        // Nothing but acknowledged or UNAVAILABLE, before anything else is asked of the service.
        expect(
          answers.filter((a) => a.outcome === 'other').map((a) => a.message),
          'answers neither acknowledged nor UNAVAILABLE',
        ).toEqual([]);

        const between = readiness.seen.filter((r) => r.started >= killed + 500 && r.ended <= promoting);
        expect(between.length, 'readyz asked between the kill and the promotion').toBeGreaterThan(0);
        expect(
          between.filter((r) => r.status !== 503),
          'readyz between the kill and the promotion',
        ).toEqual([]);
        expect(between.every((r) => r.host === null)).toBe(true);
        await until(
          async () => ((await (await fetch(`${url}/readyz`)).json()) as { postgresHost?: string }).postgresHost === pair.standby.address,
          10_000,
          'readyz naming the promoted standby',
        );
        const metrics = await (await fetch(`${url}/metrics`)).text();
        expect(metrics).toContain(`leaderboard_postgres_primary{host="${pair.standby.address}"} 1`);
        expect(metrics).not.toContain(`leaderboard_postgres_primary{host="${pair.primary.address}"}`);

        const line = await checkAnswers(url, pair.standby, answers);
        report.push(`round ${round + 1}: ${line}; submissions acknowledged again ${Math.round(back)} ms after the promotion`);
      } finally {
        await running?.stop();
        await pair.remove();
      }
    }
    console.log(`postgres failover:\n${report.join('\n')}`);
  }, 240_000);
});
