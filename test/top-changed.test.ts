import { watchCommands } from './helpers/monitor.js';
import { type Client, createClient } from 'graphql-ws';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { BoardBucket } from '../src/ranking/index.js';
import { createTopCache } from '../src/ranking/top-cache.js';
import { createHash } from 'node:crypto';
import { readProfilesLua } from '../src/profiles/scripts.js';
import { createRedis } from '../src/redis.js';
import { rankScores } from './helpers/oracle.js';
import { type OwnRedis, startOwnRedis } from './helpers/redis-server.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';

/**
 * The live path: the write script announces a top change only when the top changed; each process
 * subscribes once per watched bucket, coalesces, reads once and fans out; views reach viewers over
 * WebSocket (graphql-ws) and server-sent events, on this process and on another one.
 */

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Entry {
  rank: number;
  score: number;
  player: { id: string };
}
interface View {
  boardId: string;
  size: number;
  asOf: string;
  entries: Entry[];
}

const TOP_CHANGED = `subscription($board: ID!, $limit: Int!) {
  topChanged(board: $board, limit: $limit) { boardId size asOf entries { rank score player { id } } }
}`;
const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`;
const SUBMIT = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }`;

let matches = 0;
async function submit(t: TestApp, board: string, playerId: string, score: number, matchId = `m${++matches}`) {
  const answer = await t.server<{ submitScore: { duplicate: boolean } }>(SUBMIT, { input: { board, playerId, score, matchId } });
  expect(answer.errors).toBeUndefined();
  return answer.data!.submitScore;
}

async function createBoard(t: TestApp, input: Record<string, unknown>) {
  const answer = await t.admin(CREATE, { input: { title: String(input.id), maxScore: 1_000_000, ...input } });
  expect(answer.errors).toBeUndefined();
}

/** The oracle's top `limit` of the best score per player (every test score is distinct). */
const oracleTop = (best: Map<string, number>, limit: number) => rankScores(best).slice(0, limit);
const rowsOf = (view: View) => view.entries.map((entry) => [entry.player.id, entry.score] as [string, number]);

/** One graphql-ws subscription, collecting every view and error it gets. */
function watch(t: TestApp, variables: Record<string, unknown>) {
  const client: Client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  const views: View[] = [];
  const errors: { message: string; extensions?: { code?: string } }[] = [];
  let completed = false;
  const unsubscribe = client.subscribe<{ topChanged: View }>(
    { query: TOP_CHANGED, variables },
    {
      next: (result) => {
        if (result.errors) errors.push(...(result.errors as typeof errors));
        if (result.data) views.push(result.data.topChanged);
      },
      error: (error) => {
        errors.push(...(Array.isArray(error) ? (error as typeof errors) : [{ message: String(error) }]));
        completed = true;
      },
      complete: () => {
        completed = true;
      },
    },
  );
  return {
    views,
    errors,
    get completed() {
      return completed;
    },
    /** Waits for a view whose rows are `rows`. */
    async reach(rows: [string, number][], timeoutMs = 5_000) {
      await until(() => views.some((view) => JSON.stringify(rowsOf(view)) === JSON.stringify(rows)), timeoutMs, `view ${JSON.stringify(rows)}`, 10);
    },
    async close() {
      unsubscribe();
      await client.dispose();
    },
  };
}

/** The subscribers of a shard channel (topChanged uses sharded pub/sub: SSUBSCRIBE, SPUBLISH). */
async function numsub(redis: Redis, channel: string): Promise<number> {
  const reply = (await redis.pubsub('SHARDNUMSUB', channel)) as [string, number];
  return Number(reply[1]);
}

