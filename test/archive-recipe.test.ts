import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addMonths, monthOf, partitionName } from '../src/db/partitions.js';
import { operatorSession } from './helpers/operator-session.js';

/**
 * The README's archive recipe, end to end, for a month past the retention of every bucket that is
 * derived from the log (a BEST board's MONTHLY is kept 396 days by default), given a partition by
 * hand: detach it, dump it, drop it; the next start of the service must not make that month's
 * partition again, so a late result for it goes to the default partition as the README says, and
 * a replay of an archived result is still caught. The month that just ended is refused: the seeded
 * board's derived buckets still read it.
 */

const SUBMIT = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }`;

describe('the archive recipe for a month no kept bucket reads', () => {
  const session = operatorSession('archive');
  const { dir, sh, cli } = session;
  // The service's own clock and the CLI's: fifteen months ago is past the 396 days of MONTHLY.
  const month = addMonths(monthOf(new Date()), -15);
  const table = partitionName(month);
  const inMonth = (day: number) => `${month}-${String(day).padStart(2, '0')}T12:00:00.000Z`;
  const submit = async (playerId: string, matchId: string, achievedAt: string) => {
    const answer = await session.first.server<{ submitScore: { duplicate: boolean } }>(SUBMIT, {
      input: { board: 'global', playerId, matchId, score: 100, achievedAt },
    });
    expect(answer.errors).toBeUndefined();
    return answer.data!.submitScore.duplicate;
  };
  const exists = async (name: string) => (await session.first.database.sql`select 1 from pg_class where relname = ${name}`).length > 0;
  const partitionOf = async (matchId: string) =>
    (await session.first.database.sql<{ part: string }[]>`select tableoid::regclass::text as part from results where match_id = ${matchId}`).map(
      (row) => row.part,
    );

  it('detach, dump, drop: the month stays detached across a restart, its late results go to the default partition', { timeout: 60_000 }, async () => {
    // The month that just ended is still read by the global board's derived buckets.
    const refused = await cli('partitions', 'detach', '--month', addMonths(monthOf(new Date()), -1)).then(
      () => null,
      (error: { stderr: string }) => error,
    );
    expect(refused?.stderr).toMatch(/still read by buckets derived from the score log: board "global" MONTHLY/);

    await cli('partitions', 'create', '--month', month);
    expect(await exists(table)).toBe(true);
    expect(await submit('ada', 'archived-1', inMonth(3))).toBe(false);
    expect(await submit('bob', 'archived-2', inMonth(20))).toBe(false);
    expect(await partitionOf('archived-1')).toEqual([table]);

    // The README's commands, as written.
    await cli('partitions', 'detach', '--month', month);
    await sh(`pg_dump --table=${table} "$DATABASE_URL" > ${table}.sql && psql -q "$DATABASE_URL" -c 'drop table ${table}'`);
    const dump = readFileSync(join(dir, `${table}.sql`), 'utf8');
    expect(dump).toContain('archived-1');
    expect(dump).toContain('archived-2');
    expect(await exists(table)).toBe(false);

    // The next start of the service (a second process on the same stores) runs its partition pass first.
    await session.restart();
    expect(await exists(table)).toBe(false);
    const { stdout: listed } = await cli('partitions', 'list');
    expect(listed).not.toContain(table);
    // `partitions create` by hand leaves an archived month alone too.
    expect((await cli('partitions', 'create', '--month', month)).stdout).toMatch(/detached for archiving; left alone/);
    expect(await exists(table)).toBe(false);

    // A late result for the archived month is kept, in the default partition; a replay of an archived one is caught.
    expect(await submit('cid', 'late', inMonth(25))).toBe(false);
    expect(await partitionOf('late')).toEqual(['results_default']);
    expect(await submit('ada', 'archived-1', inMonth(3))).toBe(true);
    // The board still has every score, archived or not.
    const top = await session.first.gql<{ top: { size: number } }>('{ top(board: "global") { size } }');
    expect(top.data?.top.size).toBe(3);
  });
});
