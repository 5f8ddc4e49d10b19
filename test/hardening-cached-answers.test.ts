import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Board } from '../src/model/board.js';
import { BOARD_REFRESH_MS, createBoardDirectory } from '../src/services/board-directory.js';
import { movableClock } from './helpers/clock.js';
import { ADMIN_KEY, type GraphQLResponse, SERVER_KEY, type TestApp, type TestAppOptions, startTestApp } from './helpers/test-app.js';
import { settle, until } from './helpers/wait.js';

/**
 * Answers kept for more than one caller (issue 53, items 3 and 4): a GET answer is public only
 * when an anonymous caller would get the same bytes (src/http/cache-control.ts, with the one
 * definition of such a document in src/http/response-cache.ts), and a shared answer is kept only
 * while everything it was built from is current, the board's settings included (updateBoard's
 * rankStyle is served at once by the process that answered it, and by the others within the
 * README's second). The oracle for ranks is the scores submitted, ranked here by their rule.
 */

interface TopAnswer {
  top: { entries: { rank: number; score: number; player: { id: string } }[] };
}

const TOP = 'query Top($board: ID!) { top(board: $board, limit: 10) { entries { rank score player { id } } } }';

/** The scores of every board here: two ties, so ORDINAL and COMPETITION ranks differ. */
const SCORES = [500, 400, 400, 300, 200, 200, 200, 100];

/** COMPETITION ranks, by their definition: 1 + the number of players with a strictly better score. */
const competitionRanks = (scores: number[]) => scores.map((score) => 1 + scores.filter((other) => other > score).length);
/** ORDINAL ranks: a rank each, in order. */
const ordinalRanks = (scores: number[]) => scores.map((_, i) => i + 1);

async function createBoard(app: TestApp, id: string) {
  const created = await app.admin('mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }', {
    input: { id, title: `Board ${id}`, maxScore: 1_000 },
  });
  expect(created.errors).toBeUndefined();
  const inputs = SCORES.map((score, i) => ({ board: id, playerId: `p${i}`, score, matchId: 'm' }));
  expect((await app.server('mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }', { inputs })).errors).toBeUndefined();
}

/** An app of its own for the tests of a describe, started before them with these boards, closed after them. */
function appWithBoards(boards: string[], options: TestAppOptions = {}): () => TestApp {
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await startTestApp(options);
    for (const board of boards) await createBoard(app, board);
  });
  afterAll(() => app?.close());
  return () => app!;
}

async function setRankStyle(app: TestApp, board: string, rankStyle: string) {
  const updated = await app.admin<{ updateBoard: { rankStyle: string } }>('mutation($input: UpdateBoardInput!) { updateBoard(input: $input) { rankStyle } }', {
    input: { id: board, rankStyle },
  });
  expect(updated.errors).toBeUndefined();
  expect(updated.data!.updateBoard.rankStyle).toBe(rankStyle);
}

