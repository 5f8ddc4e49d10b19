import { isDeepStrictEqual } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { settle } from './helpers/wait.js';

/**
 * TOP_CHANGED webhooks (issue 58): the view topChanged sends with limit = topSize, at most one a
 * second per bucket across processes, trailing edge. Every event is checked against an oracle of
 * the final top computed here from the scores submitted (HIGH_FIRST, BEST, every score distinct, so
 * ranks are plain positions), never against the service's own reads.
 */

const WAIT_MS = 30_000;

interface Sent {
  playerId: string;
  score: number;
  region: string | null;
  achievedAt: Date;
}

interface TopEventRow {
  boardId: string;
  period: string;
  bucket: string;
  region: string | null;
  entries: { rank: number; playerId: string; displayName: string | null; score: number; achievedAt: string }[];
  size: number;
}

/** The oracle: a bucket's players by their best score, the first `topSize`; `region` null is the global list. */
function oracleTop(sent: readonly Sent[], region: string | null, topSize: number) {
  const best = new Map<string, Sent>();
  for (const result of sent) {
    if (region !== null && result.region !== region) continue;
    const held = best.get(result.playerId);
    if (!held || result.score > held.score) best.set(result.playerId, result);
  }
  const ranked = [...best.values()].sort((a, b) => b.score - a.score);
  return {
    size: ranked.length,
    entries: ranked.slice(0, topSize).map((result, i) => ({
      rank: i + 1,
      playerId: result.playerId,
      displayName: null,
      score: result.score,
      achievedAt: result.achievedAt.toISOString(),
    })),
  };
}

const today = (at: Date) => at.toISOString().slice(0, 10);

/** What a test opened: closed after it, newest first (the stores' app last), so no test holds another's connections. */
const opened: TestApp[] = [];
afterEach(async () => {
  for (const app of opened.splice(0).reverse()) await app.close();
});

/**
 * A deployment whose webhooks are in its database before its processes start (so each process's
 * webhook directory holds them from its start): `processes` API processes sharing one database and
 * Redis prefix, each with a TOP_CHANGED window of `windowMs`.
 */
async function deployment(webhooks: { events: string[]; boards: string[] }[], windowMs: number, processes = 1) {
  const stores = await startTestApp({ seasonCloseIntervalMs: null });
  await stores.stop();
  const { sql } = stores.database;
  for (const [i, webhook] of webhooks.entries()) {
    await sql`insert into webhooks (id, url, events, boards, secret)
      values (${`wh_${i}`}, 'https://receiver.invalid/hook', ${webhook.events}::text[], ${webhook.boards}::text[], ${`whsec_${i}`})`;
  }
  opened.push(stores);
  const apps: TestApp[] = [];
  for (let i = 0; i < processes; i++) {
    apps.push(await startTestApp({ shareStoresOf: { databaseUrl: stores.databaseUrl, keyPrefix: stores.keyPrefix }, topWebhooks: { windowMs } }));
    opened.push(apps.at(-1)!);
  }
  const events = async (boardId: string) => {
    const rows = await sql<{ data: TopEventRow }[]>`
      select data from webhook_events where type = 'TOP_CHANGED' and board_id = ${boardId} order by id`;
    return rows.map((row) => row.data);
  };
  return { apps, events, sql };
}

async function createBoard(app: TestApp, input: Record<string, unknown>) {
  const created = await app.admin('mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }', {
    input: { title: 'b', maxScore: 1e9, ...input },
  });
  expect(created.errors).toBeUndefined();
}

/** The board's TOP_CHANGED events once one holds `entries` (or after WAIT_MS, for the caller's expect to show). */
const eventWith = (events: (boardId: string) => Promise<TopEventRow[]>, boardId: string, entries: TopEventRow['entries']) =>
  settle(
    () => events(boardId),
    (rows) => rows.some((row) => isDeepStrictEqual(row.entries, entries)),
    WAIT_MS,
  );

