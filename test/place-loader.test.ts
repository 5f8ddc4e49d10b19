import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createLeaderboardClient } from '../client/src/index.js';
import { sentAtOnce } from './helpers/at-once.js';
import { rankScores } from './helpers/oracle.js';
import { observations } from './helpers/metrics.js';
import { SERVER_KEY, type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * A request's reads of single players' places (src/reads/place-loader.ts): a document that asks
 * a player's standing and the players around them in one bucket, as a game client opening a board
 * does, is read with one around script; standings of several players in a bucket with one
 * standings script, with the standings of concurrent requests (the read side's place loader). Documents are sent as clients write them (fragments, __typename, variables);
 * every answer is checked against a plain sort of the scores sent, and the index calls against
 * the app's own count of them.
 */

const BOARD = 'Arena-EU';
const SHARDED = 'Arena-Sharded';
const PLAYERS = Array.from({ length: 30 }, (_, i) => (i % 7 === 3 ? `Spieler-Ü${i}-玩家` : `Pl-${String(i).padStart(2, '0')}`));
/** Distinct scores, in no particular order of the ids. */
const SCORES = new Map(PLAYERS.map((id, i) => [id, 1_000 + ((i * 7_919) % 997) * 10] as const));
/** Every third player has a name, as a studio's game server sets them; the rest have no profile. */
const NAMES = new Map(PLAYERS.filter((_, i) => i % 3 === 0).map((id) => [id, `Champion ${id.slice(-4)} ⚔`] as const));
const who = (playerId: string) => ({ id: playerId, displayName: NAMES.get(playerId) ?? null });
/** The oracle: [player id, score], best first; rank = index + 1 (the scores are distinct). */
const RANKED = rankScores(SCORES);
const rankOf = (playerId: string) => RANKED.findIndex(([id]) => id === playerId) + 1;
/** The oracle's run of `radius` places either side of the player at `rank`, cut at the edges. */
const runAround = (rank: number, radius: number) =>
  RANKED.slice(Math.max(0, rank - 1 - radius), rank + radius).map(([playerId, score]) => ({ rank: rankOf(playerId), score, player: who(playerId) }));

const FRAGMENTS = `
fragment Place on Standing { __typename rank score player { ...Who } }
fragment Who on Player { __typename id displayName }`;

const OPEN = `query OpenBoard($board: ID!, $playerId: ID!, $radius: Int!) {
  __typename
  top(board: $board, limit: 3) { __typename entries { ...Place } }
  me: standing(board: $board, playerId: $playerId) { ...Place }
  around(board: $board, playerId: $playerId, radius: $radius) { ...Place }
}${FRAGMENTS}`;

/** What the place fragments answer, without the __typenames. */
type Place = { rank: number; score: number; player: { id: string; displayName: string | null } };
const plain = (places: (Place | null)[] | Place | null): unknown =>
  Array.isArray(places)
    ? places.map(plain)
    : places && { rank: places.rank, score: places.score, player: { id: places.player.id, displayName: places.player.displayName } };

describe('place reads gathered per request', () => {
  let t: TestApp;

  /** How many calls of one Redis script the app has made. */
  const calls = (call: string) => observations(t, 'leaderboard_store_seconds', { call });

  /** What `work` answers, and how many around, standings and profile scripts (and a sharded around's shard windows) the app sent meanwhile. */
  async function sentDuring<T>(work: () => Promise<T>) {
    // On one node the around and standings scripts name their players too (…Named).
    const scripts = ['readAround', 'readAroundNamed', 'readStandings', 'readStandingsNamed', 'readProfiles', 'readNear'] as const;
    const before = await Promise.all(scripts.map(calls));
    const answer = await work();
    const [around, aroundNamed, standings, standingsNamed, profiles, windows] = (await Promise.all(scripts.map(calls))).map((after, i) => after - before[i]!);
    return { answer, around: around! + aroundNamed!, standings: standings! + standingsNamed!, profiles: profiles!, windows: windows! };
  }

  /** The data of `query` over POST, and how many around, standings and profile scripts answering it took. */
  async function read<T>(query: string, variables: Record<string, unknown>) {
    const { answer, ...sent } = await sentDuring(() => t.server<T>(query, variables));
    expect(answer.errors).toBeUndefined();
    return { data: answer.data!, ...sent };
  }

  beforeAll(async () => {
    t = await startTestApp();
    const created = await t.admin('mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }', {
      input: { id: BOARD, title: 'Arena (EU)', maxScore: 1e9, periods: ['ALL_TIME', 'DAILY'] },
    });
    expect(created.errors).toBeUndefined();
    // The same players on a board of 4 shards, whose around run merges the shards' windows.
    const sharded = await t.admin('mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }', {
      input: { id: SHARDED, title: 'Arena (sharded)', maxScore: 1e9, shards: 4 },
    });
    expect(sharded.errors).toBeUndefined();
    const inputs = [BOARD, SHARDED].flatMap((board) => PLAYERS.map((playerId) => ({ board, playerId, score: SCORES.get(playerId), matchId: 'opening' })));
    const submitted = await t.server('mutation Submit($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { __typename duplicate } }', { inputs });
    expect(submitted.errors).toBeUndefined();
    for (const [id, displayName] of NAMES) {
      const named = await t.server('mutation Name($input: PlayerInput!) { upsertPlayer(input: $input) { __typename id } }', { input: { id, displayName } });
      expect(named.errors).toBeUndefined();
    }
    // Every player's profile read once, so that the shared profile cache holds it (or holds that
    // there is none): the counts below are those of a warm cache, as a live game's are.
    const warm = await t.server(
      'query Warm($board: ID!, $playerId: ID!) { around(board: $board, playerId: $playerId, radius: 50) { player { displayName } } }',
      {
        board: BOARD,
        playerId: PLAYERS[0],
      },
    );
    expect(warm.errors).toBeUndefined();
    // And the top's names seen, as every game client's board screen shows them.
    expect(
      (await t.server('query Top($board: ID!) { top(board: $board, limit: 10) { entries { player { displayName } } } }', { board: BOARD })).errors,
    ).toBeUndefined();
  });

  /** Renames a player on no board: every profile this process has seen must be read again after it (services/remembered-profiles.ts). */
  const renameBystander = async () => {
    const renamed = await t.server('mutation Name($input: PlayerInput!) { upsertPlayer(input: $input) { __typename id } }', {
      input: { id: 'bystander', displayName: `Bystander ${Math.random()}` },
    });
    expect(renamed.errors).toBeUndefined();
  };

  afterAll(async () => {
    await t?.close();
  });

  it("answers a player's standing and the players around them, with names, from one around script that names them too (the top's names as seen)", async () => {
    for (const playerId of [RANKED[14]![0], RANKED[0]![0], RANKED.at(-1)![0], PLAYERS[3]!, PLAYERS[6]!]) {
      const { data, around, standings, profiles } = await read<{ me: Place | null; around: Place[] }>(OPEN, { board: BOARD, playerId, radius: 3 });
      const rank = rankOf(playerId);
      expect(plain(data.me)).toEqual({ rank, score: SCORES.get(playerId), player: who(playerId) });
      expect(plain(data.around)).toEqual(runAround(rank, 3));
      expect({ around, standings, profiles }).toEqual({ around: 1, standings: 0, profiles: 0 });
    }
  });

  it('names a top and one other read (an around, a page) with one profile read, whichever comes back first', async () => {
    const playerId = RANKED[9]![0];
    const top = RANKED.slice(0, 3).map(([id, score]) => ({ rank: rankOf(id), score, player: who(id) }));
    // No name seen before a rename may be taken after it: the top's names are read, with the page's.
    await renameBystander();
    const withAround = await read<{ top: { entries: Place[] }; around: Place[] }>(
      `query TopAndAround($board: ID!, $playerId: ID!) { __typename top(board: $board, limit: 3) { __typename entries { ...Place } } around(board: $board, playerId: $playerId, radius: 2) { ...Place } }${FRAGMENTS}`,
      { board: BOARD, playerId },
    );
    expect({ top: plain(withAround.data.top.entries), around: plain(withAround.data.around), profiles: withAround.profiles }).toEqual({
      top,
      around: runAround(10, 2),
      profiles: 1,
    });
    await renameBystander();
    const withPage = await read<{ top: { entries: Place[] }; standings: { edges: { node: Place }[] } }>(
      `query TopAndPage($board: ID!) { __typename top(board: $board, limit: 3) { __typename entries { ...Place } } standings(board: $board, first: 5) { __typename edges { __typename node { ...Place } } } }${FRAGMENTS}`,
      { board: BOARD },
    );
    expect({ top: plain(withPage.data.top.entries), page: plain(withPage.data.standings.edges.map((edge) => edge.node)), profiles: withPage.profiles }).toEqual(
      {
        top,
        page: runAround(3, 2),
        profiles: 1,
      },
    );
  });

  it('gathers them the same over GET and graphql-ws', async () => {
    const playerId = RANKED[12]![0];
    const variables = { board: BOARD, playerId, radius: 3 };
    const expected = { me: { rank: 13, score: RANKED[12]![1], player: who(playerId) }, around: runAround(13, 3) };
    const check = async (send: () => Promise<{ me: Place | null; around: Place[] }>) => {
      const { answer: data, ...sent } = await sentDuring(send);
      expect({ me: plain(data.me), around: plain(data.around) }).toEqual(expected);
      expect(sent).toEqual({ around: 1, standings: 0, profiles: 0, windows: 0 });
    };

    await check(async () => {
      const url = new URL(`${t.url}/graphql`);
      url.search = new URLSearchParams({ query: OPEN, variables: JSON.stringify(variables), operationName: 'OpenBoard' }).toString();
      const response = await fetch(url, { headers: { accept: 'application/json', authorization: `Bearer ${SERVER_KEY}` } });
      const body = (await response.json()) as { data: { me: Place | null; around: Place[] }; errors?: unknown };
      expect(body.errors).toBeUndefined();
      return body.data;
    });

    const client = createClient({
      url: `${t.url.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${SERVER_KEY}` },
    });
    try {
      await check(async () => {
        for await (const result of client.iterate<{ me: Place | null; around: Place[] }>({ query: OPEN, variables, operationName: 'OpenBoard' })) {
          expect(result.errors).toBeUndefined();
          return result.data!;
        }
        throw new Error('graphql-ws answered nothing');
      });
    } finally {
      await client.dispose();
    }
  });

  it("gathers the typed client's openBoard (top, me and around) the same over POST, GET and graphql-ws", async () => {
    const playerId = RANKED[20]![0];
    const top = RANKED.slice(0, 4).map(([id, score]) => ({ rank: rankOf(id), score, player: who(id) }));
    for (const transport of ['post', 'get', 'ws'] as const) {
      const game = createLeaderboardClient({ url: `${t.url}/graphql`, transport, webSocketImpl: WebSocket });
      try {
        const { answer, ...sent } = await sentDuring(() => game.openBoard({ board: BOARD, playerId, limit: 4, radius: 2 }));
        expect({ top: plain(answer.top.entries), me: plain(answer.me), around: plain(answer.around) }, transport).toEqual({
          top,
          me: { rank: 21, score: SCORES.get(playerId), player: who(playerId) },
          around: runAround(21, 2),
        });
        expect(sent, transport).toEqual({ around: 1, standings: 0, profiles: 0, windows: 0 });
      } finally {
        await game.close();
      }
    }
  });

  it('reads the standings and names of concurrent requests together: fewer scripts and loads than requests, every rank and name right', async () => {
    const query = `query Mine($board: ID!, $playerId: ID!) { standing(board: $board, playerId: $playerId) { ...Place } }${FRAGMENTS}`;
    // A few players twice, and one with no score: each answered its own.
    const playerIds = [...PLAYERS.slice(0, 20), PLAYERS[3]!, PLAYERS[17]!, 'nobody-Ø'];
    for (const board of [BOARD, SHARDED]) {
      const { answer, standings, profiles } = await sentDuring(() =>
        sentAtOnce<{ standing: Place | null }>(
          t.url,
          query,
          playerIds.map((playerId) => ({ board, playerId })),
        ),
      );
      answer.forEach(({ standing }, i) => {
        const playerId = playerIds[i]!;
        expect(plain(standing), `${board} ${playerId}`).toEqual(
          SCORES.has(playerId) ? { rank: rankOf(playerId), score: SCORES.get(playerId), player: who(playerId) } : null,
        );
      });
      // One call per turn of the service's event loop that held any of them (23 on the old code).
      expect(standings, board).toBeLessThan(answer.length / 2);
      expect(profiles, board).toBeLessThan(answer.length / 2);
    }
  });

  it('reads the screens of concurrent requests together: fewer around scripts than requests, every run right', async () => {
    // The edges of the board, a player twice with two radii, and one with no score.
    const asks = [
      ...RANKED.slice(0, 18).map(([playerId], i) => ({ playerId, radius: 1 + (i % 4) })),
      { playerId: RANKED.at(-1)![0], radius: 3 },
      { playerId: RANKED[5]![0], radius: 6 },
      { playerId: 'nobody-Ø', radius: 2 },
    ];
    for (const board of [BOARD, SHARDED]) {
      const { answer, around, standings, windows } = await sentDuring(() =>
        sentAtOnce<{ me: Place | null; around: Place[] }>(
          t.url,
          OPEN,
          asks.map(({ playerId, radius }) => ({ board, playerId, radius })),
        ),
      );
      answer.forEach(({ me, around: run }, i) => {
        const { playerId, radius } = asks[i]!;
        const rank = rankOf(playerId);
        expect(plain(me), `${board} ${playerId}`).toEqual(rank > 0 ? { rank, score: SCORES.get(playerId), player: who(playerId) } : null);
        expect(plain(run), `${board} ${playerId} ${radius}`).toEqual(rank > 0 ? runAround(rank, radius) : []);
      });
      // One around script a turn on one shard; on 4 shards one window read per shard a turn (84 on
      // the old code: one per shard and player).
      if (board === BOARD) expect(around, board).toBeLessThan(answer.length / 2);
      else expect(windows, board).toBeLessThan(answer.length);
      expect(standings, board).toBe(0);
    }
  });

  it("answers a lone standing with the player's name from the standings script alone on one shard, and with a profile read on four", async () => {
    const query = `query Mine($board: ID!, $playerId: ID!) { __typename standing(board: $board, playerId: $playerId) { ...Place } }${FRAGMENTS}`;
    for (const playerId of [RANKED[0]![0], PLAYERS[3]!, PLAYERS[6]!, RANKED.at(-1)![0]]) {
      const one = await read<{ standing: Place }>(query, { board: BOARD, playerId });
      expect(plain(one.data.standing), playerId).toEqual({ rank: rankOf(playerId), score: SCORES.get(playerId), player: who(playerId) });
      expect({ standings: one.standings, profiles: one.profiles }, playerId).toEqual({ standings: 1, profiles: 0 });
      // The shards' standings are several calls: the name is read on its own.
      const four = await read<{ standing: Place }>(query, { board: SHARDED, playerId });
      expect(plain(four.data.standing), playerId).toEqual(plain(one.data.standing));
      expect(four.profiles, playerId).toBe(1);
    }
  });

  it('answers the same on a sharded board, whose run merges the shards, without a standings script', async () => {
    for (const playerId of [RANKED[9]![0], RANKED[1]![0], RANKED.at(-2)![0]]) {
      const { data, standings } = await read<{ me: Place | null; around: Place[] }>(OPEN, { board: SHARDED, playerId, radius: 4 });
      const rank = rankOf(playerId);
      expect(plain(data.me)).toEqual({ rank, score: SCORES.get(playerId), player: who(playerId) });
      expect(plain(data.around)).toEqual(runAround(rank, 4));
      expect(standings).toBe(0);
    }
  });

  it('gathers the reads of a fragment on Query (as Relay writes a screen) the same way', async () => {
    const query = `query Screen($board: ID!, $playerId: ID!) { __typename ...BoardScreen }
    fragment BoardScreen on Query { me: standing(board: $board, playerId: $playerId) { ...Place } ... on Query { around(board: $board, playerId: $playerId, radius: 2) { ...Place } } }${FRAGMENTS}`;
    const playerId = RANKED[7]![0];
    const { data, around, standings } = await read<{ me: Place; around: Place[] }>(query, { board: BOARD, playerId });
    expect(plain(data.me)).toEqual({ rank: 8, score: RANKED[7]![1], player: who(playerId) });
    expect(plain(data.around)).toEqual(runAround(8, 2));
    expect({ around, standings }).toEqual({ around: 1, standings: 0 });
  });

  it('answers a player with no score null and an empty run, from the same one call', async () => {
    const { data, around, standings } = await read<{ me: Place | null; around: Place[] }>(OPEN, { board: BOARD, playerId: 'nobody-Ø', radius: 5 });
    expect(data.me).toBeNull();
    expect(data.around).toEqual([]);
    expect({ around, standings }).toEqual({ around: 1, standings: 0 });
  });

  it('cuts each around of one player to its own radius, from one script with the largest', async () => {
    const query = `query Radii($board: ID!, $playerId: ID!) {
      me: standing(board: $board, playerId: $playerId) { ...Place }
      near: around(board: $board, playerId: $playerId, radius: 1) { ...Place }
      far: around(board: $board, playerId: $playerId, radius: 4) { ...Place }
    }${FRAGMENTS}`;
    const playerId = RANKED[1]![0];
    const { data, around, standings } = await read<{ me: Place; near: Place[]; far: Place[] }>(query, { board: BOARD, playerId });
    expect(plain(data.me)).toEqual({ rank: 2, score: RANKED[1]![1], player: who(playerId) });
    expect(plain(data.near)).toEqual(runAround(2, 1));
    expect(plain(data.far)).toEqual(runAround(2, 4));
    expect({ around, standings }).toEqual({ around: 1, standings: 0 });
  });

  it("reads several players' standings in a bucket with one standings script, and each bucket apart", async () => {
    const query = `query Rivals($board: ID!, $a: ID!, $b: ID!, $c: ID!) {
      a: standing(board: $board, playerId: $a) { ...Place }
      b: standing(board: $board, playerId: $b) { ...Place }
      today: standing(board: $board, playerId: $a, period: DAILY) { ...Place }
      aroundC: around(board: $board, playerId: $c, radius: 2) { ...Place }
      c: standing(board: $board, playerId: $c) { ...Place }
    }${FRAGMENTS}`;
    const [a, b, c] = [RANKED[4]![0], PLAYERS[10]!, RANKED[20]![0]];
    const { data, around, standings } = await read<Record<'a' | 'b' | 'today' | 'c', Place> & { aroundC: Place[] }>(query, { board: BOARD, a, b, c });
    const placeOf = (playerId: string) => ({ rank: rankOf(playerId), score: SCORES.get(playerId), player: who(playerId) });
    // Every result was sent today: the day's bucket ranks them as ALL_TIME does.
    expect(plain([data.a, data.b, data.today, data.c])).toEqual([placeOf(a), placeOf(b), placeOf(a), placeOf(c)]);
    expect(plain(data.aroundC)).toEqual(runAround(rankOf(c), 2));
    // ALL_TIME's a and b together, the day's a apart; c from its around.
    expect({ around, standings }).toEqual({ around: 1, standings: 2 });
  });
});