describe('detection in the write script', () => {
  let t: TestApp;
  let listener: Redis;
  let publisher: Redis;
  const heard: string[] = [];
  let fences = 0;
  const channelOf = (board: string) => `${t.keyPrefix}lb:{${board}:ALL_TIME:all}#top`;

  /**
   * The messages heard on a board's channel since the last call: a marker published after the
   * writes comes back after every message they caused (one connection delivers in order).
   */
  async function announced(board: string): Promise<number> {
    const marker = `fence-${++fences}`;
    await publisher.spublish(channelOf(board), marker);
    await until(() => heard.includes(`${board}:${marker}`), 5_000, marker);
    const before = heard.splice(0, heard.indexOf(`${board}:${marker}`) + 1).slice(0, -1);
    return before.filter((message) => message.startsWith(`${board}:`)).length;
  }

  beforeAll(async () => {
    t = await startTestApp();
    await createBoard(t, { id: 'det', topSize: 3 });
    await createBoard(t, { id: 'race', topSize: 2, order: 'LOW_FIRST', aggregate: 'SUM', maxScore: 1_000 });
    // Plain clients without a prefix, so these name the channels in full (ioredis would prefix a
    // shard channel, as it does a key).
    listener = createRedis(REDIS_URL);
    publisher = createRedis(REDIS_URL);
    await Promise.all([listener.connect(), publisher.connect()]);
    listener.on('smessage', (channel: string, message: string) => {
      const board = /\{(\w+):/.exec(channel)![1]!;
      heard.push(`${board}:${message}`);
    });
    await listener.ssubscribe(channelOf('det'));
    await listener.ssubscribe(channelOf('race'));
  });
  afterAll(async () => {
    await listener.quit();
    await publisher.quit();
    await t.close();
  });

  it('entering the top publishes; a result far below it, a replay or a worse score does not', async () => {
    await submit(t, 'det', 'p1', 100);
    expect(await announced('det')).toBe(1);
    await submit(t, 'det', 'p2', 90);
    await submit(t, 'det', 'p3', 80);
    expect(await announced('det')).toBe(2);

    await submit(t, 'det', 'p4', 10); // fourth, outside the top 3
    await submit(t, 'det', 'p5', 5);
    expect(await announced('det')).toBe(0);

    await submit(t, 'det', 'p1', 100, 'm1'); // a replay
    expect(await announced('det')).toBe(0);
    await submit(t, 'det', 'p1', 50); // worse than p1's best: nothing moves
    expect(await announced('det')).toBe(0);

    await submit(t, 'det', 'p3', 85); // same place, a better score
    expect(await announced('det')).toBe(1);
    await submit(t, 'det', 'p4', 95); // from 4th to 2nd
    expect(await announced('det')).toBe(1);
  });

  it('leaving the top publishes (a SUM on a LOW_FIRST board only grows worse)', async () => {
    await submit(t, 'race', 'a', 10);
    await submit(t, 'race', 'b', 20);
    expect(await announced('race')).toBe(2);
    await submit(t, 'race', 'c', 30); // third of two
    expect(await announced('race')).toBe(0);
    await submit(t, 'race', 'a', 25); // a's total, 35, is now last: a left the top
    expect(await announced('race')).toBe(1);
  });

  it('flags, unflags, erasures and rebuilds that touch the top announce it; those that do not, do not', async () => {
    // The top 3 is now p1 100, p4 95, p2 90; p3 85 and p5 5 are below.
    await t.admin(`mutation { flagPlayer(playerId: "p4", reason: "test") { id } }`);
    expect(await announced('det')).toBe(1);
    await t.admin(`mutation { flagPlayer(playerId: "p5", reason: "test") { id } }`);
    expect(await announced('det')).toBe(0);
    await t.admin(`mutation { unflagPlayer(playerId: "p4") { id } }`);
    expect(await announced('det')).toBeGreaterThanOrEqual(1);
    await t.admin(`mutation { rebuildBoard(board: "det") }`);
    expect(await announced('det')).toBe(1);
    await t.admin(`mutation { deletePlayer(playerId: "p1") }`);
    expect(await announced('det')).toBe(1);
    await t.admin(`mutation { deletePlayer(playerId: "p5") }`);
    expect(await announced('det')).toBe(0);
  });
});

describe('topChanged over WebSocket', () => {
  let t: TestApp;
  let plain: Redis;
  const best = new Map<string, number>();
  const score = async (playerId: string, value: number) => {
    await submit(t, 'live', playerId, value);
    best.set(playerId, Math.max(best.get(playerId) ?? -1, value));
  };

  beforeAll(async () => {
    t = await startTestApp();
    plain = createRedis(REDIS_URL);
    await plain.connect();
    await createBoard(t, { id: 'live', topSize: 5 });
    for (let i = 0; i < 8; i++) await score(`seed${i}`, 1_000 + i * 10);
  });
  afterAll(async () => {
    await plain.quit();
    await t.close();
  });

  it('the first view is the current top, at once', async () => {
    const started = Date.now();
    const viewer = watch(t, { board: 'live', limit: 3 });
    await until(() => viewer.views.length > 0, 2_000, 'the first view');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(rowsOf(viewer.views[0]!)).toEqual(oracleTop(best, 3));
    expect(viewer.views[0]!.size).toBe(best.size);
    await viewer.close();
  });

  it('a burst of 50 top changes gives far fewer views, the last equal to the final top; one Redis subscription per bucket', async () => {
    const viewer = watch(t, { board: 'live', limit: 5 });
    const small = watch(t, { board: 'live', limit: 2 });
    await until(() => viewer.views.length > 0 && small.views.length > 0, 2_000, 'the first views');
    expect(await numsub(plain, `${t.keyPrefix}lb:{live:ALL_TIME:all}#top`)).toBe(1);
    expect(t.app.parts.topFeed.stats()).toEqual({ buckets: 1, viewers: 2 });

    // 50 submissions, 10 in flight at a time, each a change of the top 5.
    const started = Date.now();
    for (let i = 0; i < 50; i += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, j) => score(`burst${(i + j) % 7}`, 2_000 + 10 * (i + j))));
    }
    const final = oracleTop(best, 5);
    await viewer.reach(final);
    await small.reach(final.slice(0, 2));
    const elapsed = Date.now() - started;
    const events = viewer.views.length - 1;
    expect(events).toBeGreaterThanOrEqual(1);
    // At most one read per 100 ms (and a view per read), however fast the changes come.
    expect(events).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 1);
    expect(events).toBeLessThan(25);
    expect(rowsOf(viewer.views.at(-1)!)).toEqual(final);
    expect(rowsOf(small.views.at(-1)!)).toEqual(final.slice(0, 2));

    // A change below a viewer's slice reaches only the viewers whose slice it changes. Each
    // viewer's views come in order, so what arrived before a later change's view is all there is:
    // no waiting for nothing to happen.
    const viewerBefore = viewer.views.length;
    const smallBefore = small.views.length;
    await score('fifth', final[4]![1] + 5);
    const belowSmall = oracleTop(best, 5);
    await viewer.reach(belowSmall);
    await score('first', final[0]![1] + 5);
    const top = oracleTop(best, 5);
    await viewer.reach(top);
    await small.reach(top.slice(0, 2));
    // Nothing after the burst's final view but the two changes; nothing for the small viewer but the second.
    expect(viewer.views.slice(viewerBefore).map(rowsOf)).toEqual([belowSmall, top]);
    expect(small.views.slice(smallBefore).map(rowsOf)).toEqual([top.slice(0, 2)]);
    // Consecutive views always differ: an unchanged slice is not sent again.
    for (const { views } of [viewer, small]) for (let i = 1; i < views.length; i++) expect(rowsOf(views[i]!)).not.toEqual(rowsOf(views[i - 1]!));

    await viewer.close();
    await small.close();
    await until(() => t.app.parts.topFeed.stats().buckets === 0, 2_000, 'the unsubscription');
    expect(await numsub(plain, `${t.keyPrefix}lb:{live:ALL_TIME:all}#top`)).toBe(0);
  });

  it('arguments are checked like top: a limit from 1 to the board topSize, a board that exists', async () => {
    for (const [variables, code] of [
      [{ board: 'live', limit: 0 }, 'BAD_USER_INPUT'],
      [{ board: 'live', limit: 6 }, 'BAD_USER_INPUT'],
      [{ board: 'nope', limit: 3 }, 'NOT_FOUND'],
    ] as const) {
      const viewer = watch(t, variables);
      await until(() => viewer.completed, 2_000, `the refusal of ${JSON.stringify(variables)}`);
      expect(viewer.views).toEqual([]);
      expect(viewer.errors[0]?.extensions?.code).toBe(code);
      await viewer.close();
    }
    expect(t.app.parts.topFeed.stats()).toEqual({ buckets: 0, viewers: 0 });
  });

  it('a slow consumer gets the latest view, not every one in between', async () => {
    const { topFeed, boards } = t.app.parts;
    const board = (await boards.find('live'))!;
    const at = { board, bucket: { period: 'ALL_TIME' as const, label: 'all', start: board.epoch, end: null }, region: null };
    const views = await topFeed.watch(at, 5);
    const first = await views.next();
    expect(first.done).toBe(false);
    // A prompt consumer beside it, to know when the last view has gone out.
    const prompt = await topFeed.watch(at, 5);
    const promptViews: [string, number][][] = [];
    void (async () => {
      for await (const event of prompt) promptViews.push(event.view.places.map((p) => [p.playerId, p.score]));
    })();
    const rowsIn = (view: { places: { playerId: string; score: number }[] }) => view.places.map((p): [string, number] => [p.playerId, p.score]);
    // Three changes, each a view of its own (the prompt consumer got it), while the slow consumer does not pull.
    const promptSaw = (rows: [string, number][]) => promptViews.some((view) => JSON.stringify(view) === JSON.stringify(rows));
    for (let i = 0; i < 3; i++) {
      await score('slow', 3_000 + i);
      const rows = oracleTop(best, 5);
      await until(() => promptSaw(rows), 5_000, `the view after change ${i + 1}`, 10);
    }
    const last = oracleTop(best, 5);
    const next = await views.next();
    expect(next.done).toBe(false);
    if (!next.done) expect(rowsIn(next.value.view)).toEqual(last);
    // Nothing else is pending: the views in between were dropped. A fourth change is the next
    // view the slow consumer gets, not one of the earlier ones.
    await score('slow', 3_010);
    const fourth = oracleTop(best, 5);
    await until(() => promptSaw(fourth), 5_000, 'the view after the fourth change', 10);
    const after = await views.next();
    expect(after.done).toBe(false);
    if (!after.done) expect(rowsIn(after.value.view)).toEqual(fourth);
    await prompt.return!();
    const pending = views.next();
    await views.return!();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(topFeed.stats()).toEqual({ buckets: 0, viewers: 0 });
  });

  it('counts subscribers and views sent in /metrics', async () => {
    const viewer = watch(t, { board: 'live', limit: 1 });
    await until(() => viewer.views.length > 0, 2_000, 'the first view');
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toMatch(/^leaderboard_top_changed_subscribers 1$/m);
    expect(Number(/^leaderboard_top_changed_events_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0);
    await viewer.close();
  });
});

