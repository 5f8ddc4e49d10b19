import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OracleBoard, type OracleResult, foldResults, rankEntries } from './helpers/oracle.js';
import { seeded } from './helpers/random.js';
import { settle } from './helpers/wait.js';
import { type TcpProxy, startTcpProxy } from './helpers/tcp-proxy.js';
import { type TestApp, startTestApp, codeOf } from './helpers/test-app.js';
import { createModelBoards } from './helpers/board-views.js';

/**
 * A bounded soak: 60 s of concurrent submissions from several game servers while Redis is cut off
 * for 10 s and PostgreSQL for 5 s. At the end every submission answered as accepted must be in
 * PostgreSQL and ranked where a plain sort of the accepted results puts it, and none answered
 * UNAVAILABLE may be recorded. SKIP_SOAK=1 skips it locally.
 */

const SECONDS = 60;
const REDIS_CUT = { from: 10, to: 20 };
const POSTGRES_CUT = { from: 35, to: 40 };
const CLIENTS = 6;

const BOARDS: (OracleBoard & { regions: string[] })[] = [
  { id: 'soak-points', order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME', 'DAILY'], regions: ['eu', 'us'] },
  { id: 'soak-race', order: 'LOW_FIRST', aggregate: 'BEST', periods: ['ALL_TIME'], regions: ['eu'] },
];

interface Sent extends OracleResult {
  board: string;
  matchId: string;
}

describe.skipIf(process.env.SKIP_SOAK)('soak: concurrent submissions while Redis and PostgreSQL are cut off', () => {
  let redisProxy: TcpProxy;
  let postgresProxy: TcpProxy;
  let t: TestApp;
  let direct: postgres.Sql;

  beforeAll(async () => {
    redisProxy = await startTcpProxy({ port: 6379 });
    postgresProxy = await startTcpProxy({ port: 5432 });
    t = await startTestApp({ redisUrl: `redis://${redisProxy.host}:${redisProxy.port}`, databaseVia: postgresProxy });
    direct = postgres(t.databaseUrl, { max: 2, onnotice: () => {} });
    // maxScore below 8,192: every tie is broken to the millisecond, as the oracle breaks it.
    await createModelBoards(
      t,
      BOARDS.map((board) => ({ ...board, maxScore: 5_000 })),
    );
  });
  afterAll(async () => {
    await redisProxy?.restore();
    await postgresProxy?.restore();
    await t?.close();
    await direct?.end();
    await redisProxy?.close();
    await postgresProxy?.close();
  });

  it('loses nothing accepted, records nothing refused, and ranks every accepted result exactly', async () => {
    const accepted: Sent[] = [];
    const refused: Sent[] = [];
    const unexpected: string[] = [];
    let longestCallMs = 0;
    const started = Date.now();
    const elapsed = () => (Date.now() - started) / 1000;

    async function client(n: number): Promise<void> {
      const next = seeded(1_000 + n);
      for (let call = 0; elapsed() < SECONDS; call++) {
        const batch: Sent[] = Array.from({ length: 1 + Math.floor(next() * 4) }, (_, i) => {
          const board = BOARDS[Math.floor(next() * BOARDS.length)]!;
          return {
            board: board.id,
            matchId: `c${n}-${call}-${i}`,
            playerId: `p${String(Math.floor(next() * 300)).padStart(3, '0')}`,
            score: Math.floor(next() * 5_001),
            region: next() < 0.5 ? board.regions[Math.floor(next() * board.regions.length)]! : null,
            achievedAt: new Date(Date.now() - Math.floor(next() * 10_000)),
          };
        });
        const callStarted = Date.now();
        const response = await t.server(`mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`, {
          inputs: batch.map((s) => ({ ...s, achievedAt: s.achievedAt.toISOString() })),
        });
        longestCallMs = Math.max(longestCallMs, Date.now() - callStarted);
        if (!response.errors) accepted.push(...batch);
        else if (codeOf(response) === 'UNAVAILABLE') refused.push(...batch);
        else unexpected.push(JSON.stringify(response.errors));
        // Why a sleep: a game server's pace between calls is the load the soak puts on, a part of the scenario.
        await new Promise((resolve) => setTimeout(resolve, next.int(20, 59)));
      }
    }

    async function faults(): Promise<void> {
      // Why timers: when each store goes away and comes back is the fault schedule, a part of the scenario.
      const at = (second: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, started + second * 1000 - Date.now())));
      await at(REDIS_CUT.from);
      redisProxy.cut();
      await at(REDIS_CUT.to);
      await redisProxy.restore();
      await at(POSTGRES_CUT.from);
      postgresProxy.cut();
      await at(POSTGRES_CUT.to);
      await postgresProxy.restore();
    }

    await Promise.all([faults(), ...Array.from({ length: CLIENTS }, (_, n) => client(n))]);
    expect(unexpected).toEqual([]);

    // PostgreSQL: every accepted result once, nothing refused.
    const key = (s: { board: string; matchId: string; playerId: string }) => `${s.board}|${s.matchId}|${s.playerId}`;
    const rows = await direct<{ board_id: string; match_id: string; player_id: string }[]>`
        select board_id, match_id, player_id from results where board_id like 'soak-%'`;
    const recorded = new Set(rows.map((row) => key({ board: row.board_id, matchId: row.match_id, playerId: row.player_id })));
    const lost = accepted.filter((s) => !recorded.has(key(s)));
    const refusedButRecorded = refused.filter((s) => recorded.has(key(s)));
    const counts = { accepted: accepted.length, unavailable: refused.length, lost: lost.length, unavailableButRecorded: refusedButRecorded.length };
    console.log(`soak: ${JSON.stringify({ ...counts, longestCallMs })}`);
    expect(counts.lost).toBe(0);
    expect(counts.unavailableButRecorded).toBe(0);
    expect(recorded.size).toBe(accepted.length);
    // The PostgreSQL outage was felt, so the counts above are not those of a quiet run: a
    // submission in flight when the connections were closed was refused UNAVAILABLE, or (when none
    // was in flight at that instant) those sent meanwhile waited for the store to come back.
    const outageMs = (POSTGRES_CUT.to - POSTGRES_CUT.from) * 1000;
    expect(refused.length > 0 || longestCallMs >= outageMs / 2, `refused ${refused.length}, longest call ${longestCallMs} ms`).toBe(true);
    expect(accepted.length).toBeGreaterThan(refused.length);

    // The index: every bucket the accepted results fall in, read page by page, equals the oracle.
    const expected = BOARDS.flatMap((board) =>
      [
        ...foldResults(
          board,
          accepted.filter((s) => s.board === board.id),
        ),
      ].map(([id, entries]) => {
        const [period, label, region] = id.split('|') as [string, string, string];
        const ranking = rankEntries(board, entries.values()).map((entry, i) => ({ rank: i + 1, score: entry.score, player: entry.playerId }));
        return { board: board.id, period, label, region: region || null, ranking };
      }),
    );
    const mismatched = async () => {
      const wrong: string[] = [];
      for (const bucket of expected) {
        const read: { rank: number; score: number; player: string }[] = [];
        let after: string | null = null;
        for (;;) {
          const page: {
            data?: {
              standings: {
                edges: { node: { rank: number; score: number; player: { id: string } } }[];
                pageInfo: { hasNextPage: boolean; endCursor: string | null };
              };
            } | null;
            errors?: unknown[] | undefined;
          } = await t.gql(
            `query($b: ID!, $p: Period!, $k: String, $r: String, $after: String) {
                  standings(board: $b, period: $p, bucket: $k, region: $r, first: 100, after: $after) {
                    edges { node { rank score player { id } } } pageInfo { hasNextPage endCursor } } }`,
            { b: bucket.board, p: bucket.period, k: bucket.label, r: bucket.region, after },
          );
          if (page.errors) {
            wrong.push(`${bucket.board} ${bucket.period} ${bucket.label} ${bucket.region}: ${JSON.stringify(page.errors)}`);
            break;
          }
          read.push(...page.data!.standings.edges.map(({ node }) => ({ rank: node.rank, score: node.score, player: node.player.id })));
          if (!page.data!.standings.pageInfo.hasNextPage) break;
          after = page.data!.standings.pageInfo.endCursor;
        }
        if (JSON.stringify(read) !== JSON.stringify(bucket.ranking)) wrong.push(`${bucket.board} ${bucket.period} ${bucket.label} ${bucket.region}`);
      }
      return wrong;
    };
    expect(await settle(mismatched, (wrong) => wrong.length === 0, 20_000, 500)).toEqual([]);
    // And nothing is left waiting to be applied.
    const waiting = async () => (await direct<{ n: number }[]>`select count(*)::int as n from index_backlog`)[0]!.n;
    expect(await settle(waiting, (n) => n === 0, 10_000, 200)).toBe(0);
  }, 180_000);
});
