import { EventEmitter } from 'node:events';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../src/logger.js';
import type { Board } from '../src/model/board.js';
import { createCohortFeed } from '../src/pubsub/cohort-changed.js';
import { LatestValue } from '../src/pubsub/latest.js';
import { encodeLeagueSignal } from '../src/pubsub/league-signal.js';
import type { CohortView, LeagueReadSides, LeagueRound } from '../src/reads/league.js';
import type { RedisClient } from '../src/redis.js';
import { closeBuckets } from './helpers/closed-days.js';
import { movableClock } from './helpers/clock.js';
import { type RedisClusterFixture, startRedisCluster } from './helpers/redis-cluster.js';
import { type GraphQLResponse, type TestApp, startTestApp } from './helpers/test-app.js';
import { TRANSPORTS, type Transport } from './helpers/transports.js';
import { until } from './helpers/wait.js';

/**
 * Subscription.cohortChanged (issue 57) over graphql-ws and server-sent events (both of Yoga's:
 * the graphql-sse client's POST and a browser's GET), against an oracle written here from what the
 * test sent: players are placed five to a cohort in the order their first results arrived (all in
 * the last tier, Bronze, in a first round), each cohort ranked by best score (every score distinct),
 * its zones over its visible players (promote 2; the last tier demotes nobody), a player's outcome
 * where a close now would take them. The cohort watched (Bronze/2) is never in the board's top
 * (topSize 3: Bronze/1 holds the high scores), so its changes are not top changes. Then: a second
 * process's write, a burst, a player not yet placed, a flag, the round's close, bad arguments, the
 * client going away; and the coalescing itself, on the feed with a clock of the test's.
 */

const TIERS = ['Gold', 'Silver', 'Bronze'];
const LEAGUE = { tiers: TIERS, cohortSize: 5, promote: 2, demote: 1, period: 'DAILY' };
// A date to come (2037 has 2026's calendar): the app sets Redis expiries from its clock.
const START = new Date('2037-05-31T13:00:00.000Z');
const ROUND_1 = '2037-05-31';
const AFTER_CLOSE = new Date('2037-06-01T00:10:00.000Z');
const ROUND_2 = '2037-06-01';

const CREATE = 'mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }';
const SUBMIT = 'mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }';
const FLAG = 'mutation($playerId: ID!) { flagPlayer(playerId: $playerId, reason: "cheating") { id } }';
const COHORT_CHANGED = `subscription($board: ID!, $playerId: ID!) {
  cohortChanged(board: $board, playerId: $playerId) {
    tier outcome
    standing { rank score player { id } }
    cohort { bucket tier number closed promotedThrough demotedFrom entries { rank score player { id } } }
  }
}`;

interface Row {
  rank: number;
  score: number;
  player: { id: string };
}
interface View {
  tier: string;
  outcome: string | null;
  standing: Row | null;
  cohort: { bucket: string; tier: string; number: number; closed: boolean; promotedThrough: number; demotedFrom: number | null; entries: Row[] } | null;
}

// ---- the oracle ----------------------------------------------------------------------------

/** What the test sent to one board: each player's best score, and the order their first results arrived in. */
class Sent {
  readonly best = new Map<string, number>();
  readonly arrival: string[] = [];
  readonly hidden = new Set<string>();

  add(playerId: string, score: number): void {
    if (!this.best.has(playerId)) this.arrival.push(playerId);
    this.best.set(playerId, Math.max(this.best.get(playerId) ?? -1, score));
  }

