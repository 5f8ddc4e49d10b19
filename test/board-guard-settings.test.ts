import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, codeOf, startTestApp } from './helpers/test-app.js';

/**
 * Issue 59's board settings as createBoard and updateBoard take them: tie-break columns (0 to 4, on
 * BEST boards only, distinct names, whole maxes, and together with the score no more bits than a
 * double orders exactly: 53), minScore (0 to maxScore, then only downwards), suspectAbove,
 * suspectJump (a factor above 1) and resultRate, each read back as sent; every refusal is
 * BAD_USER_INPUT saying why, and creates or changes nothing.
 */

const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) {
  __typename id minScore suspectAbove suspectJump
  tieBreaks { __typename name order max }
  resultRate { __typename results perSeconds } } }`;
const UPDATE = `mutation($input: UpdateBoardInput!) { updateBoard(input: $input) {
  __typename id minScore suspectAbove suspectJump resultRate { __typename results perSeconds } } }`;
const READ = `query($id: ID!) { board(id: $id) { id minScore suspectAbove suspectJump tieBreaks { name order max } resultRate { results perSeconds } } }`;

/** The bits a whole number from 0 to `max` takes, computed here on its own: the oracle of what fits. */
const bits = (max: number) => Math.floor(Math.log2(max)) + 1;

describe('createBoard and updateBoard with tie-break columns and guards', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.stop();
  });

  const boardIds = async () => (await t.database.sql<{ id: string }[]>`select id from boards order by id`).map((row) => row.id);

  it('takes columns up to exactly 53 bits with the score, and the guards, and reads them back as sent', async () => {
    // 2^30 - 1 (30 bits) + 2^12 - 1 (12) + 2^11 - 1 (11) = 53 bits: the most a double orders exactly.
    const columns = [
      { name: 'Laps', order: 'HIGH_FIRST', max: 2 ** 12 - 1 },
      { name: 'Zeit ⏱', order: 'LOW_FIRST', max: 2 ** 11 - 1 },
    ];
    expect(bits(2 ** 30 - 1) + columns.reduce((sum, c) => sum + bits(c.max), 0)).toBe(53);
    const created = await t.admin(CREATE, {
      input: {
        id: 'Rally-EU',
        title: 'Rally',
        maxScore: 2 ** 30 - 1,
        tieBreaks: columns,
        minScore: 10,
        suspectAbove: 1e6,
        suspectJump: 2.5,
        resultRate: { results: 3, perSeconds: 60 },
      },
    });
    expect(created.errors).toBeUndefined();
    const want = {
      id: 'Rally-EU',
      minScore: 10,
      suspectAbove: 1e6,
      suspectJump: 2.5,
      tieBreaks: columns,
      resultRate: { results: 3, perSeconds: 60 },
    };
    expect(await t.gql(READ, { id: 'Rally-EU' })).toEqual({ data: { board: want } });
    // A column's order left out is HIGH_FIRST; a board without columns or guards reads [] and nulls.
    const plain = await t.admin(CREATE, { input: { id: 'plain', title: 'Plain', maxScore: 100, tieBreaks: [{ name: 'stars', max: 3 }] } });
    expect(plain.errors).toBeUndefined();
    expect(await t.gql(READ, { id: 'plain' })).toEqual({
      data: {
        board: {
          id: 'plain',
          minScore: 0,
          suspectAbove: null,
          suspectJump: null,
          tieBreaks: [{ name: 'stars', order: 'HIGH_FIRST', max: 3 }],
          resultRate: null,
        },
      },
    });
  });

  it('refuses what the index cannot order exactly, or the rules forbid, saying why, and creates nothing', async () => {
    const before = await boardIds();
    const refusals: [string, Record<string, unknown>, RegExp][] = [
      [
        '54 bits',
        {
          maxScore: 2 ** 30 - 1,
          tieBreaks: [
            { name: 'a', max: 2 ** 12 - 1 },
            { name: 'b', max: 2 ** 11 },
          ],
        },
        /54 bits.*53/,
      ],
      ['a SUM board', { aggregate: 'SUM', tieBreaks: [{ name: 'a', max: 9 }] }, /BEST/],
      ['five columns', { tieBreaks: ['a', 'b', 'c', 'd', 'e'].map((name) => ({ name, max: 1 })) }, /at most 4/],
      [
        'a name twice',
        {
          tieBreaks: [
            { name: 'a', max: 1 },
            { name: 'a', max: 2 },
          ],
        },
        /twice/,
      ],
      ['a max of 0', { tieBreaks: [{ name: 'a', max: 0 }] }, /positive/],
      ['a max not whole', { tieBreaks: [{ name: 'a', max: 2.5 }] }, /whole/],
      ['a control character in a name', { tieBreaks: [{ name: 'a\u0007', max: 2 }] }, /control/],
      ['minScore above maxScore', { minScore: 101 }, /minScore/],
      ['minScore negative', { minScore: -1 }, /minScore|at least 0/],
      ['suspectJump of 1', { suspectJump: 1 }, /above 1/],
      ['suspectAbove negative', { suspectAbove: -5 }, /at least 0/],
      ['a rate of 0 results', { resultRate: { results: 0, perSeconds: 10 } }, /results/],
      ['a rate over a day', { resultRate: { results: 5, perSeconds: 86_401 } }, /perSeconds/],
    ];
    for (const [what, fields, reason] of refusals) {
      const answer = await t.admin(CREATE, { input: { id: `bad-${what.replaceAll(' ', '-')}`, title: 'Bad', maxScore: 100, ...fields } });
      expect(codeOf(answer), what).toBe('BAD_USER_INPUT');
      expect(answer.errors?.[0]?.message, what).toMatch(reason);
    }
    expect(await boardIds()).toEqual(before);
  });

  it('updateBoard: minScore only downwards; the guards set, changed and cleared; a field left out kept', async () => {
    const read = async () => (await t.gql<{ board: Record<string, unknown> }>(READ, { id: 'Rally-EU' })).data!.board;
    const before = await read();
    for (const [input, reason] of [
      [{ minScore: 11 }, /only goes down/],
      [{ suspectJump: 0.5 }, /above 1/],
      [{ resultRate: { results: 3, perSeconds: 0 } }, /perSeconds/],
    ] as const) {
      const answer = await t.admin(UPDATE, { input: { id: 'Rally-EU', ...input } });
      expect(codeOf(answer)).toBe('BAD_USER_INPUT');
      expect(answer.errors?.[0]?.message).toMatch(reason);
      expect(await read()).toEqual(before);
    }
    const lowered = await t.admin(UPDATE, { input: { id: 'Rally-EU', minScore: 0, suspectJump: 4, resultRate: { results: 10, perSeconds: 30 } } });
    expect(lowered.errors).toBeUndefined();
    expect(await read()).toEqual({ ...before, minScore: 0, suspectJump: 4, resultRate: { results: 10, perSeconds: 30 } });
    // null clears a guard; a field left out stays.
    const cleared = await t.admin(UPDATE, { input: { id: 'Rally-EU', suspectAbove: null, resultRate: null } });
    expect(cleared.errors).toBeUndefined();
    expect(await read()).toEqual({ ...before, minScore: 0, suspectJump: 4, suspectAbove: null, resultRate: null });
  });
});
