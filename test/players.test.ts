import { beforeAll, describe, expect, it } from 'vitest';
import { deleteKeysUnder } from '../src/redis.js';
import { TEST_REDIS_URL } from './helpers/redis-keys.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

describe('players: profiles through one DataLoader per request', () => {
  let t: TestApp;
  const statements: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ onQuery: (statement) => statements.push(statement) });
    const inputs = Array.from({ length: 300 }, (_, i) => ({ board: 'global', playerId: `pl${i}`, score: i, matchId: 'one-match' }));
    const submitted = await t.server(`mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`, { inputs });
    expect(submitted.errors).toBeUndefined();
    for (const i of [299, 150, 0]) {
      await t.server(`mutation($input: PlayerInput!) { upsertPlayer(input: $input) { id } }`, {
        input: { id: `pl${i}`, displayName: `Player ${i}`, avatarUrl: `https://cdn.example/${i}.png` },
      });
    }
  });
  const playerQueries = () => statements.filter((s) => /from "players"/.test(s)).length;

  it('names every player of a 300-row response with one query', async () => {
    // Their first results brought every profile, or none, into Redis (ProfileCache.remember):
    // emptied, so that the read finds none held and asks PostgreSQL, once for all 300.
    await deleteKeysUnder(TEST_REDIS_URL, `${t.keyPrefix}lb:{profiles}:`);
    const before = playerQueries();
    const response = await t.gql<{ top: { entries: { rank: number; player: { id: string; displayName: string | null } }[] } }>(
      `{ top(board: "global", limit: 1000) { entries { rank player { id displayName avatarUrl } } }
         around(board: "global", playerId: "pl150", radius: 50) { player { id displayName } } }`,
    );
    expect(response.errors).toBeUndefined();
    expect(playerQueries() - before).toBe(1);
    const entries = response.data!.top.entries;
    expect(entries).toHaveLength(300);
    expect(entries[0]!.player).toEqual({ id: 'pl299', displayName: 'Player 299', avatarUrl: 'https://cdn.example/299.png' });
    expect(entries[1]!.player).toEqual({ id: 'pl298', displayName: null, avatarUrl: null });
  });

  it('names the player of every standing it serves, however it is read (fragments, __typename, variables)', async () => {
    // The oracle: the profiles upserted above, and ranks from the scores (pl<i> scored i).
    const NAMES = new Map([299, 150, 0].map((i) => [`pl${i}`, `Player ${i}`]));
    const named = (id: string) => ({
      __typename: 'Standing',
      rank: 300 - Number(id.slice(2)),
      player: { __typename: 'Player', id, displayName: NAMES.get(id) ?? null },
    });
    const FRAGMENTS = `fragment Named on Standing { __typename rank ...Who } fragment Who on Standing { player { __typename id displayName } }`;
    const variables = { board: 'global', me: 'pl150' };

    const screen = await t.gql<Record<string, unknown>>(
      `query Screen($board: ID!, $me: ID!) {
        __typename
        top(board: $board, limit: 3) { __typename entries { ...Named } }
        me: standing(board: $board, playerId: $me) { ...Named }
        around(board: $board, playerId: $me, radius: 2) { ...Named }
        friends(board: $board, playerId: $me) { ...Named }
        standings(board: $board, first: 2) { __typename edges { __typename node { ...Named } } }
      } ${FRAGMENTS}`,
      variables,
    );
    expect(screen).toEqual({
      data: {
        __typename: 'Query',
        top: { __typename: 'TopBoard', entries: ['pl299', 'pl298', 'pl297'].map(named) },
        me: named('pl150'),
        around: ['pl152', 'pl151', 'pl150', 'pl149', 'pl148'].map(named),
        friends: [named('pl150')],
        standings: { __typename: 'StandingConnection', edges: ['pl299', 'pl298'].map((id) => ({ __typename: 'StandingEdge', node: named(id) })) },
      },
    });

    const lone = `query Lone($board: ID!, $me: ID!) { standing(board: $board, playerId: $me) { ...Named } } ${FRAGMENTS}`;
    expect((await t.gql(lone, { ...variables, me: 'pl299' })).data).toEqual({ standing: named('pl299') });
    expect(await t.gql(lone, { ...variables, me: 'nobody-Ø' })).toEqual({ data: { standing: null } });

    // A lower score than each holds: the payloads' standings are the ones above, named.
    const payload = `{ __typename standings { __typename standing { ...Named } } }`;
    // Every bucket the board keeps holds the same ranks: every score was written at once.
    const standingsOf = (answers: { standings: { standing: unknown }[] }[]) => answers.map((answer) => answer.standings.map(({ standing }) => standing));
    const everyBucket = (id: string, buckets: number) => Array.from({ length: buckets }, () => named(id));
    const one = await t.server<{ submitScore: { __typename: string; standings: { __typename: string; standing: unknown }[] } }>(
      `mutation One($input: SubmitScoreInput!) { submitScore(input: $input) ${payload} } ${FRAGMENTS}`,
      { input: { board: 'global', playerId: 'pl150', score: 1, matchId: 'names-1' } },
    );
    expect(one.errors).toBeUndefined();
    const buckets = one.data!.submitScore.standings.length;
    expect(buckets).toBeGreaterThan(0);
    expect(one.data!.submitScore.standings.every((period) => period.__typename === 'PeriodStanding')).toBe(true);
    expect(standingsOf([one.data!.submitScore])).toEqual([everyBucket('pl150', buckets)]);
    const many = await t.server<{ submitScores: { standings: { standing: unknown }[] }[] }>(
      `mutation Many($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) ${payload} } ${FRAGMENTS}`,
      { inputs: ['pl299', 'pl1'].map((playerId) => ({ board: 'global', playerId, score: 0, matchId: 'names-2' })) },
    );
    expect(many.errors).toBeUndefined();
    expect(standingsOf(many.data!.submitScores)).toEqual([everyBucket('pl299', buckets), everyBucket('pl1', buckets)]);

    const scores = await t.admin<{ player: { boardScores: { standing: unknown }[] } }>(
      `query Scores($me: ID!) { player(id: $me) { __typename boardScores { __typename standing { ...Named } } } } ${FRAGMENTS}`,
      { me: 'pl150' },
    );
    expect(scores.errors).toBeUndefined();
    expect(scores.data!.player.boardScores.map(({ standing }) => standing)).toEqual(everyBucket('pl150', buckets));
  });

  it('upsertPlayer keeps what it is not given and clears what is given as null', async () => {
    const updated = await t.server<{ upsertPlayer: unknown }>(
      `mutation { upsertPlayer(input: { id: "pl0", displayName: "Zero" }) { id displayName avatarUrl } }`,
    );
    expect(updated.data?.upsertPlayer).toEqual({ id: 'pl0', displayName: 'Zero', avatarUrl: 'https://cdn.example/0.png' });
    const cleared = await t.server<{ upsertPlayer: unknown }>(`mutation { upsertPlayer(input: { id: "pl0", avatarUrl: null }) { id displayName avatarUrl } }`);
    expect(cleared.data?.upsertPlayer).toEqual({ id: 'pl0', displayName: 'Zero', avatarUrl: null });
  });

  it('player answers a profile, or null for an id with none', async () => {
    const response = await t.gql<{ a: unknown; b: unknown }>(`{ a: player(id: "pl150") { id displayName } b: player(id: "pl151") { id } }`);
    expect(response.data).toEqual({ a: { id: 'pl150', displayName: 'Player 150' }, b: null });
  });

  it('setFriends replaces the list and answers its size, without the player or repeats', async () => {
    const set = (friendIds: string[]) =>
      t.server<{ setFriends: number }>(`mutation($f: [ID!]!) { setFriends(playerId: "pl10", friendIds: $f) }`, { f: friendIds });
    expect((await set(['pl1', 'pl2', 'pl2', 'pl10', 'pl250'])).data?.setFriends).toBe(3);
    expect((await set(['pl5'])).data?.setFriends).toBe(1);
    const friends = await t.gql<{ friends: { rank: number; player: { id: string } }[] }>(
      `{ friends(board: "global", playerId: "pl10") { rank player { id } } }`,
    );
    expect(friends.data?.friends.map((f) => f.player.id)).toEqual(['pl10', 'pl5']);
    expect((await set([])).data?.setFriends).toBe(0);
  });
});