describe('topChanged player profiles', () => {
  let t: TestApp;
  /** The profile reads the app's own Redis connection sent (readProfiles, as MONITOR lists them), each as the ids it asked. */
  const profileReads: string[][] = [];
  const readProfilesSha = createHash('sha1').update(readProfilesLua).digest('hex');
  let monitor: { close(): void } | undefined;
  let redis: OwnRedis;
  beforeAll(async () => {
    // A Redis of the test's own, so that MONITOR lists this app's commands and little else.
    redis = await startOwnRedis();
    t = await startTestApp({ redisUrl: redis.url });
    const port = (t.redis as Redis).stream.localPort;
    monitor = await watchCommands(redis.port, (args, source) => {
      const script = args[0]?.toLowerCase();
      if (source.endsWith(`:${port}`) && (script === 'evalsha' || script === 'eval') && (args[1] === readProfilesSha || args[1] === readProfilesLua)) {
        profileReads.push(args);
      }
    });
    await createBoard(t, { id: 'names', topSize: 3 });
    await t.server(`mutation { upsertPlayer(input: { id: "ann", displayName: "Ann" }) { id } }`);
    await submit(t, 'names', 'ann', 10);
  });
  afterAll(async () => {
    monitor?.close();
    await t?.close();
    await redis?.kill();
  });

  it('are read once per view for every viewer of the process, and a rename shows with the next view', async () => {
    const query = `subscription { topChanged(board: "names", limit: 3) { entries { score player { id displayName } } } }`;
    const clients = Array.from({ length: 20 }, () =>
      createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 }),
    );
    const views: { entries: { score: number; player: { id: string; displayName: string | null } }[] }[][] = clients.map(() => []);
    const stops = clients.map((client, i) =>
      client.subscribe<{ topChanged: (typeof views)[number][number] }>(
        { query },
        {
          next: (result) => void (result.data && views[i]!.push(result.data.topChanged)),
          error: () => undefined,
          complete: () => undefined,
        },
      ),
    );
    await until(() => views.every((list) => list.length === 1), 5_000, 'every first view');
    expect(views[0]![0]!.entries).toEqual([{ score: 10, player: { id: 'ann', displayName: 'Ann' } }]);

    await t.server(`mutation { upsertPlayer(input: { id: "bob", displayName: "Bob" }) { id } }`);
    await t.server(`mutation { upsertPlayer(input: { id: "ann", displayName: "Anna" }) { id } }`);
    profileReads.length = 0;
    await submit(t, 'names', 'bob', 20);
    await until(() => views.every((list) => list.length === 2), 5_000, 'every second view');
    for (const list of views) {
      expect(list[1]!.entries).toEqual([
        { score: 20, player: { id: 'bob', displayName: 'Bob' } },
        { score: 10, player: { id: 'ann', displayName: 'Anna' } },
      ]);
    }
    // One profile read named the view's players, for all twenty viewers (the submission's own
    // read of its new player's profile, if any, names bob alone).
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(profileReads.filter((args) => args.includes('ann'))).toHaveLength(1);
    stops.forEach((stop) => stop());
    await Promise.all(clients.map(async (client) => client.dispose()));
  });
});

