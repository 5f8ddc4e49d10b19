import type { Counter } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { movableClock } from './helpers/clock.js';
import { type GraphQLResponse, type TestApp, startTestApp } from './helpers/test-app.js';
import { TRANSPORTS, type Transport } from './helpers/transports.js';
import { until } from './helpers/wait.js';

/**
 * "A friend just passed you" (issue 58): Subscription.friendOvertook over graphql-ws and
 * server-sent events, and FRIEND_OVERTAKEN in the outbox, against an oracle written here from
 * what the test sent: who lists whom (setFriends), each player's best score in each list (ALL_TIME
 * and the day), who is flagged. A result passes a follower when the follower was ahead of the
 * passer before (or the passer was not ranked) and is behind after; at most 100 told a result,
 * those just passed first; flagged players neither pass nor are passed. Every score is distinct,
 * so the board's order alone ranks them. A case that must tell nothing is followed by one that
 * tells something on the same board: the detection runs one group after another and a board's
 * messages keep their order, so once the second's arrive, anything the first told would have too.
 */

// A date to come (2037 has 2026's calendar): the app sets Redis expiries from its clock.
const DAY_1 = new Date('2037-05-30T10:00:00.000Z');
const DAY_MS = 24 * 60 * 60_000;

const FRIEND_OVERTOOK = `subscription($board: ID!, $playerId: ID!) {
  friendOvertook(board: $board, playerId: $playerId) {
    boardId period bucket at
    by { rank score player { id } }
    you { rank score player { id } }
  }
}`;

interface Told {
  boardId: string;
  period: string;
  bucket: string;
  by: { rank: number; score: number; player: { id: string } };
  you: { rank: number; score: number; player: { id: string } };
}

/** An overtaking as compared: its list, who passed whom, their scores and ranks as they stand after. */
const keyOf = (t: Told) => [t.boardId, t.period, t.bucket, t.by.player.id, t.by.score, t.by.rank, t.you.player.id, t.you.score, t.you.rank].join('|');

// ---- the oracle ----------------------------------------------------------------------------

/** One board as the test sent it. */
class Board {
  /** Per list (ALL_TIME 'all', or a day's label), each player's best (or, LOW_FIRST, lowest) score. */
  readonly lists = new Map<string, Map<string, number>>();
  readonly expected: string[] = [];

  constructor(
    readonly id: string,
    readonly lowFirst: boolean,
    readonly daily: boolean,
    private readonly world: World,
  ) {}

  /** Whether score a ranks ahead of b. */
  private ahead(a: number, b: number): boolean {
    return this.lowFirst ? a < b : a > b;
  }

  /** A result of `playerId` on `day`: records it and adds what it must tell. */
  result(playerId: string, score: number, day: string): void {
    const labels: [string, string][] = [['ALL_TIME', 'all'], ...(this.daily ? [['DAILY', day] as [string, string]] : [])];
    for (const [period, label] of labels) {
      let list = this.lists.get(label);
      if (!list) this.lists.set(label, (list = new Map<string, number>()));
      if (this.world.flagged.has(playerId)) continue;
      const before = list.get(playerId);
      if (before !== undefined && !this.ahead(score, before)) continue;
      const passed = [...list.entries()]
        .filter(([id]) => id !== playerId && !this.world.flagged.has(id) && this.world.lists(id, playerId))
        .filter(([, s]) => (before === undefined || this.ahead(s, before)) && this.ahead(score, s))
        // The closest first: the best placed of those now behind.
        .sort(([, a], [, b]) => (this.ahead(a, b) ? -1 : 1))
        .slice(0, 100);
      list.set(playerId, score);
      const rank = (id: string) => 1 + [...list.entries()].filter(([other, s]) => !this.world.flagged.has(other) && this.ahead(s, list.get(id)!)).length;
      for (const [you, s] of passed) this.expected.push([this.id, period, label, playerId, score, rank(playerId), you, s, rank(you)].join('|'));
    }
  }
}

/** Who lists whom, and who is flagged. */
class World {
  readonly friends = new Map<string, Set<string>>();
  readonly flagged = new Set<string>();
  lists(follower: string, friend: string): boolean {
    return this.friends.get(follower)?.has(friend) ?? false;
  }
}

// ---- helpers -------------------------------------------------------------------------------

interface Watch {
  told: Told[];
  errors: { message: string; extensions?: { code?: string } }[];
  stop(): Promise<void>;
}

function watch(transport: Transport, variables: { board: string; playerId: string }): Watch {
  const results = transport.subscribe({ query: FRIEND_OVERTOOK, variables });
  const told: Told[] = [];
  const errors: Watch['errors'] = [];
  const pulling = (async () => {
    try {
      for await (const result of results as AsyncIterable<GraphQLResponse<{ friendOvertook: Told }>>) {
        if (result.errors) errors.push(...(result.errors as Watch['errors']));
        if (result.data) told.push(result.data.friendOvertook);
      }
    } catch (error) {
      errors.push(...(Array.isArray(error) ? (error as Watch['errors']) : [{ message: String(error) }]));
    }
  })();
  return {
    told,
    errors,
    async stop() {
      await results.return?.();
      await pulling;
    },
  };
}