  /** The player's view as the rules make it: Bronze, the cohort of their arrival, ranked by score. */
  view(playerId: string, round = ROUND_1): View {
    const at = this.arrival.indexOf(playerId);
    if (at < 0) return { tier: 'Bronze', outcome: null, standing: null, cohort: null };
    const number = Math.floor(at / LEAGUE.cohortSize) + 1;
    const members = this.arrival.slice((number - 1) * LEAGUE.cohortSize, number * LEAGUE.cohortSize).filter((id) => !this.hidden.has(id));
    const entries = members
      .map((id) => ({ id, score: this.best.get(id)! }))
      .sort((a, b) => b.score - a.score)
      .map(({ id, score }, i) => ({ rank: i + 1, score, player: { id } }));
    // Bronze is neither the first tier (it promotes) nor has a tier below (it demotes nobody).
    const promotedThrough = Math.min(LEAGUE.promote, entries.length);
    const standing = entries.find((entry) => entry.player.id === playerId) ?? null;
    return {
      tier: 'Bronze',
      outcome: standing === null || standing.rank > promotedThrough ? 'STAYED' : 'PROMOTED',
      standing,
      cohort: { bucket: round, tier: 'Bronze', number, closed: false, promotedThrough, demotedFrom: null, entries },
    };
  }
}

// ---- helpers -------------------------------------------------------------------------------

let matches = 0;
async function submit(t: TestApp, sent: Sent, board: string, playerId: string, score: number): Promise<void> {
  const answer = await t.server(SUBMIT, { input: { board, playerId, score, matchId: `m${++matches}` } });
  expect(answer.errors).toBeUndefined();
  sent.add(playerId, score);
}

async function createLeagueBoard(t: TestApp, id: string, league: typeof LEAGUE | null = LEAGUE): Promise<void> {
  const answer = await t.admin(CREATE, { input: { id, title: id, maxScore: 1_000_000, periods: ['DAILY'], topSize: 3, ...(league ? { league } : {}) } });
  expect(answer.errors).toBeUndefined();
}

interface Watch {
  views: View[];
  errors: { message: string; extensions?: { code?: string } }[];
  readonly ended: boolean;
  /** The client goes away. */
  stop(): Promise<void>;
}

/** One subscription over `transport`, collecting every view and error it gets until it ends or is stopped. */
function watch(transport: Transport, variables: { board: string; playerId: string }): Watch {
  const results = transport.subscribe({ query: COHORT_CHANGED, variables });
  const views: View[] = [];
  const errors: Watch['errors'] = [];
  let ended = false;
  const pulling = (async () => {
    try {
      for await (const result of results as AsyncIterable<GraphQLResponse<{ cohortChanged: View }>>) {
        if (result.errors) errors.push(...(result.errors as Watch['errors']));
        if (result.data) views.push(result.data.cohortChanged);
      }
    } catch (error) {
      errors.push(...(Array.isArray(error) ? (error as Watch['errors']) : [{ message: String(error) }]));
    } finally {
      ended = true;
    }
  })();
  return {
    views,
    errors,
    get ended() {
      return ended;
    },
    async stop() {
      await results.return?.();
      await pulling;
    },
  };
}

const last = (w: Watch): View | undefined => w.views.at(-1);

/** Waits until the watch's last view is `expected`; says what it got when it does not come. */
async function untilView(w: Watch, expected: () => View, what: string): Promise<void> {
  await until(
    () => JSON.stringify(last(w)) === JSON.stringify(expected()),
    15_000,
    () => `${what}: expected ${JSON.stringify(expected())}, last of ${w.views.length} views ${JSON.stringify(last(w))}, errors ${JSON.stringify(w.errors)}`,
  );
}

/**
 * Seven players through `writer` (Zoë the second of Bronze/2), then Zoë's watcher over `transport`
 * gets her first view, a member's change (P7, by `writer`) and a newcomer joining her cohort, which
 * has room: each equal to the oracle.
 */
async function followsZoe(writer: TestApp, transport: Transport, board: string): Promise<void> {
  const sent = new Sent();
  for (const [i, id] of ['P1', 'p2', 'EU', 'P4', 'p5', 'Zoë', 'P7'].entries()) await submit(writer, sent, board, id, 1_000 - i * 10);
  const w = watch(transport, { board, playerId: 'Zoë' });
  try {
    await untilView(w, () => sent.view('Zoë'), 'the first view');
    await submit(writer, sent, board, 'P7', 2_000);
    await untilView(w, () => sent.view('Zoë'), "a member's change");
    await submit(writer, sent, board, '選手', 3);
    await untilView(w, () => sent.view('Zoë'), 'a newcomer');
  } finally {
    await w.stop();
    await transport.close();
  }
}