describe('topChanged across two processes', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({ shareStoresOf: { databaseUrl: a.databaseUrl, keyPrefix: a.keyPrefix } });
    await createBoard(a, { id: 'duo', topSize: 3 });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('a score submitted through one process reaches the subscribers of the other, and its own', async () => {
    const onB = watch(b, { board: 'duo', limit: 3 });
    const onA = watch(a, { board: 'duo', limit: 3 });
    await until(() => onB.views.length > 0 && onA.views.length > 0, 2_000, 'the first views');
    expect(rowsOf(onB.views[0]!)).toEqual([]);

    await submit(a, 'duo', 'x', 7);
    await onB.reach([['x', 7]]);
    await submit(b, 'duo', 'y', 9);
    await onA.reach([
      ['y', 9],
      ['x', 7],
    ]);
    await onB.reach([
      ['y', 9],
      ['x', 7],
    ]);
    // B's shared top cache was refreshed by the event: its `top` readers see the change at once.
    const top = await b.gql<{ top: { entries: Entry[] } }>(`{ top(board: "duo", limit: 3) { entries { score player { id } } } }`);
    expect(top.data!.top.entries.map((entry) => [entry.player.id, entry.score])).toEqual([
      ['y', 9],
      ['x', 7],
    ]);
    await onA.close();
    await onB.close();
  });
});

