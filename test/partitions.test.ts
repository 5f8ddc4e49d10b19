import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartitionError, detachResultPartition, listResultPartitions, monthOf } from '../src/db/partitions.js';
import { runCli } from './helpers/cli.js';
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
    await cli(['partitions', 'create', '--month', '2026-09']);
    await submit({ playerId: 'dee', matchId: 'old', score: 40, achievedAt: '2026-09-10T00:00:00.000Z' });
    expect(await partitionOf('old')).toEqual(['results_2026_09']);
    const before = await t.gql(TOP, { b: 'logged' });

    const { stdout } = await cli(['partitions', 'detach', '--month', '2026-09']);
    expect(stdout).toContain('detached results_2026_09');
    expect((await listResultPartitions(t.database.sql)).map((partition) => partition.name)).not.toContain('results_2026_09');
    // The table stays, outside the log, for the operator to dump.
    const [archived] = await t.database.sql<{ n: number }[]>`select count(*)::int as n from results_2026_09`;
    expect(archived!.n).toBe(1);
    expect(await partitionOf('old')).toEqual([]);

    expect(await t.gql(TOP, { b: 'logged' })).toEqual(before);
    const rebuilt = await t.admin(`mutation { rebuildBoard(board: "logged", period: ALL_TIME) }`);
    expect(rebuilt.errors).toBeUndefined();
    expect(await t.gql(TOP, { b: 'logged' })).toEqual(before);
    expect((await submit({ playerId: 'dee', matchId: 'old', score: 40, achievedAt: '2026-09-10T00:00:00.000Z' })).duplicate).toBe(true);
    // A late result for the detached month is kept, in the default partition.
    await submit({ playerId: 'eve', matchId: 'late', score: 5, achievedAt: '2026-09-11T00:00:00.000Z' });
    expect(await partitionOf('late')).toEqual(['results_default']);

    // The current month (by the real clock the CLI runs on) is refused, as are a month not attached
    // and one that is no month.
    await expect(detachResultPartition(t.database.sql, '2026-09', new Date())).rejects.toThrow(PartitionError);
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

  it('a read bounded by month scans only that month; rebuilds and season freezes read no partition of the log', async () => {
    const plan = async (from: string, to: string) => {
      const [row] = await t.database.sql.unsafe<{ 'QUERY PLAN': unknown }[]>(
        `explain (format json) select count(*) from results where achieved_at >= '${from}' and achieved_at < '${to}'`,
      );
      return [...JSON.stringify(row!['QUERY PLAN']).matchAll(/"Relation Name":"(results[^"]*)"/g)].map((m) => m[1]).sort();
    };
    expect(await plan('2027-06-01T00:00:00Z', '2027-07-01T00:00:00Z')).toEqual(['results_2027_06']);
    expect(await plan('2027-05-20T00:00:00Z', '2027-06-10T00:00:00Z')).toEqual(['results_2027_05', 'results_2027_06']);

    // A rebuild and a season's freeze read board scores (one row per player and bucket), never the log.
    statements.length = 0;
    expect((await t.admin(`mutation { rebuildBoard(board: "logged", period: MONTHLY, bucket: "2027-06") }`)).errors).toBeUndefined();
    const started = await t.admin(`mutation { startSeason(board: "logged", name: "s") { id } }`);
    expect(started.errors).toBeUndefined();
    clock = new Date(clock.getTime() + 5_000);
    await submit({ playerId: 'fay', matchId: 'season', score: 50 });
    expect((await t.admin(`mutation { closeSeason(board: "logged") { id } }`)).errors).toBeUndefined();
    const reads = statements.filter((statement) => /board_scores/.test(statement) && !/^\s*(insert into result_keys|with input)/i.test(statement));
    expect(reads.some((statement) => /insert into season_results/i.test(statement))).toBe(true);
    // The rebuild's stream: a bucket's board scores, the flagged few left out.
    const stream = /from board_scores s\s+where s\.board_id = .*not exists \(select 1 from players p/is;
    expect(reads.some((statement) => stream.test(statement))).toBe(true);
    for (const statement of statements.filter((s) => /season_results/i.test(s) || stream.test(s))) {
      expect(statement).not.toMatch(/\bresults\b(?!_)/);
    }
  }, 60_000);
});
