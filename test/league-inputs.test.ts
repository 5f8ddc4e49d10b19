import { beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, codeOf, startTestApp } from './helpers/test-app.js';

/**
 * Issue 57's inputs as an attacker sends them: every league and tournament setting out of its
 * bounds refused with BAD_USER_INPUT (nothing created), the mutations refused without the right
 * key before their input is looked at, and the reads' arguments bounded (too long, control
 * characters, out of range) before anything walks them. The bounds are the issue's: 2 to 20
 * tiers, cohorts of 5 to 1,000, promote + demote within the cohort, a period with rounds and
 * among the board's, limits of at least 1.
 */

const CREATE = 'mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }';
const JOIN = 'mutation($board: ID!, $playerId: ID!) { joinBoard(board: $board, playerId: $playerId) }';
const LEAGUE = { tiers: ['Gold', 'Silver', 'Bronze'], cohortSize: 5, promote: 1, demote: 1, period: 'DAILY' };
const board = (id: string, extra: Record<string, unknown>) => ({ input: { id, title: id, maxScore: 1000, periods: ['ALL_TIME', 'DAILY'], ...extra } });

describe("issue 57's inputs, as an attacker sends them", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    expect((await t.admin(CREATE, board('Lg', { league: LEAGUE }))).errors).toBeUndefined();
    expect((await t.admin(CREATE, board('Cup', { joinRequired: true, maxPlayers: 2 }))).errors).toBeUndefined();
  });

  const exists = async (id: string) =>
    (await t.gql<{ board: { id: string } | null }>('query($id: ID!) { board(id: $id) { id } }', { id })).data?.board !== null;

  it.each([
    ['one tier', { league: { ...LEAGUE, tiers: ['Only'] } }],
    ['21 tiers', { league: { ...LEAGUE, tiers: Array.from({ length: 21 }, (_, i) => `T${i}`) } }],
    ['10,000 tiers', { league: { ...LEAGUE, tiers: Array.from({ length: 10_000 }, (_, i) => `T${i}`) } }],
    ['a tier name of 41 characters', { league: { ...LEAGUE, tiers: ['Gold', 'x'.repeat(41)] } }],
    ['a tier name of 100,000 characters', { league: { ...LEAGUE, tiers: ['Gold', 'x'.repeat(100_000)] } }],
    ['an empty tier name', { league: { ...LEAGUE, tiers: ['Gold', ''] } }],
    ['a tier name with a control character', { league: { ...LEAGUE, tiers: ['Gold', 'Sil\u0000ver'] } }],
    ['a tier name with a slash', { league: { ...LEAGUE, tiers: ['Gold', 'Silver/2'] } }],
    ['two tiers differing in case only', { league: { ...LEAGUE, tiers: ['Gold', 'GOLD'] } }],
    ['a cohort of 4', { league: { ...LEAGUE, cohortSize: 4 } }],
    ['a cohort of 1,001', { league: { ...LEAGUE, cohortSize: 1001 } }],
    ['promote + demote above the cohort', { league: { ...LEAGUE, promote: 3, demote: 3 } }],
    ['a negative promote', { league: { ...LEAGUE, promote: -1 } }],
    ['ALL_TIME rounds', { league: { ...LEAGUE, period: 'ALL_TIME' } }],
    ['rounds of a period the board does not keep', { league: { ...LEAGUE, period: 'WEEKLY' } }],
    ['maxPlayers 0', { maxPlayers: 0 }],
    ['maxAttempts -1', { maxAttempts: -1 }],
    ['maxAttempts past 32 bits', { maxAttempts: 2 ** 31 }],
  ])('createBoard refuses %s with BAD_USER_INPUT, creating nothing', async (_what, extra) => {
    const id = `Bad-${Math.abs([..._what].reduce((h, c) => (h * 31 + c.charCodeAt(0)) | 0, 7))}`;
    const answer = await t.admin(CREATE, board(id, extra));
    expect(codeOf(answer), JSON.stringify(answer.errors)).toBe('BAD_USER_INPUT');
    expect(await exists(id)).toBe(false);
  });

  it('refuses the mutations without the right key before looking at their input', async () => {
    expect(codeOf(await t.gql(JOIN, { board: 'Cup', playerId: 'p1' }))).toBe('UNAUTHENTICATED');
    expect(codeOf(await t.gql(JOIN, { board: 'Cup', playerId: 'x'.repeat(500) }))).toBe('UNAUTHENTICATED');
    expect(codeOf(await t.gql(JOIN, { board: 'Cup', playerId: 'p1' }, { key: 'not-a-key-we-ever-issued' }))).toBe('UNAUTHENTICATED');
    expect(codeOf(await t.server(CREATE, board('Lg-By-Server', { league: LEAGUE })))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(CREATE, board('Lg-Anon', { league: { ...LEAGUE, tiers: [] } })))).toBe('UNAUTHENTICATED');
    expect(await exists('Lg-By-Server')).toBe(false);
    const joined = await t.gql<{ board: { joined: number } }>('{ board(id: "Cup") { joined } }');
    expect(joined.data?.board.joined).toBe(0);
  });

  it('bounds the arguments of the new reads and of joinBoard', async () => {
    const ask = async (document: string, variables: Record<string, unknown>, as: 'gql' | 'server' = 'gql') => codeOf(await t[as](document, variables));
    const LEAGUE_READ = 'query($b: ID!, $p: ID!, $k: String) { league(board: $b, playerId: $p, bucket: $k) { tier } }';
    const COHORT = 'query($b: ID!, $t: String!, $n: Int!) { cohort(board: $b, tier: $t, number: $n) { number } }';
    const ATTEMPTS = 'query($b: ID!, $p: ID!) { attemptsUsed(board: $b, playerId: $p) }';
    expect(await ask(LEAGUE_READ, { b: 'Lg', p: 'x'.repeat(129) })).toBe('BAD_USER_INPUT');
    expect(await ask(LEAGUE_READ, { b: 'Lg', p: 'a\u0000b' })).toBe('BAD_USER_INPUT');
    expect(await ask(LEAGUE_READ, { b: 'Lg', p: 'p1', k: 'x'.repeat(10_000) })).toBe('BAD_USER_INPUT');
    expect(await ask(LEAGUE_READ, { b: 'x'.repeat(100_000), p: 'p1' })).toBe('BAD_USER_INPUT');
    expect(await ask(COHORT, { b: 'Lg', t: 'x'.repeat(41), n: 1 })).toBe('BAD_USER_INPUT');
    expect(await ask(COHORT, { b: 'Lg', t: 'Gold', n: 0 })).toBe('BAD_USER_INPUT');
    expect(await ask(COHORT, { b: 'Lg', t: 'Gold', n: -5 })).toBe('BAD_USER_INPUT');
    expect(await ask(COHORT, { b: 'Lg', t: 'Gold', n: 1.5 })).toBe('BAD_USER_INPUT');
    expect(await ask(ATTEMPTS, { b: 'Cup', p: 'x'.repeat(129) })).toBe('BAD_USER_INPUT');
    expect(await ask(JOIN, { board: 'Cup', playerId: 'x'.repeat(129) }, 'server')).toBe('BAD_USER_INPUT');
    expect(await ask(JOIN, { board: 'Cup', playerId: 'a\u202Eb' }, 'server')).toBe('BAD_USER_INPUT');
    expect(await ask(JOIN, { board: 'no-such-board', playerId: 'p1' }, 'server')).toBe('NOT_FOUND');
    // Nothing of that joined anyone.
    const joined = await t.gql<{ board: { joined: number } }>('{ board(id: "Cup") { joined } }');
    expect(joined.data?.board.joined).toBe(0);
  });
});
