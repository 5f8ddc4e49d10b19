import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { deleteKeys } from './helpers/redis-keys.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';

interface Line {
  level: number;
  msg: string;
}

/** A logger at `info` whose lines land in `lines`, parsed. */
function capturing(lines: Line[]) {
  return createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
}

const WARN = 40;
const PASS_DONE = 'ranking index recovery pass done';

/**
 * A new deployment's first start finds Redis empty, as a lost index would leave it; with nothing
 * recorded in PostgreSQL nothing was lost, and an operator's first look at the log should not be
 * warnings that the ranking index was lost. A real loss still warns.
 */
describe('the first start of a new deployment', () => {
  const apps: TestApp[] = [];
  afterAll(async () => {
    // The second app shares the first's stores: it goes first, the first then drops them.
    for (const app of apps.reverse()) await app.close();
  });

  it('logs no warning that the index was lost, and a later loss of recorded results does', async () => {
    const first: Line[] = [];
    const t = await startTestApp({ log: capturing(first), indexRecovery: { intervalMs: 100 } });
    apps.push(t);
    await until(() => first.some((line) => line.msg === PASS_DONE), 10_000, 'the first recovery pass');
    expect(first.filter((line) => line.level >= WARN)).toEqual([]);
    expect(first.map((line) => line.msg)).toContain('a new ranking index: nothing recorded in PostgreSQL yet, nothing lost');

    // A result recorded, then Redis loses every key (a restart without persistence): that is a loss.
    const submitted = await t.server('mutation { submitScore(input: { board: "global", playerId: "ada", score: 10, matchId: "m-1" }) { duplicate } }');
    expect(submitted.errors).toBeUndefined();
    await t.stop();
    await deleteKeys(t.keyPrefix);
    const second: Line[] = [];
    const again = await startTestApp({ log: capturing(second), shareStoresOf: t, indexRecovery: { intervalMs: 100 } });
    apps.push(again);
    await until(() => second.some((line) => line.msg === PASS_DONE), 10_000, 'the recovery pass after the loss');
    const warnings = second.filter((line) => line.level >= WARN).map((line) => line.msg);
    expect(warnings).toEqual(
      expect.arrayContaining([expect.stringContaining('holds no ranking index'), expect.stringContaining('the ranking index was lost'), PASS_DONE]),
    );
    const read = await again.gql<{ standing: { rank: number } | null }>('{ standing(board: "global", playerId: "ada") { rank } }');
    expect(read.data?.standing?.rank).toBe(1);
  });
});
