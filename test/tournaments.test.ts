import { describe, expect, it } from 'vitest';
import { appWithDatabase } from './helpers/app-with-database.js';

/**
 * Tournaments (issue 57): joinBoard (first come first served, never past maxPlayers), Board.joined,
 * attemptsUsed, and the write path's refusals NOT_JOINED and NO_ATTEMPTS_LEFT (BAD_USER_INPUT with
 * extensions.reason; nothing of a refused call recorded; a batch names every refused input; a
 * replay answers duplicate and uses no attempt). The oracle is the rules, counted here.
 */

const SUBMIT = 'mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }';
const SUBMIT_ONE = 'mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }';
const JOIN = 'mutation($board: ID!, $playerId: ID!) { joinBoard(board: $board, playerId: $playerId) }';
const ATTEMPTS = 'query($board: ID!, $playerId: ID!) { attemptsUsed(board: $board, playerId: $playerId) }';

type Errors = { message: string; extensions?: { code?: string; reason?: string } }[] | undefined;

const reasonOf = (errors: Errors) => errors?.[0]?.extensions?.reason;
const codeOf = (errors: Errors) => errors?.[0]?.extensions?.code;

describe.each([1, 8])('tournaments on %i shard(s)', (shards) => {
  const started = appWithDatabase();
  const app = () => started.app();
  const sql = () => started.sql();

  async function createBoard(id: string, settings: { joinRequired?: boolean; maxPlayers?: number; maxAttempts?: number }, periods = ['ALL_TIME', 'DAILY']) {
    const created = await app().admin('mutation($input: CreateBoardInput!) { createBoard(input: $input) { id joinRequired maxPlayers maxAttempts joined } }', {
      input: { id, title: id, maxScore: 1e9, shards, periods, ...settings },
    });
    expect(created.errors).toBeUndefined();
  }
  const join = async (board: string, playerId: string) => app().server<{ joinBoard: boolean }>(JOIN, { board, playerId });
  const joined = async (board: string) =>
    (await app().gql<{ board: { joined: number } }>('query($id: ID!) { board(id: $id) { joined } }', { id: board })).data?.board.joined;
  const logged = async (board: string) =>
    (
      await sql()<{ player_id: string; match_id: string }[]>`select player_id, match_id from results where board_id = ${board} order by player_id, match_id`
    ).map((r) => `${r.player_id}/${r.match_id}`);

  it('joinBoard answers true once, false after; Board.joined counts; a full board refuses BOARD_FULL, a member still answers false', async () => {
    const board = `Cup-EU-${shards}`;
    await createBoard(board, { joinRequired: true, maxPlayers: 2 });
    expect(await joined(board)).toBe(0);
    expect((await join(board, 'Ana')).data?.joinBoard).toBe(true);
    expect((await join(board, 'Ana')).data?.joinBoard).toBe(false);
    expect((await join(board, 'Bø')).data?.joinBoard).toBe(true);
    expect(await joined(board)).toBe(2);
    const full = await join(board, 'Carl');
    expect(codeOf(full.errors)).toBe('BAD_USER_INPUT');
    expect(reasonOf(full.errors)).toBe('BOARD_FULL');
    expect((await join(board, 'Ana')).data?.joinBoard).toBe(false);
    expect(await joined(board)).toBe(2);
    const unknown = await join('No-Such-Board', 'Ana');
    expect(codeOf(unknown.errors)).toBe('NOT_FOUND');
  });

  it('concurrent joins racing for the last places: first come first served, never past maxPlayers', async () => {
    const board = `Race-${shards}`;
    const maxPlayers = 10;
    await createBoard(board, { joinRequired: true, maxPlayers });
    // 3 already in; 40 players race for the last 7 places, some twice at once.
    for (const p of ['a', 'b', 'c']) await join(board, p);
    const racers = Array.from({ length: 40 }, (_, i) => `racer-${i}-Ü`);
    const answers = await Promise.all([...racers, ...racers.slice(0, 10)].map(async (p) => ({ p, answer: await join(board, p) })));
    const admitted = new Set(answers.filter(({ answer }) => answer.data?.joinBoard === true).map(({ p }) => p));
    const refusedOnes = answers.filter(({ answer }) => reasonOf(answer.errors) === 'BOARD_FULL');
    expect(answers.every(({ answer }) => answer.data?.joinBoard !== undefined || reasonOf(answer.errors) === 'BOARD_FULL')).toBe(true);
    expect(admitted.size).toBe(maxPlayers - 3);
    // Each admitted player was answered true exactly once; nobody refused is a member.
    expect(answers.filter(({ answer }) => answer.data?.joinBoard === true)).toHaveLength(admitted.size);
    const members = (await sql()<{ player_id: string }[]>`select player_id from board_members where board_id = ${board}`).map((r) => r.player_id);
    expect(members).toHaveLength(maxPlayers);
    expect(new Set(members)).toEqual(new Set(['a', 'b', 'c', ...admitted]));
    for (const { p } of refusedOnes) expect(admitted.has(p) && members.includes(p)).toBe(admitted.has(p));
    expect(await joined(board)).toBe(maxPlayers);
  });

  it('NOT_JOINED: a result for a player who has not joined is refused, nothing of the call recorded; a batch names every refused input', async () => {
    const board = `Joiners-${shards}`;
    await createBoard(board, { joinRequired: true });
    await join(board, 'In');
    const one = await app().server(SUBMIT_ONE, { input: { board, playerId: 'Out', score: 5, matchId: 'm1' } });
    expect(codeOf(one.errors)).toBe('BAD_USER_INPUT');
    expect(reasonOf(one.errors)).toBe('NOT_JOINED');
    const batch = await app().server(SUBMIT, {
      inputs: [
        { board, playerId: 'In', score: 1, matchId: 'b0' },
        { board, playerId: 'Out', score: 2, matchId: 'b1' },
        { board, playerId: 'In', score: 3, matchId: 'b2' },
        { board, playerId: 'Also-Out', score: 4, matchId: 'b3' },
      ],
    });
    expect(reasonOf(batch.errors)).toBe('NOT_JOINED');
    expect(batch.errors?.[0]?.message).toMatch(/^inputs\.1\.playerId: .*; inputs\.3\.playerId: /);
    expect(batch.errors?.[0]?.message).not.toMatch(/inputs\.[02]\./);
    expect(await logged(board)).toEqual([]);
    // Once in, the same call goes through; a board without joinRequired never asks.
    await join(board, 'Out');
    await join(board, 'Also-Out');
    expect((await app().server(SUBMIT, { inputs: [{ board, playerId: 'Out', score: 2, matchId: 'b1' }] })).errors).toBeUndefined();
    expect(await logged(board)).toEqual(['Out/b1']);
  });

  it('NO_ATTEMPTS_LEFT: past maxAttempts a result is refused; a replay answers duplicate and uses no attempt; the batch is all or nothing', async () => {
    const board = `Attempts-${shards}`;
    await createBoard(board, { maxAttempts: 3 });
    const send = (inputs: { playerId: string; matchId: string; score?: number }[]) =>
      app().server<{ submitScores: { duplicate: boolean }[] }>(SUBMIT, { inputs: inputs.map((i) => ({ board, score: 10, ...i })) });
    const used = async (playerId: string) => (await app().gql<{ attemptsUsed: number }>(ATTEMPTS, { board, playerId })).data?.attemptsUsed;
    expect(await used('P')).toBe(0);
    expect(
      (
        await send([
          { playerId: 'P', matchId: 'a1' },
          { playerId: 'P', matchId: 'a2' },
        ])
      ).errors,
    ).toBeUndefined();
    expect(await used('P')).toBe(2);
    // A replay: duplicate, no attempt used, never refused (not even when the player has none left).
    const replay = await send([{ playerId: 'P', matchId: 'a1' }]);
    expect(replay.data?.submitScores).toEqual([{ duplicate: true }]);
    expect(await used('P')).toBe(2);
    // A batch with one attempt left: its 2nd and 4th results for P would be the 4th and 5th; all refused, both named.
    const batch = await send([
      { playerId: 'P', matchId: 'a3' },
      { playerId: 'P', matchId: 'a4' },
      { playerId: 'Q', matchId: 'q1' },
      { playerId: 'P', matchId: 'a5' },
    ]);
    expect(codeOf(batch.errors)).toBe('BAD_USER_INPUT');
    expect(reasonOf(batch.errors)).toBe('NO_ATTEMPTS_LEFT');
    expect(batch.errors?.[0]?.message).toMatch(/^inputs\.1\.playerId: .*; inputs\.3\.playerId: /);
    expect(await logged(board)).toEqual(['P/a1', 'P/a2']);
    expect(await used('Q')).toBe(0);
    // The third attempt alone goes through; the fourth is refused; the replay of the third still answers.
    expect((await send([{ playerId: 'P', matchId: 'a3' }])).errors).toBeUndefined();
    const fourth = await app().server(SUBMIT_ONE, { input: { board, playerId: 'P', score: 1, matchId: 'a4' } });
    expect(reasonOf(fourth.errors)).toBe('NO_ATTEMPTS_LEFT');
    expect(fourth.errors?.[0]?.message).not.toMatch(/^inputs\./);
    expect((await send([{ playerId: 'P', matchId: 'a3' }])).data?.submitScores).toEqual([{ duplicate: true }]);
    expect(await used('P')).toBe(3);
    // Yesterday's bucket of the shortest period (DAILY) is another bucket: its results count there.
    const yesterday = new Date(Date.now() - 86_400_000).toISOString();
    expect((await app().server(SUBMIT_ONE, { input: { board, playerId: 'P', score: 1, matchId: 'y1', achievedAt: yesterday } })).errors).toBeUndefined();
    expect(await used('P')).toBe(3);
  });

  it('concurrent calls past maxAttempts: other calls of the group go on, and no player passes the limit', async () => {
    const board = `Attempts-Race-${shards}`;
    await createBoard(board, { maxAttempts: 2 });
    const players = ['R1', 'R2', 'r3'];
    const calls = players.flatMap((playerId) =>
      Array.from({ length: 6 }, (_, i) => app().server(SUBMIT_ONE, { input: { board, playerId, score: i, matchId: `${playerId}-${i}` } })),
    );
    const answers = await Promise.all(calls);
    const ok = answers.filter((a) => a.errors === undefined).length;
    expect(answers.filter((a) => a.errors !== undefined).every((a) => reasonOf(a.errors) === 'NO_ATTEMPTS_LEFT')).toBe(true);
    expect(ok).toBe(players.length * 2);
    const rows = await sql()<
      { player_id: string; n: number }[]
    >`select player_id, count(*)::int as n from results where board_id = ${board} group by player_id order by player_id`;
    expect(rows).toEqual(players.sort().map((player_id) => ({ player_id, n: 2 })));
  });

  it('erasure removes the player from the boards they joined and from the count', async () => {
    const board = `Erased-${shards}`;
    await createBoard(board, { joinRequired: true, maxPlayers: 2 });
    await join(board, 'Gone');
    await join(board, 'Stays');
    expect(codeOf((await join(board, 'Waiting')).errors)).toBe('BAD_USER_INPUT');
    const erased = await app().admin('mutation($id: ID!) { deletePlayer(playerId: $id) }', { id: 'Gone' });
    expect(erased.errors).toBeUndefined();
    expect(await joined(board)).toBe(1);
    expect((await join(board, 'Waiting')).data?.joinBoard).toBe(true);
    expect(reasonOf((await app().server(SUBMIT_ONE, { input: { board, playerId: 'Gone', score: 1, matchId: 'x' } })).errors)).toBe('NOT_JOINED');
  });
});
