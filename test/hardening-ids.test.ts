import { createClient } from 'graphql-ws';
import { beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type GraphQLResponse, type TestApp, codeOf, startTestApp } from './helpers/test-app.js';

/**
 * Ids are opaque (issue 53, item 14). The contract types every id argument ID and lists NOT_FOUND
 * for "no such board, season or bucket": an id that names nothing is answered as an unknown one is,
 * whatever its form, and the only rule an id argument is held to is the id rule every id shares
 * (1 to 128 printable characters). The one exception is an id given to something being made: a
 * new board's id, which becomes part of Redis keys, is held to the board naming rule.
 */
describe('an id that names nothing is answered as an unknown one, whatever its form', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    const created = await t.admin(`mutation { createBoard(input: { id: "ids", title: "Ids", maxScore: 100, periods: [ALL_TIME, SEASON] }) { id } }`);
    expect(created.errors).toBeUndefined();
    expect((await t.admin(`mutation { startSeason(board: "ids", name: "First") { id } }`)).errors).toBeUndefined();
    expect((await t.server(`mutation { submitScore(input: { board: "ids", playerId: "p", score: 1, matchId: "m" }) { duplicate } }`)).errors).toBeUndefined();
    expect((await t.admin(`mutation { closeSeason(board: "ids") { id } }`)).errors).toBeUndefined();
  });

  /** A well-formed id no board has, then ids of forms no board could have (a new board's id is letters, digits, _, - and ., up to 64). */
  const boards = ['no-such-board', 'a:b', 'a b', 'a{b}', 'é-board', 'Board/1', 'x'.repeat(65)];
  /** Seasons are numbered s1, s2, ...: a well-formed one the board does not have, then other forms. */
  const seasons = ['s99', 'no-such', 'S1', 's01', 's1 ', '1', 'season-1'];

  const expectNotFound = (answer: GraphQLResponse, what: string) => {
    expect(codeOf(answer), `${what}: ${JSON.stringify(answer.errors)}`).toBe('NOT_FOUND');
  };

  it('every read naming a board: NOT_FOUND (board(id), nullable, answers null)', async () => {
    for (const board of boards) {
      for (const read of [
        `query($b: ID!) { top(board: $b) { size } }`,
        `query($b: ID!) { standing(board: $b, playerId: "p") { rank } }`,
        `query($b: ID!) { around(board: $b, playerId: "p") { rank } }`,
        `query($b: ID!) { friends(board: $b, playerId: "p") { rank } }`,
        `query($b: ID!) { standings(board: $b) { pageInfo { hasNextPage } } }`,
        `query($b: ID!) { seasonResults(board: $b, season: "s1") { pageInfo { hasNextPage } } }`,
      ]) {
        const answer = await t.gql(read, { b: board });
        expectNotFound(answer, `${read} with ${board}`);
        expect(answer.errors?.[0]?.message).toContain(board);
      }
      expect(await t.gql(`query($b: ID!) { board(id: $b) { id } }`, { b: board })).toEqual({ data: { board: null } });
    }
  });

  it('topChanged naming a board, over graphql-ws: NOT_FOUND', async () => {
    const client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    try {
      for (const board of boards) {
        const answers = client.iterate({ query: `subscription($b: ID!) { topChanged(board: $b) { size } }`, variables: { b: board } });
        expectNotFound((await answers.next()).value as GraphQLResponse, `topChanged with ${board}`);
        await answers.return?.();
      }
    } finally {
      await client.dispose();
    }
  });

  it('every read naming a season, by seasonResults or as a SEASON bucket: NOT_FOUND', async () => {
    const frozen = await t.gql<{ seasonResults: { edges: unknown[] } }>(`{ seasonResults(board: "ids", season: "s1") { edges { cursor } } }`);
    expect(frozen.data?.seasonResults.edges).toHaveLength(1);
    for (const season of seasons) {
      expectNotFound(await t.gql(`query($s: ID!) { seasonResults(board: "ids", season: $s) { edges { cursor } } }`, { s: season }), `seasonResults ${season}`);
      expectNotFound(await t.gql(`query($s: String) { top(board: "ids", period: SEASON, bucket: $s) { size } }`, { s: season }), `SEASON bucket ${season}`);
    }
  });

  it('every write naming a board: NOT_FOUND, and nothing changes', async () => {
    const before = await t.gql(`{ boards { id title } }`);
    for (const board of boards) {
      for (const [write, as] of [
        [`mutation($b: ID!) { submitScore(input: { board: $b, playerId: "p", score: 1, matchId: "w" }) { duplicate } }`, t.server],
        [
          `mutation($b: ID!) { submitScores(inputs: [{ board: "ids", playerId: "q", score: 1, matchId: "w" }, { board: $b, playerId: "p", score: 1, matchId: "w" }]) { duplicate } }`,
          t.server,
        ],
        [`mutation($b: ID!) { startSeason(board: $b, name: "x") { id } }`, t.admin],
        [`mutation($b: ID!) { closeSeason(board: $b) { id } }`, t.admin],
        [`mutation($b: ID!) { rebuildBoard(board: $b) }`, t.admin],
        [`mutation($b: ID!) { startRebuild(board: $b) { id } }`, t.admin],
        [`mutation($b: ID!) { updateBoard(input: { id: $b, title: "x" }) { id } }`, t.admin],
      ] as const) {
        expectNotFound(await as(write, { b: board }), `${write} with ${board}`);
      }
    }
    expect(await t.gql(`{ boards { id title } }`)).toEqual(before);
    expect((await t.gql(`{ standing(board: "ids", playerId: "q") { rank } }`)).data).toEqual({ standing: null });
  });

  it('player, key and rebuild ids: answered as unknown ones (null, empty, NOT_FOUND)', async () => {
    for (const id of ['no-such-player', 'a:b{c}', 'Board/1', 'x'.repeat(128)]) {
      expect(await t.gql(`query($p: ID!) { player(id: $p) { id } }`, { p: id })).toEqual({ data: { player: null } });
      expect(await t.gql(`query($p: ID!) { standing(board: "ids", playerId: $p) { rank } around(board: "ids", playerId: $p) { rank } }`, { p: id })).toEqual({
        data: { standing: null, around: [] },
      });
      expect(await t.admin(`query($r: ID!) { rebuild(id: $r) { id } }`, { r: id })).toEqual({ data: { rebuild: null } });
      expectNotFound(await t.admin(`mutation($k: ID!) { revokeApiKey(key: $k) { id } }`, { k: id }), `revokeApiKey ${id}`);
    }
  });

  it('the id rule every id shares still holds (so no store is asked about an empty id or a NUL), and a new board id keeps its naming rule', async () => {
    for (const id of ['', 'a\u0000b', 'x'.repeat(129)]) {
      expect(codeOf(await t.gql(`query($b: ID!) { top(board: $b) { size } }`, { b: id })), JSON.stringify(id)).toBe('BAD_USER_INPUT');
      expect(codeOf(await t.gql(`query($s: ID!) { seasonResults(board: "ids", season: $s) { edges { cursor } } }`, { s: id }))).toBe('BAD_USER_INPUT');
    }
    for (const id of boards.slice(1)) {
      const answer = await t.admin(`mutation($b: ID!) { createBoard(input: { id: $b, title: "x", maxScore: 10 }) { id } }`, { b: id });
      expect(codeOf(answer), id).toBe('BAD_USER_INPUT');
      expect(answer.errors?.[0]?.message).toContain('letters (A-Z, a-z), digits, _, - and .');
    }
  });
});
