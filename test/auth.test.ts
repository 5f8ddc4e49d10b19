import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, SERVER_KEY, type TestApp, startTestApp, codeOf } from './helpers/test-app.js';

const SUBMIT = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }`;
const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`;
const submission = (matchId: string) => ({ input: { board: 'global', playerId: 'p1', score: 10, matchId } });

describe('auth: Authorization: Bearer <key>', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });

  it('refuses a game-server mutation without a key, or with an unknown one: UNAUTHENTICATED', async () => {
    expect(codeOf(await t.gql(SUBMIT, submission('a')))).toBe('UNAUTHENTICATED');
    expect(codeOf(await t.gql(SUBMIT, submission('a'), { key: 'not-a-key-we-ever-issued' }))).toBe('UNAUTHENTICATED');
    expect(codeOf(await t.gql(SUBMIT, submission('a'), { key: SERVER_KEY.slice(0, -1) }))).toBe('UNAUTHENTICATED');
    const top = await t.gql<{ top: { size: number } }>(`{ top(board: "global") { size } }`);
    expect(top.data?.top.size).toBe(0);
  });

  it('refuses an admin mutation with a server key: FORBIDDEN, and nothing is created', async () => {
    const input = { input: { id: 'forbidden-board', title: 'x', maxScore: 100 } };
    expect(codeOf(await t.server(CREATE, input))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(CREATE, input))).toBe('UNAUTHENTICATED');
    const board = await t.gql<{ board: unknown }>(`{ board(id: "forbidden-board") { id } }`);
    expect(board.data?.board).toBeNull();
  });

  it('checks the key before the input: a caller without one learns nothing of what would be refused', async () => {
    const badSubmission = { input: { board: 'global', playerId: 'p1', score: -1, matchId: 'x'.repeat(500) } };
    expect(codeOf(await t.gql(SUBMIT, badSubmission))).toBe('UNAUTHENTICATED');
    expect(
      codeOf(await t.gql(`mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`, { inputs: [badSubmission.input] })),
    ).toBe('UNAUTHENTICATED');
    const badBoard = { input: { id: 'bad id!', title: '', maxScore: -5 } };
    expect(codeOf(await t.gql(CREATE, badBoard))).toBe('UNAUTHENTICATED');
    expect(codeOf(await t.server(CREATE, badBoard))).toBe('FORBIDDEN');
    // With the key, the same input is refused for what it is.
    expect(codeOf(await t.server(SUBMIT, badSubmission))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(CREATE, badBoard))).toBe('BAD_USER_INPUT');
  });

  it('accepts a server key for submissions and the admin key for both', async () => {
    expect(codeOf(await t.server(SUBMIT, submission('b')))).toBeUndefined();
    expect(codeOf(await t.admin(SUBMIT, submission('c')))).toBeUndefined();
    const created = await t.admin<{ createBoard: { id: string } }>(CREATE, { input: { id: 'made-by-admin', title: 'x', maxScore: 100 } });
    expect(created.data?.createBoard.id).toBe('made-by-admin');
  });

  it('reads need no key', async () => {
    const response = await t.gql<{ boards: { id: string }[] }>(`{ boards { id } }`);
    expect(response.data?.boards.map((b) => b.id)).toContain('global');
  });

  it('does not mistake the admin key for a prefix of another', async () => {
    expect(codeOf(await t.gql(CREATE, { input: { id: 'nope', title: 'x', maxScore: 1 } }, { key: `${ADMIN_KEY}x` }))).toBe('UNAUTHENTICATED');
  });
});
