import { once } from 'node:events';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type GraphQLResponse, SERVER_KEY, type TestApp, codeOf, startTestApp } from './helpers/test-app.js';

/**
 * Issue 53, items 11 and 13: input that answered "Unexpected error." (a stack overflowed, or a NUL
 * reached PostgreSQL) or was kept though invalid, each refused with BAD_USER_INPUT over the real
 * API and changing nothing, as PostgreSQL itself says (every table the API writes, compared before
 * and after).
 */

// A date to come (2037 has 2026's calendar): the app sets Redis expiries from this clock.
const NOW = new Date('2037-11-29T12:00:00.000Z');
const SUBMIT = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }`;
const SUBMIT_MANY = `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`;
const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id timeZone } }`;
const UPSERT = `mutation($input: PlayerInput!) { upsertPlayer(input: $input) { id } }`;
const TOP = `query { top(board: "hard", limit: 3) { entries { rank score } } }`;
const TABLES = ['boards', 'players', 'friendships', 'results', 'board_scores', 'seasons', 'api_keys'];

/** JSON text of `{"a": {"a": ... 1 ...}}`, `depth` objects deep, written as text: JSON.stringify itself would overflow past a few thousand. */
const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
/** The same as a value, for depths JSON.stringify still writes. */
const nestedValue = (depth: number): unknown => JSON.parse(nested(depth));

const valid = { board: 'hard', playerId: 'someone', score: 10, matchId: 'm-valid' };