const byName = (name: string) => TRANSPORTS.find((f) => f('http://unused').name === name)!;

describe('friendOvertook and FRIEND_OVERTAKEN', () => {
  const clock = movableClock({ startsAt: DAY_1 });
  const world = new World();
  const boards = new Map<string, Board>();
  let day = '2037-05-30';
  let t: TestApp;
  let ws: Transport;
  let sse: Transport;
  const watches: { board: string; playerId: string; ws: Watch; sse: Watch }[] = [];
  let followerQueries = 0;
  let matches = 0;

  const board = async (id: string, options: { lowFirst?: boolean; daily?: boolean; shards?: number } = {}) => {
    const input = {
      id,
      title: id,
      maxScore: 1_000_000,
      order: options.lowFirst ? 'LOW_FIRST' : 'HIGH_FIRST',
      periods: options.daily ? ['ALL_TIME', 'WEEKLY', 'DAILY'] : ['ALL_TIME'],
      ...(options.shards ? { shards: options.shards } : {}),
    };
    const answer = await t.admin('mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }', { input });
    expect(answer.errors).toBeUndefined();
    const made = new Board(id, options.lowFirst ?? false, options.daily ?? false, world);
    boards.set(id, made);
    return made;
  };
  const submit = async (b: Board, playerId: string, score: number) => {
    const answer = await t.server('mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }', {
      input: { board: b.id, playerId, score, matchId: `m${++matches}` },
    });
    expect(answer.errors).toBeUndefined();
    b.result(playerId, score, day);
  };
  const setFriends = async (playerId: string, friendIds: string[]) => {
    const answer = await t.server('mutation($p: ID!, $f: [ID!]!) { setFriends(playerId: $p, friendIds: $f) }', { p: playerId, f: friendIds });
    expect(answer.errors).toBeUndefined();
    world.friends.set(playerId, new Set(friendIds));
  };
  const flag = async (playerId: string) => {
    const answer = await t.admin('mutation($p: ID!) { flagPlayer(playerId: $p, reason: "cheating") { id } }', { p: playerId });
    expect(answer.errors).toBeUndefined();
    world.flagged.add(playerId);
  };
  /** Watches a player over graphql-ws and server-sent events both; answers once both are subscribed (a first overtaking reaches them). */
  const watchBoth = (boardId: string, playerId: string) => {
    const both = { board: boardId, playerId, ws: watch(ws, { board: boardId, playerId }), sse: watch(sse, { board: boardId, playerId }) };
    watches.push(both);
    return both;
  };
  /** What the watched players of a board must have been told, per the oracle. */
  const expectedFor = (b: Board, playerId: string) => b.expected.filter((key) => key.split('|')[6] === playerId).sort();
  /** Waits until every watch of the board holds what the oracle says, then compares exactly (ws and SSE alike). */
  const settled = async (b: Board) => {
    const mine = watches.filter((w) => w.board === b.id);
    await until(
      () => mine.every((w) => [w.ws, w.sse].every((one) => one.told.length >= expectedFor(b, w.playerId).length)),
      20_000,
      () => `board ${b.id}: ${JSON.stringify(mine.map((w) => [w.playerId, w.ws.told.length, w.sse.told.length, expectedFor(b, w.playerId).length]))}`,
    );
    for (const w of mine) {
      expect(w.ws.errors, `${w.playerId} over graphql-ws`).toEqual([]);
      expect(w.sse.errors, `${w.playerId} over SSE`).toEqual([]);
      expect(w.ws.told.map(keyOf).sort(), `${w.playerId} over graphql-ws`).toEqual(expectedFor(b, w.playerId));
      expect(w.sse.told.map(keyOf).sort(), `${w.playerId} over SSE`).toEqual(expectedFor(b, w.playerId));
    }
  };
  /** Subscribed in every process: a result published now reaches it (the detection counts the subscription within about a second). */
  const subscribed = async (boardId: string) => {
    await until(async () => (await t.app.parts.masterIndex.overtakenListeners(boardId)) > 0, 10_000, `a subscription to ${boardId}`);
    // The detection's own count of listeners is renewed once a second.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
  };
  const told = async () =>
    (await (t.app.parts.metrics.registry.getSingleMetric('leaderboard_friend_overtaken_events_total') as Counter).get()).values[0]?.value ?? 0;

  beforeAll(async () => {
    t = await startTestApp({
      now: clock.now,
      seasonCloseIntervalMs: null,
      onQuery: (statement) => {
        // Any read of the friend lists: the followers walk, or the probe of the players just behind a mover.
        if (/^\s*select[\s\S]*\bfrom friendships\b/.test(statement)) followerQueries++;
      },
    });
    ws = byName('graphql-ws')(t.url);
    sse = byName('SSE (graphql-sse)')(t.url);
  });
  afterAll(async () => {
    for (const w of watches) await Promise.all([w.ws.stop(), w.sse.stop()]);
    await ws?.close();
    await sse?.close();
    await t?.close();
  });

  it('reads no friend list while nobody listens (no webhook, no subscriber), and does once someone does', async () => {
    const quiet = await board('Quiet');
    await setFriends('q-fan', ['q-star']);
    await submit(quiet, 'q-fan', 10);
    await submit(quiet, 'q-star', 20);
    await submit(quiet, 'q-star', 30);
    // The submissions were answered; the detection, were it queued, ran within the next groups'.
    await submit(quiet, 'q-other', 5);
    expect(followerQueries).toBe(0);
    // Told only from here on: nobody heard the rest.
    quiet.expected.length = 0;
    watchBoth(quiet.id, 'q-fan');
    await subscribed(quiet.id);
    await submit(quiet, 'q-fan', 40);
    await setFriends('q-fan2', ['q-star']);
    await submit(quiet, 'q-fan2', 35);
    watchBoth(quiet.id, 'q-fan2');
    await subscribed(quiet.id);
    await submit(quiet, 'q-star', 50);
    await settled(quiet);
    expect(quiet.expected.length).toBeGreaterThan(0);
    expect(followerQueries).toBeGreaterThan(0);
  });

  it('tells each follower passed, in ALL_TIME and the shortest period, and nobody else', async () => {
    const ot = await board('Ot', { daily: true });
    // Day 1: V's score, kept in ALL_TIME only once the day is over.
    await setFriends('V', ['A']);
    await submit(ot, 'V', 500);
    clock.advance(DAY_MS);
    day = '2037-05-31';
    await setFriends('B1', ['A', 'C', 'F']);
    await setFriends('B2', ['A']);
    await setFriends('B3', ['A', 'x']);
    await setFriends('B4', ['A']);
    await setFriends('N', ['someone-else']);
    for (const id of ['B1', 'B2', 'B3', 'B4', 'N', 'V']) watchBoth(ot.id, id);
    await subscribed(ot.id);
    for (const [id, score] of [
      ['B1', 300],
      ['B2', 200],
      ['B3', 100],
      ['N', 250],
      ['B4', 800],
    ] as const)
      await submit(ot, id, score);
    // Each told "as they stand now": the next result waits for them.
    // A, not ranked, passes B2 and B3 (several players listing A); N does not list A.
    await submit(ot, 'A', 260);
    await settled(ot);
    // A improves, passes nobody.
    await submit(ot, 'A', 270);
    // A passes B1 in both lists and V in ALL_TIME only (V has no score today).
    await submit(ot, 'A', 700);
    await settled(ot);
    // Flagged B: B4 is not told. Flagged A: F passes nobody.
    await flag('B4');
    await submit(ot, 'A', 900);
    await flag('F');
    await submit(ot, 'F', 10_000);
    // Then C (B1 lists C) passes B1: once it arrives, whatever the flagged ones told would have.
    await submit(ot, 'C', 1_000);
    await settled(ot);
    expect(ot.expected.some((key) => key.includes('|DAILY|'))).toBe(true);
    expect(ot.expected.some((key) => key.includes('|F|') || key.includes('|B4|'))).toBe(false);
  });

  it('follows a LOW_FIRST board', async () => {
    const lo = await board('Lo', { lowFirst: true });
    await setFriends('lo-b', ['lo-a']);
    await setFriends('lo-c', ['lo-a']);
    watchBoth(lo.id, 'lo-b');
    watchBoth(lo.id, 'lo-c');
    await subscribed(lo.id);
    await submit(lo, 'lo-b', 50);
    await submit(lo, 'lo-c', 20);
    await submit(lo, 'lo-a', 80);
    await submit(lo, 'lo-a', 40);
    await settled(lo);
    await submit(lo, 'lo-a', 30);
    await submit(lo, 'lo-a', 10);
    await settled(lo);
    expect(lo.expected).toHaveLength(2);
  });

  it('tells across the shards of a sharded board', async () => {
    const sh = await board('Sh', { shards: 4 });
    const fans = Array.from({ length: 12 }, (_, i) => `sh-${i}`);
    for (const fan of fans) await setFriends(fan, ['sh-star']);
    for (const fan of fans) watchBoth(sh.id, fan);
    await subscribed(sh.id);
    for (const [i, fan] of fans.entries()) await submit(sh, fan, 10 + i * 10);
    await submit(sh, 'sh-star', 65);
    await settled(sh);
    await submit(sh, 'sh-star', 105);
    await settled(sh);
    expect(sh.expected).toHaveLength(10);
  });

  it('tells at most 100 players a result, those just passed first', async () => {
    const cap = await board('Cap');
    const fans = Array.from({ length: 150 }, (_, i) => `cap-${String(i + 1).padStart(3, '0')}`);
    for (const fan of fans) await setFriends(fan, ['cap-star']);
    // The 100th closest (score 51) and the first left out (50).
    watchBoth(cap.id, 'cap-051');
    watchBoth(cap.id, 'cap-050');
    await subscribed(cap.id);
    const inputs = fans.map((fan, i) => ({ board: cap.id, playerId: fan, score: i + 1, matchId: `m${++matches}` }));
    expect((await t.server('mutation($i: [SubmitScoreInput!]!) { submitScores(inputs: $i) { duplicate } }', { i: inputs })).errors).toBeUndefined();
    for (const input of inputs) cap.result(input.playerId, input.score, day);
    const before = await told();
    await submit(cap, 'cap-star', 1_000);
    await settled(cap);
    expect(cap.expected).toHaveLength(100);
    expect(await told()).toBe(before + 100);
  });

  it('writes one FRIEND_OVERTAKEN event per result and list, naming every player passed, for a webhook that wants it', async () => {
    const hook = await board('Hook');
    await t.database
      .sql`insert into webhooks (id, url, events, boards, secret) values ('wh_overtaken', 'http://127.0.0.1:9/hook', '{FRIEND_OVERTAKEN}', '{Hook}', 'whsec_dGVzdA==')`;
    // Each attempt a new passer, not ranked yet, whom h-1 and h-2 list (h-3 does not).
    const stars = Array.from({ length: 100 }, (_, i) => `h-star-${i}`);
    await setFriends('h-1', stars);
    await setFriends('h-2', stars);
    await setFriends('h-3', ['nobody']);
    await submit(hook, 'h-1', 100);
    await submit(hook, 'h-2', 200);
    await submit(hook, 'h-3', 150);
    // The process learns of the webhook when its directory renews; until then a result tells nobody.
    let attempt = 0;
    await until(
      async () => {
        await submit(hook, stars[attempt]!, 300 + attempt++);
        // Its detection's time to run, so the next result comes after its standings were read.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const [row] = await t.database.sql<{ n: number }[]>`select count(*)::int as n from webhook_events where type = 'FRIEND_OVERTAKEN'`;
        return row!.n > 0;
      },
      60_000,
      'a FRIEND_OVERTAKEN event',
    );
    const rows = await t.database.sql<
      {
        board_id: string;
        data: {
          boardId: string;
          period: string;
          bucket: string;
          by: Told['by'] & { playerId: string };
          passed: { playerId: string; score: number; rank: number }[];
        };
      }[]
    >`
      select board_id, data from webhook_events where type = 'FRIEND_OVERTAKEN' order by id`;
    // Only the first result after the webhook was known told: its passer passed both of its followers.
    const firstTold = hook.expected.filter((key) => key.split('|')[3] === rows[0]!.data.by.playerId);
    expect(
      rows
        .flatMap(({ data }) =>
          data.passed.map((you) =>
            [data.boardId, data.period, data.bucket, data.by.playerId, data.by.score, data.by.rank, you.playerId, you.score, you.rank].join('|'),
          ),
        )
        .sort(),
    ).toEqual(firstTold.sort());
    // One event, its passed players the closest first.
    expect(rows).toHaveLength(1);
    expect(rows[0]!.data.passed.map((you) => you.rank)).toEqual([...rows[0]!.data.passed.map((you) => you.rank)].sort((a, b) => a - b));
  }, 90_000);

  it('refuses an unknown board (NOT_FOUND) and arguments out of bounds (BAD_USER_INPUT)', async () => {
    for (const transport of [ws, sse]) {
      const cases: [Record<string, string>, string][] = [
        [{ board: 'No-Such-Board', playerId: 'p' }, 'NOT_FOUND'],
        [{ board: 'Ot', playerId: '' }, 'BAD_USER_INPUT'],
        [{ board: 'Ot', playerId: 'p'.repeat(129) }, 'BAD_USER_INPUT'],
        [{ board: 'b'.repeat(200), playerId: 'p' }, 'BAD_USER_INPUT'],
      ];
      for (const [variables, code] of cases) {
        const w = watch(transport, variables as { board: string; playerId: string });
        await until(() => w.errors.length > 0, 10_000, `${transport.name}: an error for ${JSON.stringify(variables)}`);
        expect(w.errors[0]!.extensions?.code, `${transport.name} ${JSON.stringify(variables)}`).toBe(code);
        await w.stop();
      }
    }
  });
});
