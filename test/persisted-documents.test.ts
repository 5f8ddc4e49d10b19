import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import * as client from '../client/src/index.js';
import { MANIFEST_PATH, manifestText } from '../scripts/persist-documents.js';
import { documentIdOf } from '../src/http/persisted-documents.js';
import { ADMIN_KEY, type GraphQLResponse, SERVER_KEY, type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * Persisted documents: the typed client's operations registered by hash at build time
 * (client/persisted-documents.json), run by id over POST, GET and graphql-ws (documentId or the
 * APQ extension), and, with PERSISTED_DOCUMENTS_ONLY, nothing else. The oracle for every answer is
 * the same operation sent as text to a service that takes any query.
 */

const BOARD = 'Arena-EU';
const TRANSPORTS: client.Transport[] = ['post', 'get', 'ws'];
const codeOf = (response: GraphQLResponse<unknown>) => response.errors?.[0]?.extensions?.code;

async function post(app: TestApp, body: unknown, path = '/graphql') {
  const response = await fetch(`${app.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  return (await response.json()) as GraphQLResponse<Record<string, unknown>>;
}

/** One raw graphql-transport-ws operation: the first message answered for it. */
async function overSocket(app: TestApp, payload: Record<string, unknown>): Promise<{ type: string; payload: unknown }> {
  const socket = new WebSocket(`${app.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
  try {
    return await new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init' })));
      socket.on('message', (data: Buffer) => {
        const message = JSON.parse(data.toString()) as { type: string; payload: unknown };
        if (message.type === 'connection_ack') socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload }));
        else if (message.type === 'next' || message.type === 'error') resolve(message);
      });
    });
  } finally {
    socket.close();
  }
}

async function seed(app: TestApp) {
  const created = await app.admin('mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }', {
    input: { id: BOARD, title: 'Arena (EU)', maxScore: 1e9 },
  });
  expect(created.errors).toBeUndefined();
  const inputs = ['Ann', 'Bo', 'Ünïcode-玩家', 'Cy'].map((playerId, i) => ({ board: BOARD, playerId, score: 100 * (i + 1), matchId: 'm1' }));
  expect((await app.server('mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }', { inputs })).errors).toBeUndefined();
}

/** What a game client reads, through the typed client: the answers compared across senders. */
async function reads(c: client.LeaderboardClient) {
  return {
    top: await c.top({ board: BOARD, limit: 3 }),
    standing: await c.standing({ board: BOARD, playerId: 'Ünïcode-玩家' }),
    around: await c.around({ board: BOARD, playerId: 'Bo', radius: 1 }),
    // Issue 56's reads: the board's buckets and next reset, a history (none: the all-time bucket never closes), the score spread.
    buckets: await c.periodBuckets({ board: BOARD, period: 'ALL_TIME' }),
    history: await c.history({ board: BOARD, playerId: 'Bo', period: 'ALL_TIME' }),
    bins: await c.scoreDistribution({ board: BOARD, bins: 3 }),
  };
}

const withoutAsOf = (answer: Awaited<ReturnType<typeof reads>>) => ({ ...answer, top: { ...answer.top, asOf: undefined } });

