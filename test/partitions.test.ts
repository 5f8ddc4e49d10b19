import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartitionError, addMonths, detachResultPartition, listResultPartitions, monthOf, partitionName } from '../src/db/partitions.js';
import { listBoardScores } from '../src/db/board-scores.js';
import { findBoard } from '../src/db/boards.js';
import { parseBucketLabel } from '../src/model/buckets.js';
import { boardScoreList } from '../src/services/buckets.js';
import { runCli } from './helpers/cli.js';
import { rankScores } from './helpers/oracle.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * The score log partitioned by month: results land in their month's partition, replays are caught
 * across months, the service creates partitions ahead, a past month can be detached for archiving
 * while the board goes on answering, and reads bounded by month touch only that month's partition.
 */

const SUBMIT = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate standings { period bucket standing { rank score } } } }`;
const TOP = `query($b: ID!) { top(board: $b, limit: 100) { size entries { rank score player { id } } } }`;

describe('the score log partitioned by month', () => {
  let t: TestApp;
  // The service's clock, months after the real one, so that its partition job has work to do.
  let clock = new Date('2027-06-15T12:00:00.000Z');
  const statements: string[] = [];

  const submit = async (input: Record<string, unknown>) => {
    const response = await t.server<{ submitScore: { duplicate: boolean; standings: unknown[] } }>(SUBMIT, { input: { board: 'logged', ...input } });
    expect(response.errors).toBeUndefined();
    return response.data!.submitScore;
  };
  const partitionOf = async (matchId: string) => {
    const rows = await t.database.sql<{ part: string }[]>`select tableoid::regclass::text as part from results where match_id = ${matchId}`;
    return rows.map((row) => row.part);
  };
  const cli = (args: string[]) => runCli(t, args);

  beforeAll(async () => {
    t = await startTestApp({ now: () => clock, onQuery: (statement) => statements.push(statement) });
    const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
      input: {
        id: 'logged',
        title: 'logged',
        order: 'HIGH_FIRST',
        aggregate: 'BEST',
        maxScore: 1_000_000,
        periods: ['ALL_TIME', 'MONTHLY', 'SEASON'],
        regions: [],
      },
    });
    expect(created.errors).toBeUndefined();
  });
  afterAll(() => t?.close());

  it('the service creates the partitions of the month before, this one and the next two at start', async () => {
    const wanted = ['2027-05', '2027-06', '2027-07', '2027-08'];
    await expect
      .poll(async () => (await listResultPartitions(t.database.sql)).map((partition) => partition.month), { timeout: 10_000, interval: 50 })
      .toEqual(expect.arrayContaining([...wanted, null]));
  });

  it('results land in their month, a month without a partition in the default one until it gets its own', async () => {
    await submit({ playerId: 'ann', matchId: 'june', score: 10, achievedAt: '2027-06-03T10:00:00.000Z' });
    await submit({ playerId: 'ann', matchId: 'may-end', score: 11, achievedAt: '2027-05-31T23:59:59.999Z' });
    await submit({ playerId: 'bob', matchId: 'march', score: 12, achievedAt: '2027-03-10T08:00:00.000Z' });
    expect(await partitionOf('june')).toEqual(['results_2027_06']);
    expect(await partitionOf('may-end')).toEqual(['results_2027_05']);
    expect(await partitionOf('march')).toEqual(['results_default']);

    const { stdout } = await cli(['partitions', 'create', '--month', '2027-03']);
    expect(stdout).toContain('results_2027_03: created');
    expect(await partitionOf('march')).toEqual(['results_2027_03']);
    const [left] = await t.database.sql<{ n: number }[]>`select count(*)::int as n from results_default`;
    expect(left!.n).toBe(0);
  }, 60_000);

  it('a replay is caught whatever month its retry lands in', async () => {
    // Sent without achievedAt at the last moment of June, retried just after midnight.
    clock = new Date('2027-06-30T23:59:59.900Z');
    expect((await submit({ playerId: 'cid', matchId: 'midnight', score: 20 })).duplicate).toBe(false);
    clock = new Date('2027-07-01T00:00:01.000Z');
    expect((await submit({ playerId: 'cid', matchId: 'midnight', score: 20 })).duplicate).toBe(true);
    // And with an explicit achievedAt in another month.
    expect((await submit({ playerId: 'ann', matchId: 'june', score: 30, achievedAt: '2027-07-01T00:00:00.000Z' })).duplicate).toBe(true);
    expect(await partitionOf('midnight')).toEqual(['results_2027_06']);
    expect(await partitionOf('june')).toEqual(['results_2027_06']);
    clock = new Date('2027-06-15T12:00:00.000Z');
  });

  it('a past month detaches for archiving; the board still answers, replays of it are still caught', async () => {
    // A month no kept bucket reads any more (the CLI runs on the real clock): past the board's
    // monthly retention. One still read by a derived bucket (its MONTHLY, kept 396 days) is refused.
    const OLD = monthOf(new Date(Date.now() - 460 * 86_400_000));
    const read = await cli(['partitions', 'detach', '--month', monthOf(new Date(Date.now() - 60 * 86_400_000))]).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(read?.code).toBe(1);
    expect(read?.stderr).toMatch(/still read by buckets derived from the score log: .*board "logged" MONTHLY \(until \d{4}-/);
    // An open season that began before the month reads it, however old, until it is closed.
    const seasonal = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
      input: { id: 'seasonal', title: 'seasonal', order: 'HIGH_FIRST', aggregate: 'BEST', maxScore: 1_000, periods: ['ALL_TIME', 'SEASON'], regions: [] },
    });
    expect(seasonal.errors).toBeUndefined();
    await t.database
      .sql`insert into seasons (board_id, id, name, starts_at) values ('seasonal', 's1', 'long', ${`${addMonths(OLD, -1)}-01T00:00:00Z`}::timestamptz)`;
    const inSeason = await cli(['partitions', 'detach', '--month', OLD]).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(inSeason?.stderr).toMatch(/board "seasonal" SEASON \(until its open season is closed\)/);
    await t.database.sql`update seasons set closed_at = now() where board_id = 'seasonal'`;
    await cli(['partitions', 'create', '--month', OLD]);
    await submit({ playerId: 'dee', matchId: 'old', score: 40, achievedAt: `${OLD}-10T00:00:00.000Z` });
    expect(await partitionOf('old')).toEqual([partitionName(OLD)]);
    const before = await t.gql(TOP, { b: 'logged' });

    const { stdout } = await cli(['partitions', 'detach', '--month', OLD]);
    expect(stdout).toContain(`detached ${partitionName(OLD)}`);
    expect((await listResultPartitions(t.database.sql)).map((partition) => partition.name)).not.toContain(partitionName(OLD));
    // The table stays, outside the log, for the operator to dump.
    const [archived] = await t.database.sql<{ n: number }[]>`select count(*)::int as n from ${t.database.sql(partitionName(OLD))}`;
    expect(archived!.n).toBe(1);
    expect(await partitionOf('old')).toEqual([]);

    expect(await t.gql(TOP, { b: 'logged' })).toEqual(before);
    const rebuilt = await t.admin(`mutation { rebuildBoard(board: "logged", period: ALL_TIME) }`);
    expect(rebuilt.errors).toBeUndefined();
    expect(await t.gql(TOP, { b: 'logged' })).toEqual(before);
    expect((await submit({ playerId: 'dee', matchId: 'old', score: 40, achievedAt: `${OLD}-10T00:00:00.000Z` })).duplicate).toBe(true);
    // A late result for the detached month is kept, in the default partition.
    await submit({ playerId: 'eve', matchId: 'late', score: 5, achievedAt: `${OLD}-11T00:00:00.000Z` });
    expect(await partitionOf('late')).toEqual(['results_default']);

    // The current month (by the real clock the CLI runs on) is refused, as are a month not attached
    // and one that is no month.
    await expect(detachResultPartition(t.database.sql, OLD, new Date())).rejects.toThrow(PartitionError);
    for (const month of [monthOf(new Date()), '2026-13']) {
      const refused = await cli(['partitions', 'detach', '--month', month]).then(
        () => null,
        (error: { code: number; stderr: string }) => error,
      );
      expect(refused?.code, month).toBe(month === '2026-13' ? 2 : 1);
    }
    const listed = await cli(['partitions', 'list']);
    expect(listed.stdout).toMatch(/^results_default\tdefault\t1 rows$/m);
  }, 60_000);

  it('a read bounded by month scans only that month; a derived bucket reads only its span, a kept one no partition of the log', async () => {
    const plan = async (from: string, to: string) => {
      const [row] = await t.database.sql.unsafe<{ 'QUERY PLAN': unknown }[]>(
        `explain (format json) select count(*) from results where achieved_at >= '${from}' and achieved_at < '${to}'`,
      );
      return relations(row!['QUERY PLAN']);
    };
    const relations = (plan: unknown) => [...new Set([...JSON.stringify(plan).matchAll(/"Relation Name":"(results[^"]*)"/g)].map((m) => m[1]))].sort();
    expect(await plan('2027-06-01T00:00:00Z', '2027-07-01T00:00:00Z')).toEqual(['results_2027_06']);
    expect(await plan('2027-05-20T00:00:00Z', '2027-06-10T00:00:00Z')).toEqual(['results_2027_05', 'results_2027_06']);

    // A bucket derived from the log (a BEST board's month) reads the partitions of its span alone,
    // whether its whole list (a rebuild) or a few players' board scores (a standing's recorded time).
    const board = (await findBoard(t.database.db, 'logged'))!;
    const derived = (label: string) => boardScoreList({ board, bucket: parseBucketLabel(board, 'MONTHLY', label)!, region: null });
    const explained = async (source: ReturnType<typeof listBoardScores>) => {
      const [row] = await t.database.sql<{ 'QUERY PLAN': unknown }[]>`explain (format json) ${source}`;
      return relations(row!['QUERY PLAN']);
    };
    expect(await explained(listBoardScores(t.database.sql, derived('2027-06')))).toEqual(['results_2027_06']);
    expect(await explained(listBoardScores(t.database.sql, derived('2027-05'), { players: ['ann', 'bob'], metadata: true }))).toEqual(['results_2027_05']);

    // A rebuild of a bucket kept as rows (ALL_TIME) reads board scores, one row per player, never the log.
    statements.length = 0;
    expect((await t.admin(`mutation { rebuildBoard(board: "logged", period: ALL_TIME) }`)).errors).toBeUndefined();
    const stream = /from board_scores s\s+where s\.board_id = .*not exists \(select 1 from players p/is;
    const streams = statements.filter((statement) => stream.test(statement));
    expect(streams.length).toBeGreaterThan(0);
    for (const statement of streams) expect(statement).not.toMatch(/\bresults\b(?!_)/);

    // A season's freeze reads its span of the log: the season's results, frozen in rank order.
    statements.length = 0;
    const started = await t.admin(`mutation { startSeason(board: "logged", name: "s") { id } }`);
    expect(started.errors).toBeUndefined();
    clock = new Date(clock.getTime() + 5_000);
    await submit({ playerId: 'fay', matchId: 'season', score: 50 });
    expect((await t.admin(`mutation { closeSeason(board: "logged") { id } }`)).errors).toBeUndefined();
    expect(statements.some((statement) => /insert into frozen_standings/i.test(statement) && /from results r/.test(statement))).toBe(true);
    // The oracle: each player's best result logged in the season's span, in score order.
    const [season] = await t.database.sql<{ starts_at: Date }[]>`select starts_at from seasons where board_id = 'logged'`;
    const logged = await t.database.sql<{ player_id: string; score: number }[]>`
      select player_id, score from results where board_id = 'logged' and achieved_at >= ${season!.starts_at}`;
    const best = new Map<string, number>();
    for (const { player_id, score } of logged) best.set(player_id, Math.max(score, best.get(player_id) ?? -Infinity));
    expect(best.get('fay')).toBe(50);
    const frozen = await t.database.sql<{ player_id: string; score: number }[]>`
      select player_id, score from frozen_standings where board_id = 'logged' and period = 'SEASON' and region = '' order by rank`;
    expect(frozen.map((row) => [row.player_id, row.score])).toEqual(rankScores(best));
  }, 60_000);
});
