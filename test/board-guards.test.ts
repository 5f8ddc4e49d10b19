import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexKeysHolding } from './helpers/board-views.js';
import { movableClock } from './helpers/clock.js';
import { until } from './helpers/wait.js';
import { type GraphQLResponse, type TestApp, codeOf, startTestApp } from './helpers/test-app.js';

/**
 * A board that guards itself (issue 59): minScore and tie-break values refused with the store
 * unchanged (every PostgreSQL row and Redis key compared before and after); resultRate counted
 * across two API processes of one deployment, replays not counted, each result of a batch judged
 * on its own, retryAfterMs exact on an injected clock; suspectAbove and suspectJump flagging the
 * player in the transaction of the result (a fault injected at the flag leaves neither), the
 * player gone from every view when the answer comes, and back on unflagPlayer.
 */

// A date to come (2037 has 2026's calendar): the app sets Redis expiries from this clock.
const T0 = new Date('2037-11-29T12:00:00.000Z');
const clock = movableClock({ startsAt: T0, runs: false });

const SUBMIT = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate improved standings { period standing { rank score } } } }`;
const SUBMIT_MANY = `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`;
const STANDING = `query($board: ID!, $id: ID!) { standing(board: $board, playerId: $id) { rank score } }`;
const TOP = `query($board: ID!) { top(board: $board, limit: 50) { entries { rank score player { id } } } }`;
const FLAGGED = `query { flaggedPlayers(first: 50) { reason player { id } result { boardId matchId score tieBreakValues achievedAt } } }`;

type Submitted = GraphQLResponse<{ submitScore: { duplicate: boolean; improved: boolean; standings: unknown[] } }>;

let a: TestApp;
let b: TestApp;
let matches = 0;

async function createBoard(input: Record<string, unknown>) {
  const created = await a.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
    input: { title: String(input['id']), maxScore: 1_000_000, periods: ['ALL_TIME', 'DAILY'], ...input },
  });
  expect(created.errors).toBeUndefined();
}

const submit = (t: TestApp, input: Record<string, unknown>): Promise<Submitted> => t.server(SUBMIT, { input: { matchId: `m${++matches}`, ...input } });

/**
 * Everything the store holds for the app: every row of the tables a submission writes, every Redis
 * key and its content (but the index generation's mark, which the app renews on its own), taken
 * once the write path has confirmed its backlog rows (in the background, after its answer).
 */
async function snapshot(): Promise<unknown> {
  const { sql } = a.database;
  await until(async () => (await sql`select count(*)::int as n from index_backlog`)[0]!['n'] === 0, 10_000, 'the backlog confirmed');
  const tables: Record<string, unknown> = {};
  for (const table of ['results', 'result_keys', 'board_scores', 'players', 'index_backlog']) {
    tables[table] = await sql.unsafe(`select * from ${table} order by 1, 2, 3`);
  }
  const names: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await a.redis.scan(cursor, 'MATCH', `${a.keyPrefix}*`, 'COUNT', 1000);
    for (const full of found) if (!full.includes('{generation')) names.push(full.slice(a.keyPrefix.length));
    cursor = next;
  } while (cursor !== '0');
  // Each key's type, then its content, in one pipeline each.
  const types = await Promise.all(names.map((key) => a.redis.type(key)));
  const keys: Record<string, unknown> = {};
  await Promise.all(
    names.map(async (key, i) => {
      const type = types[i];
      keys[key] =
        type === 'zset'
          ? await a.redis.zrange(key, 0, -1, 'WITHSCORES')
          : type === 'hash'
            ? await a.redis.hgetall(key)
            : type === 'string'
              ? await a.redis.get(key)
              : type === 'set'
                ? (await a.redis.smembers(key)).sort()
                : type;
    }),
  );
  return { tables, keys: Object.fromEntries(Object.entries(keys).sort(([x], [y]) => x.localeCompare(y))) };
}

/** Expects `attempt` to be refused with `code` (and a message matching `says`), with the store exactly as it was. */
async function expectRefusedUnchanged(attempt: () => Promise<GraphQLResponse>, code: string, says: RegExp) {
  const before = await snapshot();
  const answer = await attempt();
  expect(codeOf(answer), JSON.stringify(answer.errors)).toBe(code);
  expect(answer.errors![0]!.message).toMatch(says);
  expect(await snapshot()).toEqual(before);
  return answer;
}

beforeAll(async () => {
  a = await startTestApp({ now: clock.now });
  // A second API process of the same deployment (its database and Redis prefix), on the same clock.
  b = await startTestApp({ now: clock.now, shareStoresOf: { databaseUrl: a.databaseUrl, keyPrefix: a.keyPrefix } });
  await createBoard({ id: 'plain', minScore: 10 });
  await createBoard({
    id: 'race',
    minScore: 100,
    maxScore: 1_000,
    tieBreaks: [
      { name: 'laps', order: 'HIGH_FIRST', max: 50 },
      { name: 'time', order: 'LOW_FIRST', max: 100_000 },
    ],
  });
  await createBoard({ id: 'rated', resultRate: { results: 3, perSeconds: 60 } });
  await createBoard({ id: 'watched', suspectAbove: 5_000, suspectJump: 3 });
  await createBoard({ id: 'sprint', order: 'LOW_FIRST', suspectJump: 2 });
}, 60_000);

afterAll(async () => {
  await b?.close();
});

describe('ranges: minScore and tie-break values', () => {
  it('refuses a score below minScore, and every missing, extra or out-of-range value, with the store unchanged', async () => {
    // Something recorded first, so the snapshot compares real rows and keys.
    expect((await submit(a, { board: 'plain', playerId: 'p1', score: 10 })).errors).toBeUndefined();
    expect((await submit(a, { board: 'race', playerId: 'p1', score: 100, tieBreakValues: [50, 0] })).errors).toBeUndefined();

    await expectRefusedUnchanged(
      () => submit(a, { board: 'plain', playerId: 'p2', score: 9 }),
      'BAD_USER_INPUT',
      /score 9 is below board "plain"'s minScore of 10/,
    );
    await expectRefusedUnchanged(() => submit(a, { board: 'race', playerId: 'p2', score: 99, tieBreakValues: [1, 1] }), 'BAD_USER_INPUT', /minScore of 100/);
    await expectRefusedUnchanged(() => submit(a, { board: 'race', playerId: 'p2', score: 500 }), 'BAD_USER_INPUT', /tieBreakValues.*required/);
    await expectRefusedUnchanged(
      () => submit(a, { board: 'race', playerId: 'p2', score: 500, tieBreakValues: [3] }),
      'BAD_USER_INPUT',
      /tieBreakValues holds 1/,
    );
    await expectRefusedUnchanged(
      () => submit(a, { board: 'race', playerId: 'p2', score: 500, tieBreakValues: [3, 4, 5] }),
      'BAD_USER_INPUT',
      /tieBreakValues holds 3/,
    );
    await expectRefusedUnchanged(
      () => submit(a, { board: 'race', playerId: 'p2', score: 500, tieBreakValues: [51, 4] }),
      'BAD_USER_INPUT',
      /tieBreakValues\[0\] 51 is not a whole number from 0 to 50 \(column "laps"/,
    );
    await expectRefusedUnchanged(
      () => submit(a, { board: 'race', playerId: 'p2', score: 500, tieBreakValues: [5, 100_001] }),
      'BAD_USER_INPUT',
      /tieBreakValues\[1\] 100001 is not a whole number from 0 to 100000 \(column "time"/,
    );
    await expectRefusedUnchanged(() => submit(a, { board: 'race', playerId: 'p2', score: 500, tieBreakValues: [5, -1] }), 'BAD_USER_INPUT', /tieBreakValues/);
    await expectRefusedUnchanged(() => submit(a, { board: 'race', playerId: 'p2', score: 500, tieBreakValues: [5, 1.5] }), 'BAD_USER_INPUT', /tieBreakValues/);
    await expectRefusedUnchanged(
      () => submit(a, { board: 'plain', playerId: 'p2', score: 500, tieBreakValues: [1] }),
      'BAD_USER_INPUT',
      /board "plain" has no tie-break columns/,
    );
    // A batch is refused whole, each bad input named.
    await expectRefusedUnchanged(
      () =>
        a.server(SUBMIT_MANY, {
          inputs: [
            { board: 'race', playerId: 'p3', matchId: 'b1', score: 500, tieBreakValues: [1, 2] },
            { board: 'race', playerId: 'p4', matchId: 'b2', score: 500, tieBreakValues: [1] },
            { board: 'plain', playerId: 'p5', matchId: 'b3', score: 3 },
          ],
        }),
      'BAD_USER_INPUT',
      /inputs\.1\.tieBreakValues: .*; inputs\.2\.score: /,
    );
    // The edges themselves are taken: no column, empty list, the values 0 and max.
    expect((await submit(a, { board: 'plain', playerId: 'p2', score: 10, tieBreakValues: [] })).errors).toBeUndefined();
    expect((await submit(a, { board: 'race', playerId: 'p2', score: 1_000, tieBreakValues: [0, 100_000] })).errors).toBeUndefined();
  });
});

describe('resultRate', () => {
  const RATE = /player "(\w+)" has reached board "rated"'s resultRate of 3 results per 60 s; one more may be recorded in (\d+) ms/;
  const retryAfter = (answer: GraphQLResponse) => (answer.errors![0]!.extensions as { retryAfterMs?: number }).retryAfterMs;
  const recordedOf = async (playerId: string) =>
    Number((await a.database.sql`select count(*)::int as n from results where board_id = 'rated' and player_id = ${playerId}`)[0]!['n']);

  it('counts a player’s results across two processes; a replay is not counted; retryAfterMs is exact', async () => {
    const start = clock.now().getTime();
    const first = await submit(a, { board: 'rated', playerId: 'r1', score: 1, matchId: 'r1-a' });
    expect(first.errors).toBeUndefined();
    clock.advance(1_000);
    expect((await submit(b, { board: 'rated', playerId: 'r1', score: 2 })).errors).toBeUndefined();
    clock.advance(1_000);
    expect((await submit(a, { board: 'rated', playerId: 'r1', score: 3 })).errors).toBeUndefined();
    clock.advance(500);
    // The fourth in the window, from the other process: refused, waiting for the first to leave it.
    const refused = await expectRefusedUnchanged(() => submit(b, { board: 'rated', playerId: 'r1', score: 4 }), 'RATE_LIMITED', RATE);
    expect(retryAfter(refused)).toBe(start + 60_000 - clock.now().getTime());
    expect(retryAfter(refused)).toBe(57_500);
    // A replay of a recorded result is answered as before, and counts nothing.
    const replay = await submit(b, { board: 'rated', playerId: 'r1', score: 1, matchId: 'r1-a' });
    expect(replay.errors).toBeUndefined();
    expect(replay.data!.submitScore.duplicate).toBe(true);
    // Another player, and another board, are not limited by r1's results.
    expect((await submit(a, { board: 'rated', playerId: 'r2', score: 1 })).errors).toBeUndefined();
    expect((await submit(a, { board: 'plain', playerId: 'r1', score: 11 })).errors).toBeUndefined();

    clock.advance(57_499);
    expect(retryAfter(await expectRefusedUnchanged(() => submit(a, { board: 'rated', playerId: 'r1', score: 5 }), 'RATE_LIMITED', RATE))).toBe(1);
    clock.advance(1);
    // The first result has left the window (recorded exactly 60 s ago): one more passes, and then the window is full again.
    expect((await submit(a, { board: 'rated', playerId: 'r1', score: 6 })).errors).toBeUndefined();
    expect(retryAfter(await expectRefusedUnchanged(() => submit(b, { board: 'rated', playerId: 'r1', score: 7 }), 'RATE_LIMITED', RATE))).toBe(1_000);
    expect(await recordedOf('r1')).toBe(4);
  });

  it('holds when both processes send at once: exactly the rate is recorded', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => submit(i % 2 === 0 ? a : b, { board: 'rated', playerId: 'r3', score: i })));
    expect(answers.filter((answer) => answer.errors === undefined)).toHaveLength(3);
    expect(answers.filter((answer) => codeOf(answer) === 'RATE_LIMITED')).toHaveLength(5);
    for (const answer of answers.filter((x) => x.errors)) expect(retryAfter(answer)).toBe(60_000);
    expect(await recordedOf('r3')).toBe(3);
  });

  it('judges each result of a batch on its own, in order; a batch past the rate is refused whole; replays in a batch count nothing', async () => {
    const input = (playerId: string, matchId: string) => ({ board: 'rated', playerId, matchId, score: 1 });
    const ok = await a.server(SUBMIT_MANY, { inputs: [input('r4', 'x1'), input('r5', 'x2'), input('r4', 'x3'), input('r4', 'x4')] });
    expect(ok.errors).toBeUndefined();
    clock.advance(10_000);
    // r4 has 3 in the window: its fourth, and only it, is named; r5's result does not pass either (the call is all or nothing).
    const refused = await expectRefusedUnchanged(
      () => b.server(SUBMIT_MANY, { inputs: [input('r5', 'x5'), input('r4', 'x6'), input('r5', 'x7')] }),
      'RATE_LIMITED',
      /^inputs\.1\.playerId: player "r4" has reached .* in 50000 ms\. Nothing was recorded\.$/,
    );
    expect(retryAfter(refused)).toBe(50_000);
    // Within one batch: r6's fourth and fifth are refused (each judged after the ones before it).
    const five = await expectRefusedUnchanged(
      () => a.server(SUBMIT_MANY, { inputs: ['y1', 'y2', 'y3', 'y4', 'y5'].map((m) => input('r6', m)) }),
      'RATE_LIMITED',
      /^inputs\.3\.playerId: player "r6" .*; inputs\.4\.playerId: player "r6" /,
    );
    expect(retryAfter(five)).toBe(60_000);
    // Replays of r4's three beside two new results of r5: the replays count nothing, so it passes.
    const replays = await b.server<{ submitScores: { duplicate: boolean }[] }>(SUBMIT_MANY, {
      inputs: [input('r4', 'x1'), input('r4', 'x3'), input('r4', 'x4'), input('r5', 'x8'), input('r5', 'x9')],
    });
    expect(replays.errors).toBeUndefined();
    expect(replays.data!.submitScores.map((x) => x.duplicate)).toEqual([true, true, true, false, false]);
    expect(await recordedOf('r4')).toBe(3);
    expect(await recordedOf('r5')).toBe(3);
  });
});

describe('suspicion', () => {
  const flags = async () =>
    (
      await a.admin<{
        flaggedPlayers: {
          reason: string;
          player: { id: string };
          result: { boardId: string; matchId: string; score: number; tieBreakValues: number[] } | null;
        }[];
      }>(FLAGGED)
    ).data!.flaggedPlayers;
  const flagOf = async (playerId: string) => (await flags()).find((flag) => flag.player.id === playerId);
  const standing = async (board: string, playerId: string) =>
    (await a.gql<{ standing: { rank: number; score: number } | null }>(STANDING, { board, id: playerId })).data!.standing;
  const topIds = async (t: TestApp, board: string) =>
    (await t.gql<{ top: { entries: { player: { id: string } }[] } }>(TOP, { board })).data!.top.entries.map((entry) => entry.player.id);
  const logged = async (matchId: string) => (await a.database.sql`select score from results where match_id = ${matchId}`).map((row) => Number(row['score']));

  it('flags a jump past suspectJump times the previous best (HIGH_FIRST), with the result kept, and hides the player everywhere at once', async () => {
    for (const [playerId, score] of [
      ['s1', 100],
      ['s2', 200],
      ['s3', 150],
    ] as const)
      expect((await submit(a, { board: 'watched', playerId, score })).errors).toBeUndefined();
    // s1 on another board too: hidden there as well.
    expect((await submit(a, { board: 'plain', playerId: 's1', score: 50 })).errors).toBeUndefined();
    // Exactly 3 times is not past it.
    expect((await submit(a, { board: 'watched', playerId: 's1', score: 300 })).errors).toBeUndefined();
    expect(await flagOf('s1')).toBeUndefined();

    const jump = await submit(a, { board: 'watched', playerId: 's1', score: 901, matchId: 'jump-1' });
    expect(jump.errors).toBeUndefined();
    // Recorded, and answered as a flagged player's result is: no standings.
    expect(jump.data!.submitScore).toMatchObject({ duplicate: false, standings: [] });
    expect(await logged('jump-1')).toEqual([901]);
    const flag = await flagOf('s1');
    expect(flag?.reason).toBe(`suspect: score 901 on board "watched" is more than its suspectJump of 3 times the player's previous best of 300`);
    expect(flag?.result).toMatchObject({ boardId: 'watched', matchId: 'jump-1', score: 901, tieBreakValues: [] });
    // Gone from every view of every board, on both processes, when the answer came.
    expect(await indexKeysHolding(a, 's1')).toEqual([]);
    expect(await standing('watched', 's1')).toBeNull();
    expect(await standing('plain', 's1')).toBeNull();
    expect(await topIds(a, 'watched')).toEqual(['s2', 's3']);
    expect(await topIds(b, 'watched')).toEqual(['s2', 's3']);
  });

  it('flags a result above suspectAbove, and a jump of suspectJump times fewer on a LOW_FIRST board', async () => {
    expect((await submit(a, { board: 'watched', playerId: 's4', score: 5_000 })).errors).toBeUndefined();
    expect(await flagOf('s4')).toBeUndefined();
    expect((await submit(a, { board: 'watched', playerId: 's5', score: 5_001, matchId: 'above-1' })).errors).toBeUndefined();
    expect((await flagOf('s5'))?.reason).toBe(`suspect: score 5001 on board "watched" is above its suspectAbove of 5000`);
    expect(await standing('watched', 's5')).toBeNull();

    for (const [playerId, score] of [
      ['l1', 1_000],
      ['l2', 1_000],
      ['l3', 700],
    ] as const)
      expect((await submit(a, { board: 'sprint', playerId, score })).errors).toBeUndefined();
    // Half of 1,000 is not fewer than half.
    expect((await submit(a, { board: 'sprint', playerId: 'l1', score: 500 })).errors).toBeUndefined();
    expect(await flagOf('l1')).toBeUndefined();
    expect((await standing('sprint', 'l1'))?.rank).toBe(1);
    expect((await submit(a, { board: 'sprint', playerId: 'l2', score: 499, matchId: 'low-1' })).errors).toBeUndefined();
    expect((await flagOf('l2'))?.reason).toBe(
      `suspect: score 499 on board "sprint" is more than its suspectJump of 2 times lower than the player's previous best of 1000`,
    );
    expect(await topIds(a, 'sprint')).toEqual(['l1', 'l3']);
    // A HIGH_FIRST board's rule does not read LOW_FIRST's way: a worse time never flags.
    expect((await submit(a, { board: 'sprint', playerId: 'l3', score: 9_000 })).errors).toBeUndefined();
    expect(await flagOf('l3')).toBeUndefined();
  });

  it('flags in the transaction of the result: a fault at the flag leaves neither the result nor the flag', async () => {
    const { sql } = a.database;
    expect((await submit(a, { board: 'watched', playerId: 's6', score: 100 })).errors).toBeUndefined();
    const before = await snapshot();
    await sql.unsafe(`
      create function refuse_suspects() returns trigger language plpgsql as $$
      begin
        if new.flag_reason like 'suspect:%' then raise exception 'injected fault at the flag'; end if;
        return new;
      end $$;
      create trigger refuse_suspects before insert or update on players for each row execute function refuse_suspects();`);
    try {
      const failed = await submit(a, { board: 'watched', playerId: 's6', score: 1_000, matchId: 'fault-1' });
      expect(failed.errors).toBeDefined();
      expect(await logged('fault-1')).toEqual([]);
      expect(await flagOf('s6')).toBeUndefined();
      expect(await snapshot()).toEqual(before);
      expect(await standing('watched', 's6')).toMatchObject({ score: 100 });
    } finally {
      await sql.unsafe(`drop trigger refuse_suspects on players; drop function refuse_suspects();`);
    }
    // The same call once the fault is gone: recorded and flagged together (not a replay: nothing was recorded).
    const again = await submit(a, { board: 'watched', playerId: 's6', score: 1_000, matchId: 'fault-1' });
    expect(again.data!.submitScore.duplicate).toBe(false);
    expect(await logged('fault-1')).toEqual([1_000]);
    expect((await flagOf('s6'))?.result?.matchId).toBe('fault-1');
    expect(await standing('watched', 's6')).toBeNull();
  });

  it('a process that stops between the commit and the take-out: the catch-up job takes the suspect out from the unconfirmed backlog row', async () => {
    const { sql } = a.database;
    expect((await submit(a, { board: 'watched', playerId: 's7', score: 100 })).errors).toBeUndefined();
    expect((await submit(a, { board: 'plain', playerId: 's7', score: 20 })).errors).toBeUndefined();
    expect((await indexKeysHolding(a, 's7')).length).toBeGreaterThan(0);
    // What the suspect's group commits, with the index left as it was (the process stopped there):
    // the result, its board score, the flag with the result, and the group's backlog row, unconfirmed.
    const at = clock.now().toISOString();
    await sql.begin(async (tx) => {
      await tx`insert into result_keys (board_id, player_id, match_id, achieved_at) values ('watched', 's7', 'stop-1', ${at})`;
      await tx`insert into results (board_id, player_id, match_id, score, achieved_at, recorded_at) values ('watched', 's7', 'stop-1', 1000, ${at}, ${at})`;
      await tx`update board_scores set score = 1000, reached_at = ${at} where board_id = 'watched' and period = 'ALL_TIME' and player_id = 's7'`;
      await tx`insert into players (id, flagged_at, flag_reason, flag_result)
               values ('s7', ${at}, 'suspect: stopped', ${JSON.stringify({ boardId: 'watched', matchId: 'stop-1', score: 1000, tieBreakValues: [], achievedAt: at })}::jsonb)`;
      await tx`insert into index_backlog (board_ids, player_ids, enqueued_at) values (array['watched'], array['s7'], now() - interval '1 minute')`;
    });
    // Gone from every key of every board once the job has passed (it runs every second).
    await until(async () => (await indexKeysHolding(a, 's7')).length === 0, 10_000, 's7 taken out by the catch-up');
    expect(await standing('plain', 's7')).toBeNull();
  });

  it('clears with unflagPlayer: the player is back with every result, the one that tripped the rule included', async () => {
    const cleared = await a.admin(`mutation { unflagPlayer(playerId: "s1") { id } }`);
    expect(cleared.errors).toBeUndefined();
    expect(await flagOf('s1')).toBeUndefined();
    // Behind s4's 5,000 (not past suspectAbove).
    expect(await standing('watched', 's1')).toMatchObject({ rank: 2, score: 901 });
    expect(await standing('plain', 's1')).toMatchObject({ score: 50 });
    const [row] = await a.database.sql`select flag_reason, flag_result from players where id = 's1'`;
    expect(row).toEqual({ flag_reason: null, flag_result: null });
    // A player flagged by hand keeps the reason given: a suspect result adds no second flag.
    expect((await a.admin(`mutation { flagPlayer(playerId: "s2", reason: "by hand") { id } }`)).errors).toBeUndefined();
    expect((await submit(a, { board: 'watched', playerId: 's2', score: 9_999 })).errors).toBeUndefined();
    expect(await flagOf('s2')).toMatchObject({ reason: 'by hand', result: null });
  });
});