describe('persisted documents: the client’s operations by hash', () => {
  it('the committed manifest is what npm run client:generate makes from the client’s operations', () => {
    expect(readFileSync(MANIFEST_PATH, 'utf8')).toBe(manifestText());
  });

  describe('beside queries sent as text (the default)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp();
      await seed(t);
    });

    it('the typed client sending ids answers what it answers sending text, over POST, GET and graphql-ws', async () => {
      const oracle = client.createLeaderboardClient({ url: `${t.url}/graphql` });
      const expected = withoutAsOf(await reads(oracle));
      expect(expected.top.entries.map((entry) => entry.score)).toEqual([400, 300, 200]);
      expect(expected.bins.map((bin) => bin.players)).toEqual([1, 1, 2]);
      expect(expected.buckets?.periodBuckets.edges.map((edge) => edge.node)).toMatchObject([
        { period: 'ALL_TIME', bucket: 'all', region: null, endsAt: null, closed: false, size: 4 },
      ]);
      expect(expected.buckets?.nextReset).toBeNull();
      expect(expected.history.edges).toEqual([]);
      for (const transport of TRANSPORTS) {
        const c = client.createLeaderboardClient({ url: `${t.url}/graphql`, transport, persisted: true, webSocketImpl: WebSocket });
        try {
          expect(withoutAsOf(await reads(c))).toEqual(expected);
        } finally {
          await c.close();
        }
      }
    });

    it('takes the APQ extension; an unknown id is PersistedQueryNotFound, an id beside another text is refused', async () => {
      const text = Object.values(JSON.parse(readFileSync(MANIFEST_PATH, 'utf8')) as Record<string, string>).find((query) => query.startsWith('query Top('))!;
      const variables = { board: BOARD, period: 'ALL_TIME', bucket: null, region: null, limit: 2 };
      const byText = await post(t, { query: text, variables });
      const byHash = await post(t, { variables, extensions: { persistedQuery: { version: 1, sha256Hash: documentIdOf(text) } } });
      expect(byHash.errors, JSON.stringify(byHash.errors)).toBeUndefined();
      expect((byHash.data!.top as { entries: unknown[] }).entries).toEqual((byText.data!.top as { entries: unknown[] }).entries);

      const unknown = await post(t, { variables, extensions: { persistedQuery: { version: 1, sha256Hash: documentIdOf('{ boards { id } }') } } });
      expect(codeOf(unknown)).toBe('BAD_USER_INPUT');
      expect(unknown.errors![0]!.message).toBe('PersistedQueryNotFound');
      const mismatched = await post(t, { documentId: documentIdOf(text), query: '{ boards { id } }' });
      expect(codeOf(mismatched)).toBe('BAD_USER_INPUT');
      const unknownOverWs = await overSocket(t, { query: '', documentId: 'f'.repeat(64) });
      expect(JSON.stringify(unknownOverWs.payload)).toContain('PersistedQueryNotFound');
    });
  });

  describe('PERSISTED_DOCUMENTS_ONLY: registered documents only (trusted documents)', () => {
    let t: TestApp;
    let seeder: TestApp;
    beforeAll(async () => {
      // Seeded through a process that takes any query (board creation is not one of the client's operations).
      seeder = await startTestApp();
      await seed(seeder);
      t = await startTestApp({ shareStoresOf: { databaseUrl: seeder.databaseUrl, keyPrefix: seeder.keyPrefix }, http: { persistedDocuments: { only: true } } });
    });

    it('refuses a query sent as text over POST, GET and graphql-ws, BAD_USER_INPUT, having run nothing', async () => {
      const query = '{ top(board: "Arena-EU", limit: 2) { size } }';
      expect(codeOf(await post(t, { query }))).toBe('BAD_USER_INPUT');
      const get = await fetch(`${t.url}/graphql?query=${encodeURIComponent(query)}`, { headers: { accept: 'application/json' } });
      expect(codeOf((await get.json()) as GraphQLResponse<unknown>)).toBe('BAD_USER_INPUT');
      const ws = await overSocket(t, { query });
      expect(ws.type).toBe('error');
      expect(JSON.stringify(ws.payload)).toContain('BAD_USER_INPUT');
    });

    it('the typed client sending ids reads and writes over every transport, and its subscription streams', async () => {
      const server = client.createLeaderboardClient({ url: `${t.url}/graphql`, apiKey: SERVER_KEY, persisted: true });
      expect((await server.submitScore({ board: BOARD, playerId: 'Dee', score: 50, matchId: 'm2' })).duplicate).toBe(false);
      const admin = client.createLeaderboardClient({ url: `${t.url}/graphql`, apiKey: ADMIN_KEY, persisted: true });
      expect((await admin.player('Dee'))?.id ?? 'Dee').toBe('Dee');
      let expected: ReturnType<typeof withoutAsOf> | undefined;
      for (const transport of TRANSPORTS) {
        const c = client.createLeaderboardClient({ url: `${t.url}/graphql`, transport, persisted: true, webSocketImpl: WebSocket });
        try {
          const answer = withoutAsOf(await reads(c));
          expect(answer.top.entries.map((entry) => entry.score)).toEqual([400, 300, 200]);
          expect(answer).toEqual((expected ??= answer));
          for (const over of ['ws', 'sse'] as const) {
            for await (const view of c.topChanged({ board: BOARD, limit: 2 }, over)) {
              expect(view.entries.map((entry) => entry.score)).toEqual([400, 300]);
              break;
            }
          }
        } finally {
          await c.close();
        }
      }
    });
  });
});
