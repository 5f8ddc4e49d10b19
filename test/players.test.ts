import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  afterAll(() => t.close());

  const playerQueries = () => statements.filter((s) => /from "players"/.test(s)).length;

  it('names every player of a 300-row response with one query', async () => {
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
