import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamBoardScores } from '../src/db/board-scores.js';
import { findBoard } from '../src/db/boards.js';
import { DeadlineExceededError, deadlineSignal, throwIfPast } from '../src/deadline.js';
import { type ResultEntry, TotalAboveMaxScoreError, recordGroup } from '../src/db/results.js';
import { type Board, type CalendarPeriod, type Period, keepsBoardScores } from '../src/model/board.js';
import { parseBucketLabel } from '../src/model/buckets.js';
import { boardScoreList } from '../src/services/buckets.js';
import { createGroupCommit } from '../src/services/group-commit.js';
import { type ModelBoard, type ModelResult, createModelBoards, expectBucketMatches, modelBuckets, submitInput } from './helpers/board-views.js';
import { seeded } from './helpers/random.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * Group commit: many concurrent submitScore calls and submitScores batches, with duplicates inside
 * a batch, the same result sent by several calls at once, and replays, must end with exactly the
 * plain model's board scores in PostgreSQL and in the index; every caller's answer must be its
 * own; a replay is answered as one; a submission that fails in a group fails alone.
 */

// A date to come (2037 has 2026's calendar): the app sets Redis expiries from this clock, so a
// past date would expire the keys at once.
const NOW = new Date('2037-11-29T12:00:00.000Z');
const PERIODS: ModelBoard['periods'] = ['ALL_TIME', 'DAILY'];
const BOARDS: ModelBoard[] = [
  { id: 'gc-best-high', order: 'HIGH_FIRST', aggregate: 'BEST', periods: PERIODS, regions: ['eu'] },
  { id: 'gc-best-low', order: 'LOW_FIRST', aggregate: 'BEST', periods: PERIODS, regions: ['eu'] },
  { id: 'gc-sum-high', order: 'HIGH_FIRST', aggregate: 'SUM', periods: PERIODS, regions: ['eu'] },
  { id: 'gc-sum-low', order: 'LOW_FIRST', aggregate: 'SUM', periods: PERIODS, regions: ['eu'] },
];
const MAX_SCORE = 1_000_000;