describe('topChanged over server-sent events', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    await createBoard(t, { id: 'sse', topSize: 3 });
    await submit(t, 'sse', 'first', 1);
  });
  afterAll(() => t.close());

  it('streams the current view at once, then each change, and ends when the client goes', async () => {
    const abort = new AbortController();
    const query = `subscription { topChanged(board: "sse", limit: 2) { boardId entries { score player { id } } } }`;
    const response = await fetch(`${t.url}/graphql?query=${encodeURIComponent(query)}`, {
      headers: { accept: 'text/event-stream' },
      signal: abort.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');

    const views: [string, number][][] = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        const reader = response.body!.getReader();
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
          buffer += decoder.decode(chunk.value, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const event = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = event
              .split('\n')
              .filter((line) => line.startsWith('data:'))
              .map((line) => line.slice(5).trim())
              .join('');
            if (!event.startsWith('event: next') || !data) continue;
            const payload = JSON.parse(data) as { data: { topChanged: { entries: { score: number; player: { id: string } }[] } } };
            views.push(payload.data.topChanged.entries.map((entry) => [entry.player.id, entry.score]));
          }
        }
      } catch {
        // aborted
      }
    })();

    await until(() => views.length === 1, 2_000, 'the first view');
    expect(views[0]).toEqual([['first', 1]]);
    await submit(t, 'sse', 'second', 5);
    await until(() => views.length === 2, 2_000, 'the second view');
    expect(views[1]).toEqual([
      ['second', 5],
      ['first', 1],
    ]);

    abort.abort();
    await reading;
    await until(() => t.app.parts.topFeed.stats().viewers === 0, 2_000, 'the viewer to leave');
  });
});