let matches = 0;
/** Submits one result through `app`, noting it in `sent`. */
async function submit(app: TestApp, sent: Sent[], board: string, playerId: string, score: number, region: string | null = null) {
  const achievedAt = new Date(Date.now() - 1_000 + (matches % 997));
  const answer = await app.server('mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }', {
    input: { board, playerId, score, matchId: `m${++matches}`, achievedAt: achievedAt.toISOString(), ...(region ? { region } : {}) },
  });
  expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
  sent.push({ playerId, score, region, achievedAt });
}

/** Distinct scores in a shuffled order. */
function distinctScores(n: number): number[] {
  const scores = Array.from({ length: n }, (_, i) => 1_000 + i * 7);
  for (let i = scores.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [scores[i], scores[j]] = [scores[j]!, scores[i]!];
  }
  return scores;
}

describe('TOP_CHANGED webhook events', { timeout: 120_000 }, () => {
  it('a burst of results into one bucket makes one event: the final top, limit = topSize', async () => {
    // A window far longer than the burst takes, so that the burst falls in one window however slow the machine.
    const { apps, events } = await deployment([{ events: ['TOP_CHANGED'], boards: [] }], 5_000);
    const [app] = apps as [TestApp];
    await createBoard(app, { id: 'burst', topSize: 5 });
    const sent: Sent[] = [];
    const scores = distinctScores(60);
    await Promise.all(scores.map((score, i) => submit(app, sent, 'burst', `p${i % 20}`, score)));
    const want = oracleTop(sent, null, 5);
    const seen = await eventWith(events, 'burst', want.entries);
    // The event with the final top is the window's one: any earlier event would be here before it.
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ boardId: 'burst', period: 'ALL_TIME', bucket: 'all', region: null, size: want.size, entries: want.entries });
    expect(seen[0]!.entries).toHaveLength(5);
    // Stopping sends what is pending: nothing is.
    await app.stop();
    expect(await events('burst')).toHaveLength(1);
  });

  it('results further apart than the window make one event each, each the top after its result', async () => {
    const { apps, events } = await deployment([{ events: ['TOP_CHANGED'], boards: ['apart'] }], 200);
    const [app] = apps as [TestApp];
    await createBoard(app, { id: 'apart', topSize: 3 });
    const sent: Sent[] = [];
    for (const [k, [player, score]] of (
      [
        ['a', 10],
        ['b', 30],
        ['c', 20],
        ['a', 40],
      ] as const
    ).entries()) {
      await submit(app, sent, 'apart', player, score);
      const want = oracleTop(sent, null, 3);
      const seen = await settle(
        () => events('apart'),
        (rows) => rows.length > k,
        WAIT_MS,
      );
      // Each event is written once its window has passed, so the next result falls in a window of its own.
      expect(seen).toHaveLength(k + 1);
      expect(seen[k]!.entries).toEqual(want.entries);
    }
  });

  it('two processes writing to one bucket in the same window still make one event', async () => {
    const { apps, events } = await deployment([{ events: ['TOP_CHANGED'], boards: [] }], 5_000, 2);
    const [one, two] = apps as [TestApp, TestApp];
    await createBoard(one, { id: 'shared', topSize: 4 });
    // The second process knows the board once it reads it.
    expect((await two.gql('{ board(id: "shared") { id } }')).errors).toBeUndefined();
    const sent: Sent[] = [];
    const scores = distinctScores(40);
    await Promise.all(scores.map((score, i) => submit(i % 2 === 0 ? one : two, sent, 'shared', `q${i % 12}`, score)));
    const want = oracleTop(sent, null, 4);
    const seen = await eventWith(events, 'shared', want.entries);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.entries).toEqual(want.entries);
    await Promise.all([one.stop(), two.stop()]);
    expect(await events('shared')).toHaveLength(1);
  });

  it('changes streaming through two processes make at most one event a window, the last one the final top', async () => {
    const windowMs = 500;
    const { apps, events } = await deployment([{ events: ['TOP_CHANGED'], boards: [] }], windowMs, 2);
    const [one, two] = apps as [TestApp, TestApp];
    await createBoard(one, { id: 'stream', topSize: 3 });
    expect((await two.gql('{ board(id: "stream") { id } }')).errors).toBeUndefined();
    const sent: Sent[] = [];
    // Every result raises a top player, so every one changes the top; for about four windows.
    const started = performance.now();
    for (let i = 0; performance.now() - started < 4 * windowMs; i++) await submit(i % 2 === 0 ? one : two, sent, 'stream', `s${i % 4}`, 100 + i);
    const spanMs = performance.now() - started;
    const want = oracleTop(sent, null, 3);
    const seen = await eventWith(events, 'stream', want.entries);
    expect(seen.at(-1)!.entries).toEqual(want.entries);
    // Windows never overlap and each starts at a change: n windows need (n - 1) windows' time between
    // the first change and the last. Each process keeping windows of its own would make about twice as many.
    expect(seen.length).toBeLessThanOrEqual(Math.floor(spanMs / windowMs) + 1);
  });

  it('a board no webhook wants TOP_CHANGED of writes nothing', async () => {
    const { apps, events } = await deployment(
      [
        { events: ['TOP_CHANGED'], boards: ['wanted'] },
        { events: ['BUCKET_CLOSED', 'FRIEND_OVERTAKEN'], boards: [] },
      ],
      200,
    );
    const [app] = apps as [TestApp];
    await createBoard(app, { id: 'wanted', topSize: 3 });
    await createBoard(app, { id: 'unwanted', topSize: 3 });
    const sent: Sent[] = [];
    await submit(app, sent, 'unwanted', 'x', 5);
    await submit(app, sent, 'wanted', 'x', 5);
    // Stopping sends every window claimed and waits for it: after it, nothing more can come.
    await app.stop();
    expect(await events('unwanted')).toEqual([]);
    expect((await events('wanted')).map((row) => row.entries)).toEqual([oracleTop(sent.slice(1), null, 3).entries]);
  });

  it("a region's and a period's buckets get events of their own", async () => {
    const { apps, events } = await deployment([{ events: ['TOP_CHANGED'], boards: [] }], 300);
    const [app] = apps as [TestApp];
    await createBoard(app, { id: 'regional', topSize: 3, periods: ['ALL_TIME', 'DAILY'], regions: ['eu', 'us'] });
    const sent: Sent[] = [];
    const scores = distinctScores(12);
    for (const [i, score] of scores.entries()) await submit(app, sent, 'regional', `r${i % 6}`, score, i % 3 === 0 ? null : i % 3 === 1 ? 'eu' : 'us');
    const day = today(sent[0]!.achievedAt);
    const lists = ['ALL_TIME', 'DAILY'].flatMap((period) => [null, 'eu', 'us'].map((region) => ({ period, region })));
    // The last event of each list is its final top (trailing edge); every list has one.
    const latest = (rows: TopEventRow[]) =>
      lists.map(({ period, region }) => rows.filter((row) => row.period === period && row.region === region).at(-1)?.entries ?? null);
    const wanted = lists.map(({ region }) => oracleTop(sent, region, 3).entries);
    const seen = await settle(
      () => events('regional'),
      (rows) => isDeepStrictEqual(latest(rows), wanted),
      WAIT_MS,
    );
    expect(latest(seen)).toEqual(wanted);
    for (const row of seen) expect(row.bucket).toBe(row.period === 'DAILY' ? day : 'all');
    for (const { period, region } of lists) {
      expect(seen.filter((row) => row.period === period && row.region === region).at(-1)?.size).toBe(oracleTop(sent, region, 3).size);
    }
  });

  it('a result that does not change the top writes nothing', async () => {
    const { apps, events } = await deployment([{ events: ['TOP_CHANGED'], boards: [] }], 200);
    const [app] = apps as [TestApp];
    await createBoard(app, { id: 'still', topSize: 3 });
    const sent: Sent[] = [];
    for (const [player, score] of [
      ['a', 300],
      ['b', 200],
      ['c', 100],
    ] as const)
      await submit(app, sent, 'still', player, score);
    const want = oracleTop(sent, null, 3);
    const first = await eventWith(events, 'still', want.entries);
    const before = first.length;
    // Below the top, and a top player's worse score (BEST keeps the best): the top is as it was.
    await submit(app, sent, 'still', 'd', 50);
    await submit(app, sent, 'still', 'a', 10);
    await app.stop();
    expect(await events('still')).toHaveLength(before);
  });
});