/** The ways a client reads a top: each is answered from a shared answer once it repeats. */
const transports = {
  /** POST through the fast path's pipeline (a key: never answered early). */
  'POST with a key': (app: TestApp, board: string) =>
    fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${SERVER_KEY}` },
      body: JSON.stringify({ query: TOP, variables: { board } }),
    }),
  /** An anonymous POST: its repeats are answered before the pipeline (http/cached-bodies.ts). */
  'anonymous POST': (app: TestApp, board: string) =>
    fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: TOP, variables: { board } }),
    }),
  /** GET, through Yoga. */
  GET: (app: TestApp, board: string) => fetch(`${app.url}/graphql?query=${encodeURIComponent(TOP)}&variables=${encodeURIComponent(JSON.stringify({ board }))}`),
};

async function ranksOf(response: Response): Promise<number[]> {
  const answer = (await response.json()) as GraphQLResponse<TopAnswer>;
  expect(answer.errors).toBeUndefined();
  expect(answer.data!.top.entries.map((entry) => entry.score)).toEqual(SCORES);
  return answer.data!.top.entries.map((entry) => entry.rank);
}

describe('a GET answer is public only when every caller gets the same bytes', () => {
  const app = appWithBoards(['cached']);
  const get = (query: string, headers: Record<string, string> = {}) =>
    fetch(`${app().url}/graphql?query=${encodeURIComponent(query)}`, { headers: { accept: 'application/json', ...headers } });

  it('a top with the admin key selecting admin-only fields is no-store, and so is the same document sent anonymously', async () => {
    for (const field of ['recentResults { score }', 'boardScores { score }']) {
      const query = `{ top(board: "cached", limit: 3) { entries { rank player { id ${field} } } } }`;
      const admin = await get(query, { authorization: `Bearer ${ADMIN_KEY}` });
      expect(admin.status).toBe(200);
      expect(((await admin.json()) as GraphQLResponse).errors).toBeUndefined();
      expect(admin.headers.get('cache-control')).toBe('no-store');
      // An anonymous caller is refused the field: not the admin's bytes, and never public either.
      const anonymous = await get(query);
      expect(((await anonymous.json()) as GraphQLResponse).errors?.length).toBeGreaterThan(0);
      expect(anonymous.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('an anonymous top is public, its repeats (shared answers) too, and says it varies by Authorization and Accept', async () => {
    const query = '{ top(board: "cached", limit: 3) { entries { rank score player { id } } } }';
    const answers = [await get(query), await get(query), await get(query, { authorization: `Bearer ${SERVER_KEY}` })];
    const bodies = await Promise.all(answers.map((answer) => answer.text()));
    // The same bytes for every caller, a key's included: what a CDN may hand anyone.
    expect(new Set(bodies).size).toBe(1);
    expect(answers.map((answer) => answer.headers.get('cache-control'))).toEqual(answers.map(() => 'public, max-age=1'));
    for (const answer of answers) {
      const vary = (answer.headers.get('vary') ?? '').toLowerCase().split(/\s*,\s*/);
      expect(vary).toEqual(expect.arrayContaining(['authorization', 'accept']));
    }
  });
});

describe('a public answer keeps the Vary of a CORS policy that names origins', () => {
  const app = appWithBoards(['cors'], { http: { corsOrigins: ['https://game.example'] } });

  it('Vary names Origin, Accept and Authorization', async () => {
    const query = '{ top(board: "cors", limit: 3) { entries { rank } } }';
    const answer = await fetch(`${app().url}/graphql?query=${encodeURIComponent(query)}`, { headers: { origin: 'https://game.example' } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('public, max-age=1');
    expect(answer.headers.get('access-control-allow-origin')).toBe('https://game.example');
    const vary = (answer.headers.get('vary') ?? '').toLowerCase().split(/\s*,\s*/);
    expect(vary).toEqual(expect.arrayContaining(['origin', 'accept', 'authorization']));
  });
});

describe('a board setting changed by updateBoard is served at once', () => {
  let app: TestApp;
  // Still, so that no cached view ages out between two reads: only a change of what an answer depends on makes it read again.
  const clock = movableClock({ runs: false });

  beforeAll(async () => {
    app = await startTestApp({ now: clock.now });
  });
  afterAll(() => app.close());

  for (const [name, read] of Object.entries(transports)) {
    it(`${name}: the answer right after updateBoard(rankStyle) ranks in the new style`, async () => {
      const board = `style-${name.replace(/\W/g, '-')}`;
      await createBoard(app, board);
      // Twice, so that the second is a shared answer (and, anonymous, its body kept for an early answer).
      expect(await ranksOf(await read(app, board))).toEqual(ordinalRanks(SCORES));
      expect(await ranksOf(await read(app, board))).toEqual(ordinalRanks(SCORES));
      await setRankStyle(app, board, 'COMPETITION');
      expect(await ranksOf(await read(app, board))).toEqual(competitionRanks(SCORES));
      expect(await ranksOf(await read(app, board))).toEqual(competitionRanks(SCORES));
      await setRankStyle(app, board, 'ORDINAL');
      expect(await ranksOf(await read(app, board))).toEqual(ordinalRanks(SCORES));
    });
  }
});

describe('another process serves a board setting changed by updateBoard within the documented second', () => {
  let reader: TestApp;
  let writer: TestApp;
  // The reader's cached views never age out: only the change of the board itself may end its shared answers.
  const clock = movableClock({ runs: false });

  beforeAll(async () => {
    reader = await startTestApp({ now: clock.now });
    writer = await startTestApp({ shareStoresOf: { databaseUrl: reader.databaseUrl, keyPrefix: reader.keyPrefix } });
  });
  afterAll(async () => {
    await writer?.close();
    await reader?.close();
  });

  for (const [name, read] of Object.entries(transports)) {
    it(`${name}: the other process's shared answer gives way to the new rank style`, async () => {
      const board = `remote-${name.replace(/\W/g, '-')}`;
      await createBoard(writer, board);
      expect(await ranksOf(await read(reader, board))).toEqual(ordinalRanks(SCORES));
      expect(await ranksOf(await read(reader, board))).toEqual(ordinalRanks(SCORES));
      await setRankStyle(writer, board, 'COMPETITION');
      // The README's second, and room for a busy machine.
      const ranks = await settle(
        async () => ranksOf(await read(reader, board)),
        (seen) => seen.join() === competitionRanks(SCORES).join(),
        3_000,
        50,
      );
      expect(ranks).toEqual(competitionRanks(SCORES));
    });
  }
});