const SUBSCRIBING = TRANSPORTS.map((factory) => factory('http://unused')).filter((transport) => transport.carries.subscription);

// ---- over each transport -------------------------------------------------------------------

describe.each(SUBSCRIBING.map((transport) => [transport.name]))('cohortChanged over %s', (name) => {
  const factory = TRANSPORTS.find((f) => f('http://unused').name === name)!;
  const clock = movableClock({ startsAt: START });
  const sent = new Sent();
  const board = 'League-EU';
  const flagged = `Fl-${name}`;
  let t: TestApp;
  let transport: Transport;
  const watches: Watch[] = [];
  const open = (playerId: string) => {
    const w = watch(transport, { board, playerId });
    watches.push(w);
    return w;
  };

  beforeAll(async () => {
    t = await startTestApp({ now: clock.now, seasonCloseIntervalMs: null });
    transport = factory(t.url);
    await createLeagueBoard(t, board);
    await createLeagueBoard(t, 'No-League', null);
    // Bronze/1 holds the board's top; Bronze/2 (watched) and Bronze/3 stay below it.
    const first = ['Ana', 'bob', 'EU', 'Zoë', '選手'];
    for (const [i, id] of first.entries()) await submit(t, sent, board, id, 900_000 - i * 1_000);
    const second = ['cy', flagged, 'Dee', 'eve', '🎲dice'];
    for (const [i, id] of second.entries()) await submit(t, sent, board, id, 100 + i * 10);
    for (const [i, id] of ['Gus', 'hal'].entries()) await submit(t, sent, board, id, 50 + i);
  });
  afterAll(async () => {
    for (const w of watches) await w.stop();
    await transport?.close();
    await t?.close();
  });

  it("sends the player's cohort at once, as the oracle ranks it", async () => {
    const dee = open('Dee');
    await untilView(dee, () => sent.view('Dee'), 'the first view');
    expect(dee.views).toHaveLength(1);
    expect(dee.views[0]!.cohort!.entries.map((entry) => entry.player.id)).toEqual(['🎲dice', 'eve', 'Dee', flagged, 'cy']);
  });

  it("sends a new view when a member's result moves the cohort, far below the board's top", async () => {
    const dee = watches[0]!;
    await submit(t, sent, board, 'cy', 145);
    await untilView(dee, () => sent.view('Dee'), "cy's new result");
    expect(dee.views.at(-1)!.cohort!.entries[0]!.player.id).toBe('cy');
    // Not a top change: the board's top three are Bronze/1's.
    const top = await t.gql<{ top: { entries: { player: { id: string } }[] } }>(
      'query($board: ID!) { top(board: $board, period: DAILY, limit: 3) { entries { player { id } } } }',
      {
        board,
      },
    );
    expect(top.data!.top.entries.map((entry) => entry.player.id)).toEqual(['Ana', 'bob', 'EU']);
  });

  it('ends a burst of changes at the oracle, with fewer views than changes', async () => {
    const dee = watches[0]!;
    const before = dee.views.length;
    const members = ['cy', 'Dee', 'eve', '🎲dice'];
    const burst = Array.from({ length: 40 }, (_, i) => ({ id: members[i % members.length]!, score: 200 + i }));
    await Promise.all(burst.map(({ id, score }) => t.server(SUBMIT, { input: { board, playerId: id, score, matchId: `burst-${name}-${score}` } })));
    for (const { id, score } of burst) sent.add(id, score);
    await untilView(dee, () => sent.view('Dee'), 'after the burst');
    expect(dee.views.length - before).toBeLessThan(burst.length);
  });

  it('sends a player not yet placed their placement once their first result places them; their cohort sees them join', async () => {
    const newcomer = open('Newcomer-ß');
    const gus = open('Gus');
    await untilView(newcomer, () => sent.view('Newcomer-ß'), 'not placed');
    expect(newcomer.views[0]).toEqual({ tier: 'Bronze', outcome: null, standing: null, cohort: null });
    await untilView(gus, () => sent.view('Gus'), "Gus's first view");
    await submit(t, sent, board, 'Newcomer-ß', 77);
    await untilView(newcomer, () => sent.view('Newcomer-ß'), 'placed');
    expect(newcomer.views.at(-1)!.cohort!.number).toBe(3);
    await untilView(gus, () => sent.view('Gus'), 'a newcomer joins Bronze/3');
  });

  it('takes a flagged member out of the cohort, the zones counting the others', async () => {
    const dee = watches[0]!;
    const flaggedOwn = open(flagged);
    await untilView(flaggedOwn, () => sent.view(flagged), "the flagged player's own first view");
    const flag = await t.admin(FLAG, { playerId: flagged });
    expect(flag.errors).toBeUndefined();
    sent.hidden.add(flagged);
    await untilView(dee, () => sent.view('Dee'), 'the flag');
    expect(dee.views.at(-1)!.cohort!.entries.map((entry) => entry.player.id)).not.toContain(flagged);
    // The flagged player still sees their cohort, without a standing of their own, staying where they are.
    await untilView(flaggedOwn, () => sent.view(flagged), "the flagged player's own view");
  });

  it("sends the round's closed view, then the player's placement in the next round", async () => {
    const dee = watches[0]!;
    const final = sent.view('Dee');
    // eve (second of Bronze/2: PROMOTED) plays the next round before this one closes: she waits for its close to place her.
    const eve = open('eve');
    await untilView(eve, () => sent.view('eve'), "eve's first view");
    expect(sent.view('eve').outcome).toBe('PROMOTED');
    const roundEnd = new Date(`${ROUND_2}T00:00:00.000Z`).getTime();
    clock.advance(roundEnd + 30_000 - clock.now().getTime());
    await submit(t, new Sent(), board, 'eve', 7);
    clock.advance(AFTER_CLOSE.getTime() - clock.now().getTime());
    await closeBuckets(t, board, 'DAILY', [ROUND_1]);
    await until(
      () => last(eve)?.cohort?.bucket === ROUND_2,
      15_000,
      () => `eve placed in ${ROUND_2} by the close: ${JSON.stringify(eve.views)}`,
    );
    expect(eve.views.at(-2)).toEqual({ ...sent.view('eve'), cohort: { ...sent.view('eve').cohort!, closed: true } });
    expect(last(eve)).toMatchObject({ tier: 'Silver', standing: { score: 7, player: { id: 'eve' } }, cohort: { tier: 'Silver', number: 1, closed: false } });
    const closedView = { ...final, cohort: { ...final.cohort!, closed: true } };
    // Dee is third of Bronze/2 after the burst: STAYED; the next round's tier is Bronze, not placed.
    expect(final.outcome).toBe('STAYED');
    const next: View = { tier: 'Bronze', outcome: null, standing: null, cohort: null };
    await untilView(dee, () => next, 'the next round');
    expect(dee.views.at(-2)).toEqual(closedView);
    // A player promoted by the close: their next round is in Silver.
    const promoted = open('🎲dice');
    await untilView(promoted, () => ({ tier: 'Silver', outcome: null, standing: null, cohort: null }), "a promoted player's next round");
    await submit(t, new Sent(), board, '🎲dice', 5);
    await until(
      () => last(promoted)?.cohort?.bucket === ROUND_2,
      15_000,
      () => `placed in ${ROUND_2}: ${JSON.stringify(promoted.views)}`,
    );
    // Beside eve in Silver/1, they are in its promotion zone (promote 2 over two visible players).
    expect(last(promoted)).toMatchObject({ tier: 'Silver', outcome: 'PROMOTED', cohort: { tier: 'Silver', number: 1, closed: false } });
  });

  it("answers the contract's error codes for bad arguments", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ board: 'No-Such-Board', playerId: 'Dee' }, 'NOT_FOUND'],
      [{ board: 'No-League', playerId: 'Dee' }, 'BAD_USER_INPUT'],
      [{ board, playerId: 'bad\u0000id' }, 'BAD_USER_INPUT'],
      [{ board, playerId: 'x'.repeat(1_000) }, 'BAD_USER_INPUT'],
    ];
    for (const [variables, code] of cases) {
      const w = watch(transport, variables as { board: string; playerId: string });
      await until(() => w.errors.length > 0 || w.ended, 15_000, `an answer to ${JSON.stringify(variables)}`);
      await w.stop();
      expect(w.views, JSON.stringify(variables)).toEqual([]);
      expect(w.errors[0]?.extensions?.code, JSON.stringify(w.errors)).toBe(code);
    }
  });

  it('ends cleanly when the client goes: no watcher left, the channel unsubscribed, /metrics counting them', async () => {
    const feed = t.app.parts.cohortFeed;
    expect(feed.stats().viewers).toBeGreaterThan(0);
    const metrics = async () => {
      const text = await (await fetch(`${t.url}/metrics`)).text();
      const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
      return { subscribers: value('leaderboard_cohort_changed_subscribers'), sent: value('leaderboard_cohort_changed_events_total') };
    };
    const before = await metrics();
    expect(before.subscribers).toBe(feed.stats().viewers);
    expect(before.sent).toBeGreaterThanOrEqual(watches.reduce((views, w) => views + w.views.length, 0));
    for (const w of watches) await w.stop();
    watches.length = 0;
    await until(
      () => feed.stats().viewers === 0 && feed.stats().boards === 0,
      15_000,
      () => `watchers left: ${JSON.stringify(feed.stats())}`,
    );
    expect((await metrics()).subscribers).toBe(0);
    const channel = t.app.parts.index.leagueChannel(board);
    await until(async () => ((await t.redis.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number])[1] === 0, 15_000, 'the league channel unsubscribed');
    // The service still answers a new watcher.
    const again = open('Dee');
    await until(() => again.views.length > 0, 15_000, 'a new watcher');
  });
});

