import { beforeAll, describe, expect, it } from 'vitest';
import { rankScores } from './helpers/oracle.js';
import { type GraphQLResponse, type TestApp, startTestApp } from './helpers/test-app.js';

// A date to come (2037 has 2026's calendar), so that Redis expiries set from the clock are ahead.
const NOW = new Date('2037-11-29T12:00:00.000Z');
const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id regions } }`;
const SUBMIT = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate standings { region standing { rank } } } }`;
const NAME_RULE = 'letters (A-Z, a-z), digits, _, - and . (case-sensitive)';

const codeOf = (response: GraphQLResponse) => response.errors?.[0]?.extensions?.code;

/** The ids studios use: mixed-case boards and regions, and player ids in any script. */
const players = ['Jürgen', '玩家一', 'Ωmega', 'dragon🐉', "O'Brien", 'ascii-player', 'Zoë.K'];

describe('the ids studios use', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ now: () => NOW });
    for (const [id, regions] of [
      ['NA-Ranked', ['EU', 'na.west', 'APAC_2']],
      ['weeklyHighScore', []],
      ['na-ranked', ['eu']],
    ] as const) {
      const created = await t.admin(CREATE, { input: { id, title: id, maxScore: 1_000_000, periods: ['ALL_TIME', 'WEEKLY'], regions } });
      expect(created.errors, id).toBeUndefined();
    }
    for (const [i, playerId] of players.entries()) {
      const submitted = await t.server(SUBMIT, { input: { board: 'NA-Ranked', playerId, score: 100 * (i % 4), matchId: `match.${i}`, region: 'EU' } });
      expect(submitted.errors, playerId).toBeUndefined();
    }
    expect((await t.server(SUBMIT, { input: { board: 'na-ranked', playerId: 'Jürgen', score: 5, matchId: 'lower', region: 'eu' } })).errors).toBeUndefined();
  });

  it('mixed-case board ids and regions are created and read back as given', async () => {
    const response = await t.gql<{ boards: { id: string; regions: string[] }[] }>(`{ boards { id regions } }`);
    expect(response.data?.boards.map((board) => [board.id, board.regions]).sort()).toEqual([
      ['NA-Ranked', ['EU', 'na.west', 'APAC_2']],
      ['global', []],
      ['na-ranked', ['eu']],
      ['weeklyHighScore', []],
    ]);
  });

  it('every read of a mixed-case board and region ranks unicode player ids as a plain sort does', async () => {
    // The oracle: submitted in order, one clock, so in one time unit: equal scores are ordered by id (see rankScores).
    const expected = rankScores(players.map((id, i) => [id, 100 * (i % 4)] as const)).map(([id, score]) => ({ id, score }));
    for (const region of [null, 'EU']) {
      const args = `board: "NA-Ranked", period: WEEKLY${region ? `, region: "${region}"` : ''}`;
      const response = await t.gql<{
        top: { entries: { rank: number; score: number; player: { id: string } }[] };
        standings: { edges: { node: { player: { id: string } } }[] };
        standing: { rank: number } | null;
        around: { player: { id: string } }[];
        board: { size: number };
      }>(
        `query($p: ID!) {
        top(${args}, limit: 100) { entries { rank score player { id } } }
        standings(${args}, first: 100) { edges { node { player { id } } } }
        standing(${args}, playerId: $p) { rank }
        around(${args}, playerId: $p, radius: 1) { player { id } }
        board(id: "NA-Ranked") { size(period: WEEKLY${region ? `, region: "${region}"` : ''}) }
      }`,
        { p: '玩家一' },
      );
      expect(response.errors).toBeUndefined();
      expect(response.data!.top.entries.map((entry) => entry.player.id)).toEqual(expected.map((entry) => entry.id));
      expect(response.data!.standings.edges.map((edge) => edge.node.player.id)).toEqual(expected.map((entry) => entry.id));
      const rank = expected.findIndex((entry) => entry.id === '玩家一') + 1;
      expect(response.data!.standing?.rank).toBe(rank);
      expect(response.data!.around.map((standing) => standing.player.id)).toEqual(expected.slice(Math.max(0, rank - 2), rank + 1).map((entry) => entry.id));
      expect(response.data!.board.size).toBe(players.length);
    }
  });

  it('ids are case-sensitive: NA-Ranked and na-ranked are two boards, EU and eu two regions', async () => {
    const response = await t.gql<{ a: { size: number }; b: { size: number } }>(
      `{ a: top(board: "NA-Ranked", region: "EU") { size } b: top(board: "na-ranked", region: "eu") { size } }`,
    );
    expect(response.data).toEqual({ a: { size: players.length }, b: { size: 1 } });
    expect(codeOf(await t.gql(`{ top(board: "NA-Ranked", region: "eu") { size } }`))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.gql(`{ top(board: "Weeklyhighscore") { size } }`))).toBe('NOT_FOUND');
  });

  it('a unicode player id is read back by player, friends and standing', async () => {
    await t.server(`mutation { upsertPlayer(input: { id: "玩家一", displayName: "玩家 👩‍💻" }) { id } }`);
    await t.server(`mutation { setFriends(playerId: "玩家一", friendIds: ["Jürgen", "dragon🐉"]) }`);
    const response = await t.gql<{ player: { displayName: string }; friends: { player: { id: string } }[] }>(
      `{ player(id: "玩家一") { displayName } friends(board: "NA-Ranked", playerId: "玩家一") { player { id } } }`,
    );
    expect(response.errors).toBeUndefined();
    expect(response.data!.player.displayName).toBe('玩家 👩‍💻');
    expect(response.data!.friends.map((standing) => standing.player.id).sort()).toEqual(['Jürgen', 'dragon🐉', '玩家一'].sort());
  });

  it('numeric ids, sent as JSON numbers and as integer literals, are the same ids as their strings', async () => {
    // Many studios' player and match ids are integers; GraphQL's ID takes them and means the string.
    const sent = await t.server(SUBMIT, { input: { board: 'NA-Ranked', playerId: 7_000_001, score: 250, matchId: 9_001, region: 'EU' } });
    expect(sent.errors).toBeUndefined();
    const replay = await t.server<{ submitScore: { duplicate: boolean } }>(SUBMIT, {
      input: { board: 'NA-Ranked', playerId: '7000001', score: 250, matchId: '9001', region: 'EU' },
    });
    expect(replay.data?.submitScore.duplicate).toBe(true);
    const read = await t.gql<{ byVariable: { player: { id: string } } | null; byLiteral: { player: { id: string } } | null }>(
      `query($p: ID!) { byVariable: standing(board: "NA-Ranked", playerId: $p) { player { id } } byLiteral: standing(board: "NA-Ranked", playerId: 7000001) { player { id } } }`,
      { p: 7_000_001 },
    );
    expect(read.errors).toBeUndefined();
    expect(read.data).toEqual({ byVariable: { player: { id: '7000001' } }, byLiteral: { player: { id: '7000001' } } });
  });

  describe('anything else is refused, with a message stating the rule', () => {
    const refusedWithRule = async (response: Promise<GraphQLResponse>, rule = NAME_RULE) => {
      const answer = await response;
      expect(codeOf(answer), JSON.stringify(answer.errors)).toBe('BAD_USER_INPUT');
      expect(answer.errors?.[0]?.message).toContain(rule);
    };
    for (const id of ['a:b', 'a b', 'a{b}', 'x'.repeat(65), '', 'é-board', 'a\u0000b']) {
      it(`board id ${JSON.stringify(id.length > 20 ? `${id.slice(0, 8)}… (${id.length})` : id)}: refused by createBoard; names no board to submitScore and every read`, async () => {
        await refusedWithRule(t.admin(CREATE, { input: { id, title: 'x', maxScore: 10 } }));
        // Where a board is named, ids are opaque (issue 53): one no board could have is an unknown
        // board (NOT_FOUND; board(id) answers null), unless it breaks the rule every id shares.
        const namesNone = id !== '' && !id.includes('\u0000');
        const named = async (response: Promise<GraphQLResponse>) => {
          const answer = await response;
          if (answer.data && 'board' in answer.data && namesNone) return expect(answer).toEqual({ data: { board: null } });
          expect(codeOf(answer), JSON.stringify(answer.errors)).toBe(namesNone ? 'NOT_FOUND' : 'BAD_USER_INPUT');
        };
        await named(t.server(SUBMIT, { input: { board: id, playerId: 'p', score: 1, matchId: 'm' } }));
        for (const read of [
          `query($b: ID!) { board(id: $b) { id } }`,
          `query($b: ID!) { top(board: $b) { size } }`,
          `query($b: ID!) { standing(board: $b, playerId: "p") { rank } }`,
          `query($b: ID!) { around(board: $b, playerId: "p") { rank } }`,
          `query($b: ID!) { friends(board: $b, playerId: "p") { rank } }`,
          `query($b: ID!) { standings(board: $b) { pageInfo { hasNextPage } } }`,
          `query($b: ID!) { seasonResults(board: $b, season: "s1") { pageInfo { hasNextPage } } }`,
        ]) {
          await named(t.gql(read, { b: id }));
        }
      });
    }
    it('a region of 33 characters, or with a colon, at creation and on reads and writes', async () => {
      const rule = 'must be 1 to 32 characters of ' + NAME_RULE;
      await refusedWithRule(t.admin(CREATE, { input: { id: 'r33', title: 'x', maxScore: 10, regions: ['r'.repeat(33)] } }), rule);
      await refusedWithRule(t.gql(`query($r: String) { top(board: "NA-Ranked", region: $r) { size } }`, { r: 'E:U' }), rule);
      await refusedWithRule(t.server(SUBMIT, { input: { board: 'NA-Ranked', playerId: 'p', score: 1, matchId: 'm', region: 'EU\u0000' } }), rule);
    });
    it('player and season ids with a NUL on reads (once INTERNAL_SERVER_ERROR from SQL)', async () => {
      const printable = 'printable characters only';
      await refusedWithRule(t.gql(`query($p: ID!) { player(id: $p) { id } }`, { p: 'a\u0000b' }), printable);
      await refusedWithRule(t.gql(`query($p: ID!) { standing(board: "NA-Ranked", playerId: $p) { rank } }`, { p: 'a\u0000b' }), printable);
      await refusedWithRule(
        t.gql(`query($s: ID!) { seasonResults(board: "NA-Ranked", season: $s) { pageInfo { hasNextPage } } }`, { s: 's1\u0000' }),
        printable,
      );
    });
    it('a player id with a bidirectional override, and a display name with one', async () => {
      await refusedWithRule(t.server(SUBMIT, { input: { board: 'NA-Ranked', playerId: 'evil\u202Eenip', score: 1, matchId: 'm' } }), 'bidirectional');
      for (const name of ['\u202Enimda', 'ad\u2066min', 'a\u200Fb', 'tab\tname']) {
        await refusedWithRule(
          t.server(`mutation($n: String) { upsertPlayer(input: { id: "spoofer", displayName: $n }) { id } }`, { n: name }),
          'bidirectional',
        );
      }
      expect((await t.gql<{ player: null }>(`{ player(id: "spoofer") { id } }`)).data?.player).toBeNull();
    });
  });

  describe('date-times not on the calendar are refused, not rolled over', () => {
    for (const when of [
      '2037-02-30T12:00:00Z',
      '2037-02-29T12:00:00Z',
      '2037-11-28T24:00:00Z',
      '2037-11-28T23:60:00Z',
      '2037-13-01T00:00:00Z',
      '2037-11-28T12:00:60Z',
      '2037-11-00T12:00:00Z',
    ]) {
      it(when, async () => {
        const answer = await t.server(SUBMIT, { input: { board: 'weeklyHighScore', playerId: 'dated', score: 1, matchId: when, achievedAt: when } });
        expect(codeOf(answer), JSON.stringify(answer)).toBe('BAD_USER_INPUT');
        expect(answer.errors?.[0]?.message).toContain('on the calendar');
      });
    }
    it('a leap day, an offset and fractions are accepted as the instant they name', async () => {
      for (const [when, instant] of [
        ['2036-02-29T12:00:00Z', '2036-02-29T12:00:00.000Z'],
        ['2037-11-29T13:30:00.250+01:30', '2037-11-29T12:00:00.250Z'],
        ['2037-11-28T23:59:59.999Z', '2037-11-28T23:59:59.999Z'],
      ]) {
        const answer = await t.server<{ submitScore: { standings: unknown[] } }>(
          `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { standings { standing { achievedAt } } } }`,
          { input: { board: 'weeklyHighScore', playerId: `at-${when}`, score: 1, matchId: when, achievedAt: when } },
        );
        expect(answer.errors, when).toBeUndefined();
        expect(answer.data!.submitScore.standings[0]).toEqual({ standing: { achievedAt: instant } });
      }
    });
  });
});
