import { sql } from 'drizzle-orm';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type GraphQLResponse, type TestApp, codeOf, startTestApp } from './helpers/test-app.js';

// A date to come (2037 has 2026's calendar): the app sets Redis expiries from this clock, so a
// past date would expire the keys at once.
const NOW = new Date('2037-11-29T12:00:00.000Z');
const SUBMIT = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }`;
const SUBMIT_MANY = `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`;
const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`;

const valid = { board: 'bad', playerId: 'someone', score: 10, matchId: 'm-valid', region: 'eu' };

describe('bad input is refused with the contract code and changes nothing', () => {
  let t: TestApp;
  let snapshot: () => Promise<unknown>;

  beforeAll(async () => {
    t = await startTestApp({ now: () => NOW });
    await t.admin(CREATE, { input: { id: 'bad', title: 'Bad', maxScore: 1_000, periods: ['DAILY', 'WEEKLY', 'MONTHLY'], regions: ['eu'] } });
    await t.admin(CREATE, { input: { id: 'bad-sum', title: 'Bad sum', aggregate: 'SUM', maxScore: 100 } });
    expect(codeOf(await t.server(SUBMIT, { input: valid }))).toBeUndefined();
    expect(codeOf(await t.server(SUBMIT, { input: { board: 'bad-sum', playerId: 'summer', score: 60, matchId: 'm1' } }))).toBeUndefined();
    // What a reader can see, and what the system of record holds.
    snapshot = async () => ({
      // Uncached reads: `top` is served from a cache up to a second old.
      read: (
        await t.gql(`{ a: standings(board: "bad", first: 100) { edges { node { score player { id } } } }
                             b: standings(board: "bad-sum", first: 100) { edges { node { score player { id } } } }
                             boards { id size } }`)
      ).data,
      results: await t.database.db.execute(sql`select board_id, match_id, player_id, score from results order by 1, 2, 3`),
      boardScores: await t.database.db.execute(sql`select * from board_scores order by 1, 2, 3, 4, 5`),
    });
  });
  afterAll(() => t.close());

  const refused = (code: string, response: () => Promise<GraphQLResponse>) => async () => {
    const before = await snapshot();
    const answer = await response();
    expect(codeOf(answer), JSON.stringify(answer.errors)).toBe(code);
    expect(answer.errors?.[0]?.message.length).toBeGreaterThan(10);
    expect(await snapshot()).toEqual(before);
  };

  describe('submitScore', () => {
    const submit = (input: Record<string, unknown>) => () => t.server(SUBMIT, { input: { ...valid, matchId: 'm-new', ...input } });
    it('a negative score', refused('BAD_USER_INPUT', submit({ score: -1 })));
    it('a fractional score', refused('BAD_USER_INPUT', submit({ score: 1.5 })));
    it('a score above maxScore', refused('BAD_USER_INPUT', submit({ score: 1_001 })));
    it(
      'a non-finite score (JSON has no Infinity: 1e400 overflows)',
      refused('BAD_USER_INPUT', () =>
        fetch(`${t.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer test-server-key-0123456789' },
          body: `{"query":"mutation { submitScore(input: {board: \\"bad\\", playerId: \\"x\\", score: 1e400, matchId: \\"m\\"}) { duplicate } }"}`,
        }).then((r) => r.json() as Promise<GraphQLResponse>),
      ),
    );
    it(
      'a SUM total that would pass maxScore',
      refused('BAD_USER_INPUT', () => t.server(SUBMIT, { input: { board: 'bad-sum', playerId: 'summer', score: 41, matchId: 'm2' } })),
    );
    it('an unknown region', refused('BAD_USER_INPUT', submit({ region: 'mars' })));
    it('achievedAt more than 5 minutes ahead', refused('BAD_USER_INPUT', submit({ achievedAt: new Date(NOW.getTime() + 5 * 60_000 + 1_000).toISOString() })));
    it('achievedAt that is not a date-time', refused('BAD_USER_INPUT', submit({ achievedAt: 'yesterday' })));
    it('an empty player id', refused('BAD_USER_INPUT', submit({ playerId: '' })));
    it('a player id over 128 characters', refused('BAD_USER_INPUT', submit({ playerId: 'x'.repeat(129) })));
    it('an empty match id', refused('BAD_USER_INPUT', submit({ matchId: '' })));
    it('a match id over 128 characters', refused('BAD_USER_INPUT', submit({ matchId: 'm'.repeat(129) })));
    it('an id with a control character', refused('BAD_USER_INPUT', submit({ playerId: 'a\u0007b' })));
    it('an unknown board', refused('NOT_FOUND', submit({ board: 'no-such-board' })));

    it('accepts the edges: score 0 and maxScore, achievedAt just under 5 minutes ahead, 128-character ids', async () => {
      const edge = {
        ...valid,
        playerId: 'p'.repeat(128),
        matchId: 'e'.repeat(128),
        score: 1_000,
        achievedAt: new Date(NOW.getTime() + 4 * 60_000).toISOString(),
      };
      expect(codeOf(await t.server(SUBMIT, { input: edge }))).toBeUndefined();
      expect(codeOf(await t.server(SUBMIT, { input: { ...valid, playerId: 'zero', matchId: 'z', score: 0 } }))).toBeUndefined();
    });
  });

  describe('submitScores: nothing of the batch is recorded when any of it is invalid', () => {
    const good = (i: number) => ({ ...valid, playerId: `batch-${i}`, matchId: `b-${i}` });
    it(
      'one bad input among good ones',
      refused('BAD_USER_INPUT', () => t.server(SUBMIT_MANY, { inputs: [good(1), good(2), { ...good(3), score: -3 }, good(4)] })),
    );
    it(
      'one unknown board among good ones',
      refused('NOT_FOUND', () => t.server(SUBMIT_MANY, { inputs: [good(1), { ...good(2), board: 'nope' }] })),
    );
    it(
      "every input in error is named in one answer, each by its path (inputs.2.score), with the first one's code",
      refused('BAD_USER_INPUT', async () => {
        const maxOf = (score: number) => `score ${score} is above board "bad"'s maxScore of 1000.`;
        const unknownFirst = await t.server(SUBMIT_MANY, { inputs: [good(6), { ...good(7), board: 'nope' }, { ...good(8), score: 1_001 }] });
        expect(codeOf(unknownFirst)).toBe('NOT_FOUND');
        expect(unknownFirst.errors?.[0]?.message).toBe(`inputs.1.board: No board "nope".; inputs.2.score: ${maxOf(1001)}`);
        const aboveMaxFirst = await t.server(SUBMIT_MANY, {
          inputs: [good(6), { ...good(8), score: 1_001 }, { ...good(7), board: 'nope' }, { ...good(9), region: 'mars' }, { ...good(10), score: 1_002 }],
        });
        expect(aboveMaxFirst.errors).toHaveLength(1);
        expect(aboveMaxFirst.errors?.[0]?.message).toBe(
          `inputs.1.score: ${maxOf(1001)}; inputs.2.board: No board "nope".; ` +
            `inputs.3.region: Board "bad" has no region "mars"; its regions are one of eu.; inputs.4.score: ${maxOf(1002)}`,
        );
        return aboveMaxFirst;
      }),
    );
    it(
      'a SUM total passing maxScore within the batch',
      refused('BAD_USER_INPUT', () =>
        t.server(SUBMIT_MANY, {
          inputs: [
            good(5),
            { board: 'bad-sum', playerId: 'summer', score: 20, matchId: 'x1' },
            { board: 'bad-sum', playerId: 'summer', score: 21, matchId: 'x2' },
          ],
        }),
      ),
    );
    it(
      'more than 1,000 inputs',
      refused('BAD_USER_INPUT', () => t.server(SUBMIT_MANY, { inputs: Array.from({ length: 1_001 }, (_, i) => good(i)) })),
    );
  });

  describe('the message names each broken argument, in the order the arguments are declared, with its rule', () => {
    const messageOf = async (response: Promise<GraphQLResponse>) => {
      const answer = await response;
      expect(codeOf(answer), JSON.stringify(answer.errors)).toBe('BAD_USER_INPUT');
      return answer.errors?.[0]?.message;
    };
    const letters = 'must be 1 to 32 characters of letters (A-Z, a-z), digits, _, - and . (case-sensitive)';
    // A board id is opaque on reads (one of any form names no board: NOT_FOUND); only the id rule every id shares is broken here.
    const both = `board: must be at most 128 characters; region: ${letters}`;
    it('a submission and each input of a batch, by its place', async () => {
      expect(await messageOf(t.server(SUBMIT, { input: { ...valid, score: -1 } }))).toBe('input.score: must not be negative');
      const inputs = [valid, { ...valid, score: 1.5 }, { ...valid, playerId: 'x'.repeat(129), region: 'E U' }];
      expect(await messageOf(t.server(SUBMIT_MANY, { inputs }))).toBe(
        `inputs.1.score: must be a whole number; inputs.2.playerId: must be at most 128 characters; inputs.2.region: ${letters}`,
      );
      const many = Array.from({ length: 1_001 }, (_, i) => ({ ...valid, matchId: `many-${i}` }));
      expect(await messageOf(t.server(SUBMIT_MANY, { inputs: many }))).toBe('inputs: at most 1000 inputs');
    });
    it('the reads of a bucket', async () => {
      const board = `board: "${'b'.repeat(129)}", region: "E U", playerId: "${'x'.repeat(129)}"`;
      expect(await messageOf(t.gql(`{ standing(${board}) { rank } }`))).toBe(`${both}; playerId: must be at most 128 characters`);
      expect(await messageOf(t.gql(`{ around(${board}, radius: 51) { rank } }`))).toBe(
        `${both}; playerId: must be at most 128 characters; radius: radius must be at most 50`,
      );
      expect(await messageOf(t.gql(`{ friends(${board}) { rank } }`))).toBe(`${both}; playerId: must be at most 128 characters`);
      expect(await messageOf(t.gql(`{ top(board: "bad", limit: 0) { size } }`))).toBe('limit: limit must be at least 1');
      expect(await messageOf(t.gql(`{ standings(board: "bad", region: "E U", first: 0) { edges { cursor } } }`))).toBe(
        `region: ${letters}; first: first must be at least 1`,
      );
      expect(await messageOf(t.gql(`{ board(id: "bad") { size(region: "E U") } }`))).toBe(`region: ${letters}`);
    });
    it('the same over GET and graphql-ws, sent as a client library sends it (a fragment, __typename, variables)', async () => {
      const query = `query Place($board: ID!, $region: String, $playerId: ID!) {
        standing(board: $board, region: $region, playerId: $playerId) { ...Place __typename }
      }
      fragment Place on Standing { rank player { id __typename } __typename }`;
      const variables = { board: 'b'.repeat(129), region: 'E U', playerId: 'x'.repeat(129) };
      const expected = `${both}; playerId: must be at most 128 characters`;
      const search = new URLSearchParams({ query, variables: JSON.stringify(variables) });
      const get = await fetch(`${t.url}/graphql?${search}`, { headers: { accept: 'application/graphql-response+json, application/json' } });
      expect(await messageOf(get.json() as Promise<GraphQLResponse>)).toBe(expected);
      const client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
      try {
        const answers = client.iterate({ query, variables });
        expect(await messageOf(answers.next().then((answer) => answer.value as GraphQLResponse))).toBe(expected);
      } finally {
        await client.dispose();
      }
    });
  });

  describe('reads', () => {
    const read = (query: string) => () => t.gql(query);
    it('limit 0', refused('BAD_USER_INPUT', read(`{ top(board: "bad", limit: 0) { size } }`)));
    it('limit 1001', refused('BAD_USER_INPUT', read(`{ top(board: "bad", limit: 1001) { size } }`)));
    it('radius -1', refused('BAD_USER_INPUT', read(`{ around(board: "bad", playerId: "someone", radius: -1) { rank } }`)));
    it('radius 51', refused('BAD_USER_INPUT', read(`{ around(board: "bad", playerId: "someone", radius: 51) { rank } }`)));
    it('a malformed bucket label', refused('BAD_USER_INPUT', read(`{ top(board: "bad", period: DAILY, bucket: "2037-02-30") { size } }`)));
    it('a week that does not exist', refused('BAD_USER_INPUT', read(`{ top(board: "bad", period: WEEKLY, bucket: "2037-W54") { size } }`)));
    it('a bucket no longer kept', refused('NOT_FOUND', read(`{ top(board: "bad", period: DAILY, bucket: "2037-11-01") { size } }`)));
    it('a period the board does not keep', refused('NOT_FOUND', read(`{ top(board: "bad-sum", period: DAILY) { size } }`)));
    it('an unknown region', refused('BAD_USER_INPUT', read(`{ standing(board: "bad", playerId: "someone", region: "mars") { rank } }`)));
    it('an unknown board', refused('NOT_FOUND', read(`{ friends(board: "nope", playerId: "someone") { rank } }`)));
    it('an empty player id', refused('BAD_USER_INPUT', read(`{ standing(board: "bad", playerId: "") { rank } }`)));

    it('a bucket still kept is read, by label', async () => {
      const response = await t.gql<{ top: { size: number } }>(`{ top(board: "bad", period: DAILY, bucket: "2037-11-29", region: "eu") { size } }`);
      expect(response.data?.top.size).toBeGreaterThan(0);
    });
  });

  describe('players and friends', () => {
    it(
      'more than 1,000 friends',
      refused('BAD_USER_INPUT', () =>
        t.server(`mutation($f: [ID!]!) { setFriends(playerId: "someone", friendIds: $f) }`, { f: Array.from({ length: 1_001 }, (_, i) => `f${i}`) }),
      ),
    );
    it(
      'an empty friend id',
      refused('BAD_USER_INPUT', () => t.server(`mutation { setFriends(playerId: "someone", friendIds: ["a", ""]) }`)),
    );
    it(
      'an empty player id in a profile',
      refused('BAD_USER_INPUT', () => t.server(`mutation { upsertPlayer(input: { id: "" }) { id } }`)),
    );
  });

  describe('createBoard', () => {
    const create = (input: Record<string, unknown>) => () => t.admin(CREATE, { input: { id: 'new-board', title: 'New', maxScore: 100, ...input } });
    it('an id with a colon', refused('BAD_USER_INPUT', create({ id: 'Race:1' })));
    it('an id over 64 characters', refused('BAD_USER_INPUT', create({ id: 'r'.repeat(65) })));
    it('an empty id', refused('BAD_USER_INPUT', create({ id: '' })));
    it('an id with a brace', refused('BAD_USER_INPUT', create({ id: 'a{b}' })));
    it('a fractional maxScore', refused('BAD_USER_INPUT', create({ maxScore: 10.5 })));
    it('maxScore 0', refused('BAD_USER_INPUT', create({ maxScore: 0 })));
    it('a maxScore the packing cannot hold, saying the largest it can', async () => {
      await refused('BAD_USER_INPUT', create({ maxScore: 2 ** 39 }))();
      const answer = await create({ maxScore: 2 ** 39 })();
      expect(answer.errors?.[0]?.message).toContain('549755813887');
    });
    it('topSize 0', refused('BAD_USER_INPUT', create({ topSize: 0 })));
    it('topSize 101', refused('BAD_USER_INPUT', create({ topSize: 101 })));
    it('a region with a space', refused('BAD_USER_INPUT', create({ regions: ['E U'] })));
    it('33 regions', refused('BAD_USER_INPUT', create({ regions: Array.from({ length: 33 }, (_, i) => `r${i}`) })));
    it('an id that is taken', refused('BAD_USER_INPUT', create({ id: 'bad' })));

    it('keeps ALL_TIME even when left out, and accepts the largest maxScore', async () => {
      const response = await t.admin<{ createBoard: { periods: string[]; maxScore: number } }>(
        `mutation($input: CreateBoardInput!) { createBoard(input: $input) { periods maxScore } }`,
        { input: { id: 'biggest', title: 'Biggest', maxScore: 2 ** 39 - 1, periods: ['DAILY'] } },
      );
      expect(response.data?.createBoard).toEqual({ periods: ['ALL_TIME', 'DAILY'], maxScore: 2 ** 39 - 1 });
    });
  });
});