// ---- two processes ---------------------------------------------------------------------------

describe('cohortChanged across processes', () => {
  const clock = movableClock({ startsAt: START });
  let reader: TestApp;
  let writer: TestApp;

  beforeAll(async () => {
    // As test/helpers/two-processes.ts starts them, with the test's clock: the reader runs no closer.
    reader = await startTestApp({ now: clock.now, seasonCloseIntervalMs: null });
    writer = await startTestApp({ now: clock.now, shareStoresOf: { databaseUrl: reader.databaseUrl, keyPrefix: reader.keyPrefix } });
  });
  afterAll(async () => {
    await writer?.close();
    await reader?.close();
  });

  it.each(SUBSCRIBING.map((transport) => [transport.name]))("a second process's write reaches a watcher of the first, over %s", async (name) => {
    const board = `League-Two-${SUBSCRIBING.findIndex((transport) => transport.name === name)}`;
    await createLeagueBoard(writer, board);
    // Read by the reader, written by the writer.
    await followsZoe(writer, TRANSPORTS.find((f) => f('http://unused').name === name)!(reader.url), board);
  });
});

// ---- the index catch-up ---------------------------------------------------------------------

describe('cohortChanged after the index catch-up', () => {
  const clock = movableClock({ startsAt: START });
  const sent = new Sent();
  const board = 'League-Catch-Up';
  let t: TestApp;
  let transport: Transport;
  let ana: Watch | undefined;

  beforeAll(async () => {
    t = await startTestApp({ now: clock.now, seasonCloseIntervalMs: null, indexCatchUp: { intervalMs: 200, graceMs: 0 } });
    transport = TRANSPORTS.find((f) => f('http://unused').name === SUBSCRIBING[0]!.name)!(t.url);
    await createLeagueBoard(t, board);
    for (const [i, id] of ['Ana', 'bo', 'Ĉe', 'EU-4', '🎲5'].entries()) await submit(t, sent, board, id, 100 + i * 10);
  });
  afterAll(async () => {
    await ana?.stop();
    await transport?.close();
    await t?.close();
  });

  it("a result a process committed but died before writing to the index reaches the cohort's watchers once the catch-up applies it", async () => {
    ana = watch(transport, { board, playerId: 'Ana' });
    await untilView(ana, () => sent.view('Ana'), 'the first view');
    // What a crash right after the commit leaves: the result in the log, the ALL_TIME board score, the backlog row.
    const at = clock.now().toISOString();
    await t.database.sql.begin(async (tx) => {
      await tx`insert into results (board_id, match_id, player_id, score, achieved_at) values (${board}, 'crash-1', 'bo', 500, ${at}::timestamptz)`;
      await tx`insert into result_keys (board_id, player_id, match_id, achieved_at) values (${board}, 'bo', 'crash-1', ${at}::timestamptz)`;
      await tx`update board_scores set score = 500, reached_at = ${at}::timestamptz
               where board_id = ${board} and period = 'ALL_TIME' and bucket = 'all' and region = '' and player_id = 'bo'`;
      await tx`insert into index_backlog (board_ids, player_ids) values (array[${board}], array['bo'])`;
    });
    sent.add('bo', 500);
    await untilView(ana, () => sent.view('Ana'), "bo's result, applied by the catch-up");
    expect(ana.views.at(-1)!.cohort!.entries[0]).toEqual({ rank: 1, score: 500, player: { id: 'bo' } });
  });
});