describe("the shared top cache's refresh", () => {
  const at = { board: { id: 'b' }, bucket: { period: 'ALL_TIME', label: 'all' }, region: null } as unknown as BoardBucket;

  it('never joins a read that started before it; refreshes meanwhile share the next read; top readers get the result', async () => {
    let version = 0;
    const reads: number[] = [];
    const cache = createTopCache(async (_at, limit) => {
      const seen = ++version;
      reads.push(limit);
      // An async read answers a turn later at the soonest: the refreshes below are asked while it is under way.
      // `size` tells the reads apart; the places are there so that a view covers its limit.
      return { size: 1_000 + seen, places: Array.from({ length: limit }, (_, i) => ({ playerId: `p${i}`, rank: i + 1, score: 0, reachedAt: new Date(0) })) };
    });
    const reading = cache.top(at, 5); // read 1 starts
    const [r1, r2, r3] = await Promise.all([cache.refresh(at, 5), cache.refresh(at, 5), cache.refresh(at, 3), reading]);
    expect(reads).toEqual([5, 5]); // the top read, then one shared refresh
    expect([r1.size, r2.size, r3.size]).toEqual([1_002, 1_002, 1_002]);
    expect((await cache.top(at, 5)).size).toBe(1_002); // served from the refreshed view
    expect(reads).toHaveLength(2);
    expect((await cache.refresh(at, 5)).size).toBe(1_003); // nothing under way: reads at once
  });
});

describe('stopping with live subscriptions', () => {
  it('ends server-sent event streams at once rather than waiting out the shutdown timeout', async () => {
    const own = await startTestApp();
    const query = `subscription { topChanged(board: "global", limit: 1) { size } }`;
    const response = await fetch(`${own.url}/graphql?query=${encodeURIComponent(query)}`, { headers: { accept: 'text/event-stream' } });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('event: next')) text += decoder.decode((await reader.read()).value, { stream: true });
    expect(own.app.parts.topFeed.stats().viewers).toBe(1);

    const started = Date.now();
    const ended = (async () => {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
    })().catch(() => undefined);
    await own.close();
    expect(Date.now() - started).toBeLessThan(3_000);
    await ended;
    expect(own.app.parts.topFeed.stats()).toEqual({ buckets: 0, viewers: 0 });
  });
});