describe('input the service must refuse by name, changing nothing (issue 53, items 11 and 13)', () => {
  let t: TestApp;

  /** Every row of every table the API writes, as PostgreSQL holds them. */
  const snapshot = async () =>
    Promise.all(
      TABLES.map((table) => t.database.db.execute(sql.raw(`select md5(coalesce(string_agg(r::text, '|' order by r::text), '')) as rows from ${table} r`))),
    );

  /** Posts a body as written (variables the test cannot JSON.stringify), with a key. */
  const post = async (body: string, key: string | null = SERVER_KEY) => {
    const response = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body,
    });
    return { status: response.status, answer: (await response.json()) as GraphQLResponse };
  };

  /** Runs `send`, asserting that it is answered BAD_USER_INPUT (its message holding `rule`) and that no table changed. */
  const refused = async (send: () => Promise<GraphQLResponse>, rule?: string | RegExp) => {
    const before = await snapshot();
    const answer = await send();
    expect(codeOf(answer), JSON.stringify(answer).slice(0, 500)).toBe('BAD_USER_INPUT');
    if (rule !== undefined) expect(answer.errors?.[0]?.message).toMatch(rule);
    expect(await snapshot()).toEqual(before);
  };

  beforeAll(async () => {
    t = await startTestApp({ now: () => NOW });
    expect((await t.admin(CREATE, { input: { id: 'hard', title: 'Hard', maxScore: 1_000, periods: ['DAILY'], regions: ['eu'] } })).errors).toBeUndefined();
    expect((await t.server(SUBMIT, { input: valid })).errors).toBeUndefined();
    expect((await t.server(UPSERT, { input: { id: 'someone', displayName: 'Someone' } })).errors).toBeUndefined();
  });

  describe('JSON nested deeper than anything walks it recursively (once "Unexpected error.")', () => {
    it('metadata nested 6,000 deep in the variables: HTTP 400', async () => {
      await refused(async () => {
        const { status, answer } = await post(
          `{"query":${JSON.stringify(SUBMIT)},"variables":{"input":{"board":"hard","playerId":"deep","score":5,"matchId":"d1","metadata":${nested(6_000)}}}}`,
        );
        expect(status).toBe(400);
        return answer;
      }, /variables nests objects and arrays more than 64 levels deep/);
    });

    it('metadata 40 deep (within the variables bound), alone and in a batch, naming the field', async () => {
      await refused(
        () => t.server(SUBMIT, { input: { ...valid, matchId: 'd2', metadata: nestedValue(40) } }),
        'input.metadata: nests objects and arrays more than 32 levels deep',
      );
      const inputs = [
        { ...valid, matchId: 'd3' },
        { ...valid, matchId: 'd4', metadata: nestedValue(33) },
      ];
      await refused(() => t.server(SUBMIT_MANY, { inputs }), 'inputs.1.metadata: nests objects and arrays more than 32 levels deep');
    });

    it('metadata 300 deep as a literal in the document', async () => {
      const literal = `${'{a: '.repeat(300)}1${'}'.repeat(300)}`;
      await refused(
        () => t.server(`mutation { submitScore(input: {board: "hard", playerId: "lit", score: 5, matchId: "d5", metadata: ${literal}}) { duplicate } }`),
        'input.metadata: nests',
      );
    });

    it('metadata 32 deep is taken, and served as sent', async () => {
      const metadata = nestedValue(32);
      expect((await t.server(SUBMIT, { input: { ...valid, playerId: 'deep-ok', matchId: 'd6', metadata } })).errors).toBeUndefined();
      const read = await t.gql<{ standing: { metadata: unknown } }>(`{ standing(board: "hard", playerId: "deep-ok") { metadata } }`);
      expect(read.data?.standing.metadata).toEqual(metadata);
    });

    describe('an unused extra variable nested 10,000 deep on a shared top (once HTTP 500)', () => {
      beforeAll(async () => {
        // Twice: the second is answered from the shared answer, as a well-behaved client's would be.
        for (let i = 0; i < 2; i += 1) expect((await t.gql(TOP)).errors).toBeUndefined();
      });

      it('over POST, alone and in a batch', async () => {
        await refused(async () => {
          const { status, answer } = await post(`{"query":${JSON.stringify(TOP)},"variables":{"unused":${nested(10_000)}}}`, null);
          expect(status).toBe(400);
          return answer;
        }, /more than 64 levels deep/);
        const { status, answer } = await post(
          `[{"query":${JSON.stringify(TOP)}},{"query":${JSON.stringify(TOP)},"variables":{"unused":${nested(10_000)}}}]`,
          null,
        );
        // A batch's status is its answers' (Yoga's rule); each answer says its own.
        expect(status).toBe(200);
        const [first, second] = answer as unknown as GraphQLResponse[];
        expect(first?.errors).toBeUndefined();
        expect(codeOf(second!)).toBe('BAD_USER_INPUT');
      });

      it('in its extensions', async () => {
        await refused(async () => (await post(`{"query":${JSON.stringify(TOP)},"extensions":{"unused":${nested(10_000)}}}`, null)).answer, /extensions nests/);
      });

      it('over GET (as deep as a URL holds)', async () => {
        await refused(async () => {
          const search = new URLSearchParams({ query: TOP, variables: JSON.stringify({ unused: nestedValue(100) }) });
          const response = await fetch(`${t.url}/graphql?${search}`, { headers: { accept: 'application/graphql-response+json' } });
          expect(response.status).toBe(400);
          return (await response.json()) as GraphQLResponse;
        }, /more than 64 levels deep/);
      });

      it('over graphql-ws, the socket kept', async () => {
        const socket = new WebSocket(`${t.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
        const messages: { type: string; id?: string; payload?: unknown }[] = [];
        const next = async () => {
          while (messages.length === 0) await once(socket, 'message');
          return messages.shift()!;
        };
        socket.on('message', (data: Buffer) => messages.push(JSON.parse(String(data)) as (typeof messages)[number]));
        try {
          await once(socket, 'open');
          socket.send(JSON.stringify({ type: 'connection_init' }));
          expect((await next()).type).toBe('connection_ack');
          socket.send(`{"id":"1","type":"subscribe","payload":{"query":${JSON.stringify(TOP)},"variables":{"unused":${nested(10_000)}}}}`);
          const refusal = await next();
          expect(refusal).toMatchObject({ id: '1', type: 'error' });
          expect(codeOf({ errors: refusal.payload as GraphQLResponse['errors'] })).toBe('BAD_USER_INPUT');
          // The same socket still answers.
          socket.send(JSON.stringify({ id: '2', type: 'subscribe', payload: { query: TOP } }));
          expect(await next()).toMatchObject({ id: '2', type: 'next' });
        } finally {
          socket.close();
        }
      });
    });
  });

  describe('every string the service keeps or looks up is plain text: no NUL (once a PostgreSQL error), control, bidirectional or unpaired surrogate character', () => {
    const rule = 'must hold no control, bidirectional-override or unpaired surrogate characters';
    const cases: [string, string][] = [
      ['NUL', 'a\u0000b'],
      ['a newline', 'a\nb'],
      ['U+202E', 'a\u202Eb'],
      ['U+2066', 'a\u2066b'],
      ['a lone surrogate', 'a\uD800b'],
      ['DEL', 'a\u007Fb'],
    ];
    for (const [what, text] of cases) {
      it(`${what}: avatarUrl, display name, board title (create and update), season name, key name, flag reason, searchPlayers text`, async () => {
        await refused(() => t.server(UPSERT, { input: { id: 'someone', avatarUrl: `https://cdn.example/${text}.png` } }), `input.avatarUrl: ${rule}`);
        await refused(() => t.server(UPSERT, { input: { id: 'someone', displayName: text } }), `input.displayName: ${rule}`);
        await refused(() => t.admin(CREATE, { input: { id: 'titled', title: text, maxScore: 10 } }), `input.title: ${rule}`);
        await refused(() => t.admin(`mutation($t: String) { updateBoard(input: { id: "hard", title: $t }) { id } }`, { t: text }), rule);
        await refused(() => t.admin(`mutation($n: String!) { startSeason(board: "hard", name: $n) { id } }`, { n: text }), `name: ${rule}`);
        await refused(() => t.admin(`mutation($n: String!) { createApiKey(name: $n, role: SERVER) { key } }`, { n: text }), `name: ${rule}`);
        await refused(() => t.admin(`mutation($r: String!) { flagPlayer(playerId: "someone", reason: $r) { id } }`, { r: text }), `reason: ${rule}`);
        await refused(() => t.admin(`query($s: String!) { searchPlayers(text: $s) { id } }`, { s: text }), `text: ${rule}`);
        await refused(
          () => t.server(SUBMIT, { input: { ...valid, matchId: 'meta-text', metadata: { note: text } } }),
          `input.metadata: a key or string in it ${rule}`,
        );
        await refused(
          () => t.server(SUBMIT, { input: { ...valid, matchId: 'meta-key', metadata: { [text]: 1 } } }),
          `input.metadata: a key or string in it ${rule}`,
        );
      });
    }

    it('strings read against a format of their own: a bucket label, a page cursor', async () => {
      await refused(() => t.gql(`query($b: String) { top(board: "hard", period: DAILY, bucket: $b) { size } }`, { b: '2037-11-29\u0000' }));
      await refused(() => t.gql(`query($a: String) { standings(board: "hard", after: $a) { pageInfo { hasNextPage } } }`, { a: 'x\u0000\u202E' }));
    });

    it('a trailing newline is refused too, not trimmed away', async () => {
      await refused(() => t.admin(`mutation($n: String!) { createApiKey(name: $n, role: SERVER) { key } }`, { n: 'deploy\n' }), rule);
    });

    it('plain text is taken: unicode, emoji (a ZWJ sequence), spaces trimmed, an http(s) URL', async () => {
      const answer = await t.server<{ upsertPlayer: { displayName: string; avatarUrl: string } }>(
        `mutation($input: PlayerInput!) { upsertPlayer(input: $input) { displayName avatarUrl } }`,
        { input: { id: 'plain', displayName: '  Jürgen 👩‍💻 玩家一 ', avatarUrl: 'https://cdn.example/ä.png' } },
      );
      expect(answer.errors).toBeUndefined();
      expect(answer.data?.upsertPlayer).toEqual({ displayName: 'Jürgen 👩‍💻 玩家一', avatarUrl: 'https://cdn.example/ä.png' });
      expect((await t.admin(`mutation { createApiKey(name: "  ci – déploiement ", role: SERVER) { apiKey { name } } }`)).data).toEqual({
        createApiKey: { apiKey: { name: 'ci – déploiement' } },
      });
    });

    it('an avatarUrl that is no http(s) URL', async () => {
      await refused(() => t.server(UPSERT, { input: { id: 'someone', avatarUrl: 'javascript:alert(1)' } }), 'input.avatarUrl: must be an http(s) URL');
    });
  });

  describe('time zones: IANA names only', () => {
    for (const zone of ['2020-01-01T00:00+01:00', '2020-01-01T00:00Z', '2020-01-01T00:00[Europe/Paris]', '+01:00', 'UTC+1', 'Europe/Paris\u0000', '']) {
      it(JSON.stringify(zone), async () => {
        await refused(() => t.admin(CREATE, { input: { id: 'zoned', title: 'Zoned', maxScore: 10, timeZone: zone } }), /timeZone: .* is not an IANA time zone/);
        await refused(
          () =>
            t.admin(CREATE, {
              input: { id: 'zoned', title: 'Zoned', maxScore: 10, regions: ['eu'], regionTimeZones: [{ region: 'eu', timeZone: zone }] },
            }),
          /regionTimeZones\[0\]\.timeZone: .* is not an IANA time zone/,
        );
      });
    }

    it('IANA names are taken, as their canonical name', async () => {
      for (const [id, zone, canonical] of [
        ['z1', 'europe/paris', 'Europe/Paris'],
        ['z2', 'Etc/GMT+5', 'Etc/GMT+5'],
        ['z3', 'America/Port-au-Prince', 'America/Port-au-Prince'],
        ['z4', 'America/Argentina/Buenos_Aires', 'America/Argentina/Buenos_Aires'],
      ]) {
        const answer = await t.admin<{ createBoard: { timeZone: string } }>(CREATE, { input: { id, title: id, maxScore: 10, timeZone: zone } });
        expect(answer.errors, zone).toBeUndefined();
        expect(answer.data?.createBoard.timeZone).toBe(canonical);
      }
    });
  });

  describe('numbers JSON cannot hold (once kept as null)', () => {
    it('metadata 1e400 in the variables', async () => {
      await refused(
        async () =>
          (
            await post(
              `{"query":${JSON.stringify(SUBMIT)},"variables":{"input":{"board":"hard","playerId":"big","score":5,"matchId":"n1","metadata":{"x":1e400}}}}`,
            )
          ).answer,
        'input.metadata: holds a number out of range (Infinity)',
      );
    });
    it('metadata -1e400 in a literal, in a list', async () => {
      await refused(
        () => t.server(`mutation { submitScore(input: {board: "hard", playerId: "big", score: 5, matchId: "n2", metadata: {x: [1, -1e400]}}) { duplicate } }`),
        'input.metadata: holds a number out of range (-Infinity)',
      );
    });
  });

  describe('ids not in Unicode normalization form C are refused, never normalised', () => {
    const nfc = 'J\u00FCrgen';
    const nfd = 'Ju\u0308rgen';
    const rule = /normalization form C/;

    it('a player id and a match id of a submission, in a batch too', async () => {
      await refused(() => t.server(SUBMIT, { input: { ...valid, playerId: nfd, matchId: 'nfd-1' } }), rule);
      await refused(() => t.server(SUBMIT, { input: { ...valid, matchId: `match-${nfd}` } }), rule);
      await refused(
        () =>
          t.server(SUBMIT_MANY, {
            inputs: [
              { ...valid, matchId: 'nfd-2' },
              { ...valid, playerId: nfd, matchId: 'nfd-3' },
            ],
          }),
        /inputs\.1\.playerId/,
      );
    });

    it('profiles, friends, flags, and the reads of one player', async () => {
      await refused(() => t.server(UPSERT, { input: { id: nfd, displayName: 'J' } }), rule);
      await refused(() => t.server(`mutation($f: [ID!]!) { setFriends(playerId: "someone", friendIds: $f) }`, { f: ['x', nfd] }), rule);
      await refused(() => t.admin(`mutation($p: ID!) { flagPlayer(playerId: $p, reason: "cheat") { id } }`, { p: nfd }), rule);
      await refused(() => t.gql(`query($p: ID!) { standing(board: "hard", playerId: $p) { rank } }`, { p: nfd }), rule);
      await refused(() => t.gql(`query($p: ID!) { player(id: $p) { id } }`, { p: nfd }), rule);
    });

    it('the NFC form is taken, and read back as sent', async () => {
      expect((await t.server(SUBMIT, { input: { ...valid, playerId: nfc, matchId: `m-${nfc}` } })).errors).toBeUndefined();
      const read = await t.gql<{ standing: { player: { id: string } } }>(`query($p: ID!) { standing(board: "hard", playerId: $p) { player { id } } }`, {
        p: nfc,
      });
      expect(read.data?.standing.player.id).toBe(nfc);
      const [{ count }] = (await t.database.db.execute(sql`select count(*)::int as count from results where player_id = ${nfc}`)) as unknown as [
        { count: number },
      ];
      expect(count).toBe(1);
    });
  });
});