const SUBMIT_ONE = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate improved standings { period bucket region standing { rank score } } } }`;
const SUBMIT_MANY = `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate improved standings { period bucket region standing { rank score } } } }`;

interface Answer {
  duplicate: boolean;
  improved: boolean;
  standings: { period: string; bucket: string; region: string | null; standing: { rank: number; score: number } }[];
}

const keyOf = (r: ModelResult) => `${r.board}/${r.matchId}/${r.playerId}`;

/** One call: a single submitScore, or a batch; answers one Answer per result, or the call's error code. */
async function call(t: TestApp, results: ModelResult[], single: boolean): Promise<Answer[] | string> {
  if (single) {
    const response = await t.server<{ submitScore: Answer }>(SUBMIT_ONE, { input: submitInput(results[0]!) });
    return response.errors ? (response.errors[0]!.extensions?.code ?? 'ERROR') : [response.data!.submitScore];
  }
  const response = await t.server<{ submitScores: Answer[] }>(SUBMIT_MANY, { inputs: results.map(submitInput) });
  return response.errors ? (response.errors[0]!.extensions?.code ?? 'ERROR') : response.data!.submitScores;
}

describe('group commit', () => {
  let t: TestApp;
  let begins = 0;

  beforeAll(async () => {
    // One group in flight at a time: everything that arrives meanwhile waits and shares the next.
    t = await startTestApp({
      now: () => NOW,
      groupCommit: { maxInFlight: 1, maxGroupWeight: 300 },
      onQuery: (statement) => {
        if (/^\s*begin/i.test(statement)) begins += 1;
      },
    });
    await createModelBoards(
      t,
      BOARDS.map((board) => ({ ...board, maxScore: MAX_SCORE })),
    );
    // Results from the last 36 hours count in their days: a grace of two days (docs/closing.md).
    for (const board of BOARDS) {
      const graced = await t.admin(`mutation { updateBoard(input: { id: "${board.id}", closeGraceSeconds: 172800 }) { id } }`);
      expect(graced.errors).toBeUndefined();
    }
  });
  afterAll(() => t?.close());

  it('concurrent calls and batches with duplicates and replays end as the model says, each answered its own', async () => {
    const next = seeded(61);
    const players = Array.from({ length: 40 }, (_, i) => `gp${String(i).padStart(2, '0')}`);
    const originals: ModelResult[] = [];
    for (let i = 0; i < 1_200; i++) {
      const board = BOARDS[i % BOARDS.length]!;
      originals.push({
        board: board.id,
        playerId: players[Math.floor(next() * players.length)]!,
        matchId: `m${i}`,
        // Few distinct scores, so that ties are common and decided by time.
        score: 1 + Math.floor(next() * 30),
        region: next() < 0.5 ? 'eu' : null,
        achievedAt: new Date(NOW.getTime() - Math.floor(next() * 36) * 3_600_000),
      });
    }
    // Calls: singles and batches of up to 40; about one result in six is sent again by another
    // call at the same time, and some batches hold the same result twice.
    const calls: { results: ModelResult[]; single: boolean }[] = [];
    for (let i = 0; i < originals.length;) {
      const single = next() < 0.4;
      const size = single ? 1 : 1 + Math.floor(next() * 40);
      const results = originals.slice(i, i + size);
      i += size;
      if (!single && next() < 0.3) results.push(results[0]!);
      calls.push({ results, single });
      if (next() < 0.15) calls.push({ results: [results[0]!], single: true });
    }
    // Shuffled, so that an echo may arrive before its original.
    for (let i = calls.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [calls[i], calls[j]] = [calls[j]!, calls[i]!];
    }
    const before = begins;
    const answers = await Promise.all(calls.map(({ results, single }) => call(t, results, single)));
    // Fewer transactions than calls: calls shared them.
    expect(begins - before).toBeLessThan(calls.length);

    // Each key is recorded once: exactly one of its occurrences answers duplicate: false.
    const firsts = new Map<string, number>();
    calls.forEach(({ results }, c) => {
      const answer = answers[c]!;
      expect(typeof answer, `call ${c}`).not.toBe('string');
      (answer as Answer[]).forEach((payload, k) => {
        const result = results[k]!;
        if (!payload.duplicate) firsts.set(keyOf(result), (firsts.get(keyOf(result)) ?? 0) + 1);
        if (payload.duplicate) return;
        // Each answer is its own: one standing per bucket its result fell in, holding at least its
        // own part (the board score after its write).
        const board = BOARDS.find((b) => b.id === result.board)!;
        const day = result.achievedAt.toISOString().slice(0, 10);
        const expected = [
          ['ALL_TIME', 'all'],
          ['DAILY', day],
        ].flatMap(([period, bucket]) => [null, result.region].filter((r, i) => i === 0 || r).map((region) => `${period}|${bucket}|${region ?? ''}`));
        expect(payload.standings.map((s) => `${s.period}|${s.bucket}|${s.region ?? ''}`).sort(), keyOf(result)).toEqual(expected.sort());
        for (const { standing } of payload.standings) {
          if (board.aggregate === 'SUM' || board.order === 'HIGH_FIRST') expect(standing.score).toBeGreaterThanOrEqual(result.score);
          else expect(standing.score).toBeLessThanOrEqual(result.score);
        }
      });
    });
    expect([...firsts.keys()].sort()).toEqual([...new Set(originals.map(keyOf))].sort());
    expect([...firsts.values()].every((n) => n === 1)).toBe(true);

    // Replays after the fact, with another score and time, concurrently again: all duplicates, and
    // each answers the original's current standings, which the model knows.
    const replays = originals.filter(() => next() < 0.1).map((r) => ({ ...r, score: r.score + 7, achievedAt: new Date(r.achievedAt.getTime() - 60_000) }));
    const replayed = await Promise.all(replays.map((r) => call(t, [r], true)));
    const buckets = modelBuckets(BOARDS, originals);
    replays.forEach((replay, i) => {
      const [payload] = replayed[i] as Answer[];
      expect(payload!.duplicate).toBe(true);
      expect(payload!.improved).toBe(false);
      const original = originals.find((r) => keyOf(r) === keyOf(replay))!;
      const day = original.achievedAt.toISOString().slice(0, 10);
      for (const s of payload!.standings) {
        expect(s.bucket).toBe(s.period === 'ALL_TIME' ? 'all' : day);
        const bucket = buckets.find((b) => b.board.id === replay.board && b.period === s.period && b.label === s.bucket && b.region === s.region)!;
        const rank = bucket.ranked.findIndex((entry) => entry.playerId === replay.playerId) + 1;
        expect(s.standing).toEqual({ rank, score: bucket.ranked[rank - 1]!.score });
      }
    });

    // PostgreSQL holds exactly the model's board scores: the rows kept (a BEST board's ALL_TIME,
    // every bucket of a SUM board), and those derived from the log; every view of the index shows them.
    const rows = await t.database.sql<
      { board_id: string; period: string; bucket: string; region: string; player_id: string; score: number; reached_ms: number }[]
    >`
      select board_id, period, bucket, region, player_id, score, round(extract(epoch from reached_at) * 1000)::float8 as reached_ms
      from board_scores where board_id like 'gc-%'`;
    const line = (board: string, period: string, label: string, region: string, playerId: string, score: number, reachedMs: number) =>
      `${board}|${period}|${label}|${region}|${playerId}|${score}|${reachedMs}`;
    const stored = rows.map((r) => line(r.board_id, r.period, r.bucket, r.region, r.player_id, r.score, r.reached_ms));
    for (const b of buckets.filter((b) => !keepsBoardScores(b.board, b.period as Period))) {
      const board = (await findBoard(t.database.db, b.board.id))!;
      const at = { board, bucket: parseBucketLabel(board, b.period as CalendarPeriod, b.label, b.region)!, region: b.region };
      for await (const chunk of streamBoardScores(t.database.sql, boardScoreList(at)))
        for (const [playerId, score, reachedMs] of chunk) stored.push(line(b.board.id, b.period, b.label, b.region ?? '', playerId, score, reachedMs));
    }
    const modelled = buckets.flatMap((b) => b.ranked.map((e) => line(b.board.id, b.period, b.label, b.region ?? '', e.playerId, e.score, e.reachedAt)));
    expect(stored.sort()).toEqual(modelled.sort());
    for (const bucket of buckets) await expectBucketMatches(t, bucket, { players: [], friendsOf: {} });
    const [logged] = await t.database.sql<{ n: number }[]>`select count(*)::int as n from results where board_id like 'gc-%'`;
    expect(logged!.n).toBe(originals.length);
  }, 120_000);

  it('a call whose SUM total would pass maxScore fails alone; the calls grouped with it are recorded', async () => {
    const base = { board: 'gc-sum-high', region: null, achievedAt: new Date(NOW.getTime() - 1_000) };
    const calls: ModelResult[][] = [];
    for (let i = 0; i < 30; i++) calls.push([{ ...base, playerId: `ok${i}`, matchId: `s${i}`, score: 10 }]);
    // Each part is below maxScore; together they pass it.
    calls.splice(15, 0, [
      { ...base, playerId: 'greedy', matchId: 'g1', score: MAX_SCORE - 5 },
      { ...base, playerId: 'greedy', matchId: 'g2', score: 10 },
    ]);
    const answers = await Promise.all(calls.map((results) => call(t, results, false)));
    expect(answers[15]).toBe('BAD_USER_INPUT');
    answers.forEach((answer, i) => {
      if (i !== 15) expect(answer, `call ${i}`).toEqual([expect.objectContaining({ duplicate: false, improved: true })]);
    });
    const [counted] = await t.database.sql<{ ok: number; greedy: number; keys: number }[]>`
      select (select count(*) from results where board_id = 'gc-sum-high' and match_id like 's%')::int as ok,
             (select count(*) from results where player_id = 'greedy')::int as greedy,
             (select count(*) from result_keys where player_id = 'greedy')::int as keys`;
    expect(counted).toEqual({ ok: 30, greedy: 0, keys: 0 });
  });

  it('in one group, a submission PostgreSQL refuses is isolated and the others are recorded once', async () => {
    const board = (await findBoard(t.database.db, 'gc-best-high'))!;
    const entry = (b: Board, playerId: string, matchId: string, score: number): ResultEntry => ({
      board: b,
      playerId,
      matchId,
      score,
      region: null,
      achievedAt: NOW,
      metadata: null,
      rows: [{ period: 'ALL_TIME', bucket: 'all', region: '' }],
    });
    const sumBoard = (await findBoard(t.database.db, 'gc-sum-low'))!;
    const group = await recordGroup(t.database.sql, [
      [entry(board, 'iso-a', 'i1', 5)],
      // Metadata that is not JSON (the service never sends it; a bug could): PostgreSQL refuses the
      // statement, and splitting the group finds the one submission to blame.
      [{ ...entry(board, 'iso-b', 'i2', 5), metadata: '{"car": ' }],
      [entry(board, 'iso-c', 'i3', 7), entry(board, 'iso-c', 'i3', 7)],
      // Passes maxScore as a total: rejected by the fold, the group retried without it.
      [entry(sumBoard, 'iso-d', 'i4', MAX_SCORE), entry(sumBoard, 'iso-d', 'i5', 1)],
      // A replay of the first, in the same group.
      [entry(board, 'iso-a', 'i1', 9)],
    ]);
    const [a, b, c, d, e] = group.submissions;
    expect(a).toEqual({ ok: { outcomes: [expect.objectContaining({ duplicate: false, improved: true })] } });
    expect((b as { error: { code: string } }).error.code).toBe('22P02');
    expect(c).toEqual({ ok: { outcomes: [expect.objectContaining({ duplicate: false }), expect.objectContaining({ duplicate: true })] } });
    expect((d as { error: unknown }).error).toBeInstanceOf(TotalAboveMaxScoreError);
    expect(e).toEqual({ ok: { outcomes: [expect.objectContaining({ duplicate: true, improved: false })] } });
    const scores = await t.database.sql<{ player_id: string; score: number }[]>`
      select player_id, score from board_scores where player_id like 'iso-%' order by player_id`;
    expect(scores).toEqual([
      { player_id: 'iso-a', score: 5 },
      { player_id: 'iso-c', score: 7 },
    ]);
  });
});

describe('the group commit itself', () => {
  it('gathers what arrives while a group is in flight, within the weight bound, and answers each item its own outcome', async () => {
    const groups: number[][] = [];
    const gates: (() => void)[] = [];
    const commits = createGroupCommit<number, string>(
      async (items, committed) => {
        groups.push(items);
        await new Promise<void>((resolve) => gates.push(resolve));
        committed();
        return items.map((item) => (item === 13 ? { error: new Error('unlucky') } : { ok: `done ${item}` }));
      },
      { maxInFlight: 1, maxGroupWeight: 5 },
    );
    const first = commits.submit(1, 1);
    const rest = [2, 13, 4, 5, 6, 7].map((item) => commits.submit(item, 2));
    expect(groups).toEqual([[1]]);
    gates.shift()!();
    expect(await first).toBe('done 1');
    // Weights 2 + 2 fit in 5; the third would not.
    await new Promise((resolve) => setImmediate(resolve));
    expect(groups).toEqual([[1], [2, 13]]);
    gates.shift()!();
    await expect(rest[0]).resolves.toBe('done 2');
    await expect(rest[1]).rejects.toThrow('unlucky');
    await new Promise((resolve) => setImmediate(resolve));
    gates.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
    gates.shift()!();
    expect(await Promise.all(rest.slice(2))).toEqual(['done 4', 'done 5', 'done 6', 'done 7']);
    expect(groups).toEqual([[1], [2, 13], [4, 5], [6, 7]]);
  });

  it('a group that throws fails its items only; the next group runs', async () => {
    let calls = 0;
    const commits = createGroupCommit<number, number>(
      async (items) => {
        calls += 1;
        if (calls === 1) throw new Error('store away');
        return items.map((item) => ({ ok: item * 2 }));
      },
      { maxInFlight: 1 },
    );
    const failed = commits.submit(1, 1);
    const next = commits.submit(2, 1);
    await expect(failed).rejects.toThrow('store away');
    expect(await next).toBe(4);
  });
});

describe('the group commit under a store that hangs', () => {
  it("frees a group's slot at its deadline, so later groups commit while the hung one still waits", async () => {
    const hung = new Promise<never>(() => {});
    const ran: string[][] = [];
    const groups = createGroupCommit<string, string>(
      async (items, _committed, signal) => {
        ran.push(items);
        // The first group's store never answers; it gives up when its signal fires.
        if (items.includes('stuck'))
          await Promise.race([hung, new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)))]);
        return items.map((item) => ({ ok: `${item} done` }));
      },
      { maxInFlight: 1 },
    );
    const stuck = groups.submit('stuck', 1, performance.now() + 100);
    const next = groups.submit('next', 1, performance.now() + 5_000);
    await expect(stuck).rejects.toThrow(/did not answer within/);
    await expect(next).resolves.toBe('next done');
    expect(ran).toEqual([['stuck'], ['next']]);
  });

  it('an item whose deadline passed while it queued fails at once, never runs, and never cuts short the group of items with time left', async () => {
    const ran: { items: string[]; aborted: boolean }[] = [];
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const groups = createGroupCommit<string, string>(
      async (items, _committed, signal) => {
        ran.push({ items, aborted: signal.aborted });
        if (items.includes('first')) await gate;
        return items.map((item) => ({ ok: item }));
      },
      { maxInFlight: 1 },
    );
    await expect(groups.submit('late', 1, performance.now() - 1)).rejects.toThrow(/did not answer within/);
    // Behind a group in flight: a request whose execution resumed after its deadline (a store
    // that hung) queues between two with time left.
    const first = groups.submit('first', 1, performance.now() + 5_000);
    const before = groups.submit('before', 1, performance.now() + 5_000);
    const resumed = groups.submit('resumed', 1, performance.now() - 1);
    const after = groups.submit('after', 1, performance.now() + 5_000);
    open();
    await expect(resumed).rejects.toThrow(/did not answer within/);
    expect(await Promise.all([first, before, after])).toEqual(['first', 'before', 'after']);
    expect(ran).toEqual([
      { items: ['first'], aborted: false },
      { items: ['before', 'after'], aborted: false },
    ]);
  });
});

describe('a deadline', () => {
  it('is past by the clock though the event loop has not yet run its timer', () => {
    const signal = deadlineSignal(20, 'PostgreSQL');
    const until = performance.now() + 40;
    // A busy event loop: replies already read keep work going while the timer waits its turn.
    while (performance.now() < until);
    expect(signal.aborted).toBe(false);
    expect(() => throwIfPast(signal)).toThrow(DeadlineExceededError);
  });

  it('is not past before it is due', () => {
    expect(() => throwIfPast(deadlineSignal(10_000, 'PostgreSQL'))).not.toThrow();
  });
});

describe('a batch answers each result as of its own moment', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ now: () => NOW });
    for (const board of BOARDS.filter((b) => b.periods.length)) {
      const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
        input: { id: `${board.id}-moment`, title: 'moment', order: board.order, aggregate: board.aggregate, maxScore: MAX_SCORE, periods: ['ALL_TIME'] },
      });
      expect(created.errors).toBeUndefined();
    }
  });
  afterAll(() => t?.close());

  it.each(BOARDS)('$aggregate $order: the score and rank after each result, not after the whole batch', async (board) => {
    const id = `${board.id}-moment`;
    const results: [string, number][] = [
      ['ana', 10],
      ['bo', 25],
      ['ana', 20],
      ['cy', 5],
      ['ana', 1],
      ['bo', 3],
    ];
    // The plain fold: each player's score after each result, and their rank among those seen so far.
    const scores = new Map<string, { score: number; at: number }>();
    const better = (a: { score: number; at: number }, b: { score: number; at: number }) =>
      a.score !== b.score ? (board.order === 'HIGH_FIRST' ? a.score > b.score : a.score < b.score) : a.at < b.at;
    const expected = results.map(([player, score], i) => {
      const old = scores.get(player);
      const next = board.aggregate === 'SUM' ? { score: (old?.score ?? 0) + score, at: i } : !old || better({ score, at: i }, old) ? { score, at: i } : old;
      scores.set(player, next);
      const rank = 1 + [...scores.entries()].filter(([other, entry]) => other !== player && better(entry, next)).length;
      return { rank, score: next.score };
    });
    const response = await t.server<{ submitScores: Answer[] }>(SUBMIT_MANY, {
      inputs: results.map(([playerId, score], i) => ({
        board: id,
        playerId,
        score,
        matchId: `m${i}`,
        achievedAt: new Date(NOW.getTime() - 60_000 + i * 1_000).toISOString(),
      })),
    });
    expect(response.errors).toBeUndefined();
    expect(response.data!.submitScores.map((answer) => answer.standings.find((s) => s.period === 'ALL_TIME')!.standing)).toEqual(expected);
  });
});