// ---- on a Redis Cluster ------------------------------------------------------------------------

describe('cohortChanged on a Redis Cluster', () => {
  const clock = movableClock({ startsAt: START });
  let cluster: RedisClusterFixture;
  let t: TestApp;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
    t = await startTestApp({ now: clock.now, seasonCloseIntervalMs: null, redisCluster: cluster });
  });
  afterAll(async () => {
    await t?.close();
    await cluster?.stop();
  });

  it("the board's league channel reaches the watchers, on a board of 8 shards", async () => {
    const board = 'League-Cluster';
    const answer = await t.admin(CREATE, {
      input: { id: board, title: board, maxScore: 1_000_000, periods: ['DAILY'], topSize: 3, shards: 8, league: LEAGUE },
    });
    expect(answer.errors).toBeUndefined();
    await followsZoe(t, TRANSPORTS.find((f) => f('http://unused').name === 'graphql-ws')!(t.url), board);
  });
});

// ---- bounded as every subscription ----------------------------------------------------------

describe('cohortChanged is bounded as topChanged is', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ requestLimits: { subscriptionsPerSocket: 2, subscriptionsPerClient: 3 } });
    await createLeagueBoard(t, 'Bounded');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('per socket and per client address (WebSocket and server-sent events together): RATE_LIMITED past either cap', async () => {
    const byName = (name: string) => TRANSPORTS.find((f) => f('http://unused').name === name)!(t.url);
    const ws = byName('graphql-ws');
    const sse = byName('SSE GET');
    const answered = async (w: Watch) => {
      await until(() => w.views.length > 0 || w.errors.length > 0, 15_000, 'a first answer');
      return w.errors[0]?.extensions?.code ?? 'ok';
    };
    const opened: Watch[] = [];
    const codes: string[] = [];
    try {
      for (const [transport, playerId] of [
        [ws, 'A'],
        [ws, 'b'],
        [ws, 'C'],
        [sse, 'Zoë'],
        [sse, 'EU'],
      ] as const) {
        const w = watch(transport, { board: 'Bounded', playerId });
        opened.push(w);
        codes.push(await answered(w));
      }
      // The socket's third is past its cap of 2; the client's fifth past its cap of 3 (the refused one never counted).
      expect(codes).toEqual(['ok', 'ok', 'RATE_LIMITED', 'ok', 'RATE_LIMITED']);
    } finally {
      for (const w of opened) await w.stop();
      await ws.close();
    }
  });
});

