import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';

/**
 * updateBoard: each setting changed on one process while another serves the board under load, and
 * read back (and used) through that other process within a second; refusals say why and change
 * nothing; a field left out stays as it was.
 */

const BOARD = 'Arena-Ranked';
const LOW = 'Speedrun.Any';
const UPDATE = `mutation($input: UpdateBoardInput!) { updateBoard(input: $input) { id title topSize regions maxScore } }`;
const READ = `query($id: ID!) { board(id: $id) { id title topSize regions maxScore } }`;
const SUBMIT = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }`;

interface Settings {
  id: string;
  title: string;
  topSize: number;
  regions: string[];
  maxScore: number;
}

describe('updateBoard', () => {
  let first: TestApp;
  let second: TestApp;
  let stopping = false;
  let load: Promise<void>;
  const loadErrors: string[] = [];
  let match = 0;

  const settingsOn = async (app: TestApp, id = BOARD) => (await app.gql<{ board: Settings }>(READ, { id })).data!.board;
  /** Polls the second process until `check` holds for what it serves; answers how long that took. */
  const seenBySecond = (check: (board: Settings) => boolean, what: string) =>
    until(async () => check(await settingsOn(second)), 1_000, `the second process serves ${what}`, 20);

  beforeAll(async () => {
    first = await startTestApp();
    second = await startTestApp({ shareStoresOf: { databaseUrl: first.databaseUrl, keyPrefix: first.keyPrefix } });
    for (const [id, order] of [
      [BOARD, 'HIGH_FIRST'],
      [LOW, 'LOW_FIRST'],
    ] as const) {
      const created = await first.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
        input: { id, title: 'Arena', order, maxScore: 1_000, periods: ['ALL_TIME', 'DAILY'], regions: ['EU'], topSize: 10 },
      });
      expect(created.errors).toBeUndefined();
    }
    // Load on the second process throughout: game servers submitting and clients reading the board.
    load = (async () => {
      while (!stopping) {
        const [submitted, read] = await Promise.all([
          second.server(SUBMIT, { input: { board: BOARD, playerId: `spieler-${match % 50}`, matchId: `load-${match++}`, score: match % 1_000, region: 'EU' } }),
          second.gql(`query($b: ID!) { top(board: $b, limit: 10) { entries { rank score } } board(id: $b) { title } }`, { b: BOARD }),
        ]);
        for (const answer of [submitted, read]) if (answer.errors) loadErrors.push(JSON.stringify(answer.errors));
      }
    })();
  });
  afterAll(async () => {
    stopping = true;
    await load;
  });

  it('each setting changed on one process is served, and used, by the other within a second', async () => {
    const changed = await first.admin<{ updateBoard: Settings }>(UPDATE, { input: { id: BOARD, title: 'Arena — Season 2 🏆' } });
    expect(changed.errors).toBeUndefined();
    // A field left out stays as it was.
    expect(changed.data!.updateBoard).toEqual({ id: BOARD, title: 'Arena — Season 2 🏆', topSize: 10, regions: ['EU'], maxScore: 1_000 });
    await seenBySecond((board) => board.title === 'Arena — Season 2 🏆', 'the new title');

    expect((await first.admin(UPDATE, { input: { id: BOARD, topSize: 25 } })).errors).toBeUndefined();
    await seenBySecond((board) => board.topSize === 25, 'topSize 25');

    // A region added is taken by the second process's submissions within a second; EU stays.
    expect(
      (await second.server(SUBMIT, { input: { board: BOARD, playerId: 'ana', matchId: 'latam-0', score: 5, region: 'LATAM' } })).errors?.[0]?.extensions?.code,
    ).toBe('BAD_USER_INPUT');
    const added = await first.admin<{ updateBoard: Settings }>(UPDATE, { input: { id: BOARD, addRegions: ['LATAM', 'EU'] } });
    expect(added.data!.updateBoard.regions).toEqual(['EU', 'LATAM']);
    await until(
      async () => !(await second.server(SUBMIT, { input: { board: BOARD, playerId: 'ana', matchId: 'latam-1', score: 5, region: 'LATAM' } })).errors,
      1_000,
      'the second process takes a LATAM result',
      20,
    );
    const latam = await second.gql<{ top: { entries: { player: { id: string } }[] } }>(
      `query($b: ID!) { top(board: $b, region: "LATAM") { entries { player { id } } } }`,
      { b: BOARD },
    );
    expect(latam.data!.top.entries.map((entry) => entry.player.id)).toEqual(['ana']);

    // maxScore up within the same bit length (1,000 takes 10 bits: up to 1,023): a score above the old maximum is taken.
    expect((await first.admin(UPDATE, { input: { id: BOARD, maxScore: 1_023 } })).errors).toBeUndefined();
    await until(
      async () => !(await second.server(SUBMIT, { input: { board: BOARD, playerId: 'bo', matchId: 'max-1', score: 1_020 } })).errors,
      1_000,
      'the second process takes 1,020',
      20,
    );
    expect(loadErrors).toEqual([]);
  });

  it('refuses a change that would alter a packing, or lower maxScore, saying why, and changes nothing', async () => {
    const before = await settingsOn(first);
    for (const [input, rule] of [
      [{ id: BOARD, maxScore: 1_024 }, /the most this board can take is 1023/],
      [{ id: BOARD, maxScore: 500 }, /maxScore only goes up/],
      [{ id: LOW, maxScore: 1_001 }, /LOW_FIRST.*maxScore - score/],
      [{ id: BOARD, maxScore: 1_023.5 }, /whole number/],
      [{ id: BOARD, title: '   ' }, /must not be empty/],
      [{ id: BOARD, topSize: 101 }, /topSize/],
      [{ id: BOARD, addRegions: ['EU:west'] }, /region/i],
      // Everything or nothing: a good title beside a refused maxScore is not written either.
      [{ id: BOARD, title: 'Half done', maxScore: 5_000 }, /the most this board can take/],
    ] as const) {
      const answer = await first.admin(UPDATE, { input });
      expect(answer.errors?.[0]?.extensions?.code, JSON.stringify(input)).toBe('BAD_USER_INPUT');
      expect(answer.errors?.[0]?.message).toMatch(rule);
    }
    expect(await settingsOn(first)).toEqual(before);
    expect(await settingsOn(second)).toEqual(before);
  });

  it('changes sent at once take turns: regions added by operators on both processes at the same moment are all kept', async () => {
    const added = Array.from({ length: 12 }, (_, i) => `R${i}`);
    const answers = await Promise.all(added.map((region, i) => (i % 2 ? first : second).admin(UPDATE, { input: { id: LOW, addRegions: [region] } })));
    expect(answers.map((answer) => answer.errors)).toEqual(added.map(() => undefined));
    const want = ['EU', ...added].sort().join();
    // Each process answered its own change at once, and serves every one within a second.
    for (const app of [first, second]) await until(async () => (await settingsOn(app, LOW)).regions.sort().join() === want, 1_000, 'every region served', 20);
  });

  it('an unknown board is NOT_FOUND; a game-server key may not change a board', async () => {
    expect((await first.admin(UPDATE, { input: { id: 'arena-ranked', title: 'x' } })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await first.server(UPDATE, { input: { id: BOARD, title: 'x' } })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await first.gql(UPDATE, { input: { id: BOARD, title: 'x' } })).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