describe('the board directory hands out a new definition exactly when the board changed', () => {
  const app = appWithBoards(['directory']);

  it('a refresh or a listing that reads the same definition keeps its object (shared answers stay current); a changed one is a new object', async () => {
    const storage = app().app.parts.storage.boards;
    // The real store, its reads counted so the test knows when a background refresh has landed.
    const finds: Promise<Board | null>[] = [];
    const boards = { ...storage, find: (id: string) => (finds[finds.length] = storage.find(id)) };
    let clock = 0;
    const directory = createBoardDirectory(boards, () => clock);
    const refreshed = async () => {
      clock += BOARD_REFRESH_MS;
      const before = finds.length;
      directory.known('directory');
      expect(finds).toHaveLength(before + 1);
      await finds[before];
      // The refresh's own callback runs after the read answers.
      await new Promise((resolve) => setImmediate(resolve));
      return directory.known('directory')!;
    };
    const first = (await directory.find('directory'))!;
    expect(await refreshed()).toBe(first);
    // Listing the boards (any caller's `boards`) reads every definition again: unchanged, the same objects.
    expect((await directory.list()).find((board) => board.id === 'directory')).toBe(first);
    expect(directory.known('directory')).toBe(first);
    await setRankStyle(app(), 'directory', 'COMPETITION');
    const changed = await refreshed();
    expect(changed).not.toBe(first);
    expect(changed.rankStyle).toBe('COMPETITION');
    expect(await refreshed()).toBe(changed);
  });
});