// ---- the coalescing, on the feed itself ------------------------------------------------------

describe('the cohort feed coalesces', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A subscriber connection as the feed uses one: it hears `smessage` and counts subscriptions. */
  function fakeSubscriber() {
    const emitter = new EventEmitter() as EventEmitter & { status: string; ssubscribe(c: string): Promise<number>; sunsubscribe(c: string): Promise<number> };
    emitter.status = 'ready';
    emitter.ssubscribe = async () => 1;
    emitter.sunsubscribe = async () => 0;
    return emitter;
  }

  it('reads a watched cohort at most once per 100 ms, once for all its watchers, however many changes come', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
    const board = { id: 'Coalesced', league: LEAGUE, closeGraceSeconds: 0 } as unknown as Board;
    const round = {
      board,
      league: LEAGUE,
      region: null,
      frozen: null,
      bucket: { period: 'DAILY', label: ROUND_1, start: new Date('2037-05-31T00:00:00Z'), end: new Date('2037-06-01T00:00:00Z') },
    } as unknown as LeagueRound;
    let score = 0;
    let reads = 0;
    const cohort = (): CohortView => ({
      boardId: board.id,
      bucket: ROUND_1,
      tier: 'Bronze',
      tierIndex: 2,
      number: 1,
      entries: ['a', 'b'].map((id, i) => ({
        playerId: id,
        rank: i + 1,
        score: id === 'a' ? score : -1,
        percentile: 0,
        source: { recorded: undefined } as never,
      })),
      promotedThrough: 2,
      demotedFrom: null,
      closed: false,
      endsAt: null,
    });
    const leagues: Pick<LeagueReadSides, 'placement' | 'forRequest'> = {
      placement: async ({ playerId }) => {
        const view = cohort();
        return { tier: 'Bronze', cohort: view, standing: view.entries.find((e) => e.playerId === playerId)!, outcome: 'PROMOTED', round };
      },
      forRequest: () => ({
        placement: () => Promise.reject(new Error('not used')),
        tiers: () => Promise.reject(new Error('not used')),
        cohort: async () => {
          reads++;
          return cohort();
        },
      }),
    };
    const subscriber = fakeSubscriber();
    const feed = createCohortFeed({
      subscriber: subscriber as unknown as RedisClient,
      index: { leagueChannel: (id) => `channel:${id}` },
      leagues,
      profiles: { load: async (ids) => ids.map((id) => ({ id, displayName: null, avatarUrl: null })) },
      log: createLogger('silent'),
      now: () => new Date('2037-05-31T13:00:00Z'),
    });
    const viewers = await Promise.all(['a', 'b', 'a', 'b', 'a'].map((playerId) => feed.watch({ board: board.id, playerId })));
    const received = viewers.map(() => 0);
    viewers.forEach((viewer, i) => {
      void (async () => {
        for await (const _ of viewer) received[i]!++;
      })();
    });
    // A change a millisecond for a second: a thousand messages naming a member.
    for (let ms = 0; ms < 1_000; ms++) {
      score = ms;
      subscriber.emit('smessage', 'channel:Coalesced', encodeLeagueSignal({ round: ROUND_1, players: ['a'] }));
      await vi.advanceTimersByTimeAsync(1);
    }
    await vi.advanceTimersByTimeAsync(200);
    // One read at once, then at most one per 100 ms window; five watchers share each.
    expect(reads).toBeGreaterThanOrEqual(2);
    expect(reads).toBeLessThanOrEqual(11);
    for (const count of received) expect(count).toBeLessThanOrEqual(reads + 1);
    // A change naming a player of no watched cohort of a full cohort's round reads nothing.
    const before = reads;
    subscriber.emit('smessage', 'channel:Coalesced', encodeLeagueSignal({ round: '2037-05-30', players: ['a'] }));
    await vi.advanceTimersByTimeAsync(200);
    expect(reads).toBe(before);
    feed.close();
  });

  it("keeps a round's closed view for a slow reader: the next round's views replace each other, never it", async () => {
    let closedCalls = 0;
    const out = new LatestValue<string>(() => closedCalls++);
    out.offer('open view');
    out.offer('closed view', { keep: true });
    out.offer('next round, not placed');
    out.offer('next round, placed');
    out.finish();
    const pulled: string[] = [];
    for await (const view of out) pulled.push(view);
    expect(pulled).toEqual(['closed view', 'next round, placed']);
    expect(closedCalls).toBe(1);
  });
});