describe("a topChanged stream serves the board's rank style as it is now", () => {
  const app = appWithBoards(['live']);

  it('the first view after updateBoard(rankStyle) ranks in the new style', async () => {
    const client = createClient({ url: `${app().url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    const views: { rank: number; score: number }[][] = [];
    const errors: unknown[] = [];
    const unsubscribe = client.subscribe<{ topChanged: { entries: { rank: number; score: number }[] } }>(
      { query: 'subscription { topChanged(board: "live", limit: 10) { entries { rank score } } }' },
      {
        next: (result) => (result.data ? views.push(result.data.topChanged.entries) : errors.push(result.errors)),
        error: (error) => errors.push(error),
        complete: () => undefined,
      },
    );
    try {
      await until(() => views.length > 0 || errors.length > 0, 5_000, 'the first view');
      expect(errors).toEqual([]);
      expect(views[0]!.map((entry) => entry.rank)).toEqual(ordinalRanks(SCORES));
      await setRankStyle(app(), 'live', 'COMPETITION');
      // A new leader changes the top, so the stream sends its next view.
      const scores = [600, ...SCORES];
      expect(
        (await app().server('mutation { submitScore(input: { board: "live", playerId: "new", score: 600, matchId: "m" }) { duplicate } }')).errors,
      ).toBeUndefined();
      await until(() => views.some((view) => view.length === scores.length), 5_000, 'the view with the new leader');
      const view = views.find((entries) => entries.length === scores.length)!;
      expect(view.map((entry) => entry.score)).toEqual(scores);
      expect(view.map((entry) => entry.rank)).toEqual(competitionRanks(scores));
    } finally {
      unsubscribe();
      await client.dispose();
    }
  });
});

describe('a shared top of the current bucket gives way when its arguments name another bucket', () => {
  const BUCKET_TOP = 'query Top($board: ID!, $period: Period!) { top(board: $board, period: $period, limit: 10) { bucket entries { rank score } } }';
  interface BucketTop {
    top: { bucket: string; entries: { rank: number; score: number }[] };
  }
  /** The same read twice (so the second is a shared answer, and its anonymous body kept), then as the caller asks. */
  const read = async (app: TestApp, board: string, period: string, key: boolean) => {
    const response = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${SERVER_KEY}` } : {}) },
      body: JSON.stringify({ query: BUCKET_TOP, variables: { board, period } }),
    });
    const answer = (await response.json()) as GraphQLResponse<BucketTop>;
    expect(answer.errors).toBeUndefined();
    return answer.data!.top;
  };

  // 100 ms before a UTC midnight, still unless moved: the views read before midnight are fresh after it.
  const midnight = new Date(Math.ceil((Date.now() + 60_000) / 86_400_000) * 86_400_000);
  const clock = movableClock({ runs: false, startsAt: new Date(midnight.getTime() - 100) });
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ now: clock.now });
  });
  afterAll(() => app.close());

  it('DAILY: the first read after midnight answers the new day, on the pipeline and before it', async () => {
    for (const board of ['day-key', 'day-anonymous']) {
      expect(
        (await app.admin(`mutation { createBoard(input: { id: "${board}", title: "Day", maxScore: 1000, periods: [DAILY] }) { id } }`)).errors,
      ).toBeUndefined();
      expect(
        (await app.server(`mutation { submitScore(input: { board: "${board}", playerId: "p", score: 5, matchId: "m" }) { duplicate } }`)).errors,
      ).toBeUndefined();
    }
    const today = new Date(midnight.getTime() - 1).toISOString().slice(0, 10);
    const tomorrow = midnight.toISOString().slice(0, 10);
    for (const [board, key] of [
      ['day-key', true],
      ['day-anonymous', false],
    ] as const) {
      expect(await read(app, board, 'DAILY', key)).toEqual({ bucket: today, entries: [{ rank: 1, score: 5 }] });
      expect(await read(app, board, 'DAILY', key)).toEqual({ bucket: today, entries: [{ rank: 1, score: 5 }] });
    }
    clock.advance(200);
    for (const [board, key] of [
      ['day-key', true],
      ['day-anonymous', false],
    ] as const) {
      expect(await read(app, board, 'DAILY', key)).toEqual({ bucket: tomorrow, entries: [] });
    }
  });

  it('SEASON: the first read after a season closed and the next started answers the new season', async () => {
    const board = 'seasonal';
    expect(
      (await app.admin(`mutation { createBoard(input: { id: "${board}", title: "S", maxScore: 1000, periods: [SEASON] }) { id } }`)).errors,
    ).toBeUndefined();
    const first = await app.admin<{ startSeason: { id: string } }>(`mutation { startSeason(board: "${board}", name: "One") { id } }`);
    expect(first.errors).toBeUndefined();
    expect(
      (await app.server(`mutation { submitScore(input: { board: "${board}", playerId: "p", score: 5, matchId: "m" }) { duplicate } }`)).errors,
    ).toBeUndefined();
    for (const key of [true, false]) {
      expect(await read(app, board, 'SEASON', key)).toEqual({ bucket: first.data!.startSeason.id, entries: [{ rank: 1, score: 5 }] });
      expect(await read(app, board, 'SEASON', key)).toEqual({ bucket: first.data!.startSeason.id, entries: [{ rank: 1, score: 5 }] });
    }
    expect((await app.admin(`mutation { closeSeason(board: "${board}") { id } }`)).errors).toBeUndefined();
    const next = await app.admin<{ startSeason: { id: string } }>(`mutation { startSeason(board: "${board}", name: "Two") { id } }`);
    expect(next.errors).toBeUndefined();
    expect(next.data!.startSeason.id).not.toBe(first.data!.startSeason.id);
    for (const key of [true, false]) expect(await read(app, board, 'SEASON', key)).toEqual({ bucket: next.data!.startSeason.id, entries: [] });
  });
});
