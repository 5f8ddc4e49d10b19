import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROFILE_VERSIONS_KEY, createProfileCache } from '../src/resolvers/profile-cache.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * The process-level profile cache, across two API processes of one deployment (two apps sharing
 * the database and the Redis prefix): a rename or an erasure answered by one is never followed by
 * the old profile from the other, while repeated reads in one process skip the names query.
 */
describe('profile cache: hot reads skip PostgreSQL, and never show a profile after a rename or an erasure', () => {
  let reader: TestApp;
  let writer: TestApp;
  const readerStatements: string[] = [];
  const playerQueries = () => readerStatements.filter((s) => /from "players"/.test(s)).length;

  const top = async () => {
    const response = await reader.gql<{ top: { entries: { player: { id: string; displayName: string | null } }[] } }>(
      '{ top(board: "global", limit: 10) { entries { player { id displayName } } } }',
    );
    expect(response.errors).toBeUndefined();
    return Object.fromEntries(response.data!.top.entries.map((entry) => [entry.player.id, entry.player.displayName]));
  };
  const rename = async (id: string, displayName: string) => {
    const answer = await writer.server('mutation($input: PlayerInput!) { upsertPlayer(input: $input) { id } }', { input: { id, displayName } });
    expect(answer.errors).toBeUndefined();
  };

  beforeAll(async () => {
    reader = await startTestApp({ onQuery: (statement) => readerStatements.push(statement) });
    writer = await startTestApp({ shareStoresOf: { databaseUrl: reader.databaseUrl, keyPrefix: reader.keyPrefix } });
    const inputs = ['ann', 'bo', 'cy'].map((playerId, i) => ({ board: 'global', playerId, score: 100 + i, matchId: 'm1' }));
    expect((await writer.server('mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }', { inputs })).errors).toBeUndefined();
    await rename('ann', 'Ann');
    await rename('bo', 'Bo');
    await rename('cy', 'Cy');
  });
  afterAll(async () => {
    await writer?.close();
    await reader?.close();
  });

  it('a repeated read names its players without asking PostgreSQL', async () => {
    // The first read of a deployment sets the tokens' epoch, and keeps nothing until it is set.
    expect(await top()).toEqual({ ann: 'Ann', bo: 'Bo', cy: 'Cy' });
    expect(await top()).toEqual({ ann: 'Ann', bo: 'Bo', cy: 'Cy' });
    const before = playerQueries();
    expect(await top()).toEqual({ ann: 'Ann', bo: 'Bo', cy: 'Cy' });
    expect(playerQueries()).toBe(before);
  });

  it('a rename answered by another process shows in the very next read here', async () => {
    expect((await top()).ann).toBe('Ann');
    for (const name of ['Annie', 'Anna', 'A.']) {
      await rename('ann', name);
      expect(await top()).toEqual({ ann: name, bo: 'Bo', cy: 'Cy' });
    }
  });

  it('an erasure answered by another process leaves no profile here', async () => {
    expect(await reader.app.services.profiles.load(['cy'])).toEqual([{ id: 'cy', displayName: 'Cy', avatarUrl: null }]);
    const erased = await writer.admin<{ deletePlayer: boolean }>('mutation { deletePlayer(playerId: "cy") }');
    expect(erased.data?.deletePlayer).toBe(true);
    expect(await reader.app.services.profiles.load(['cy'])).toEqual([{ id: 'cy', displayName: null, avatarUrl: null }]);
    // The shared top may still list the id for up to a second (see ranking/top-cache.ts), never the name.
    expect(Object.values(await top())).not.toContain('Cy');
  });

  it('a Redis that lost the version tokens never lets an old profile through', async () => {
    expect((await top()).bo).toBe('Bo');
    await reader.redis.del(PROFILE_VERSIONS_KEY);
    await rename('bo', 'Bob');
    expect((await top()).bo).toBe('Bob');
    // Kept again once the tokens are back.
    await top();
    const before = playerQueries();
    expect((await top()).bo).toBe('Bob');
    expect(playerQueries()).toBe(before);
  });

  it('a change made outside the service (SQL by hand) shows once the kept profile is maxAgeMs old', async () => {
    let clock = 0;
    const cache = createProfileCache(reader.redis, reader.database, { maxAgeMs: 1_000, now: () => clock });
    expect((await cache.load(['bo']))[0]!.displayName).toBe('Bob');
    await reader.database.sql`update players set display_name = 'Robert' where id = 'bo'`;
    expect((await cache.load(['bo']))[0]!.displayName).toBe('Bob');
    clock = 1_001;
    expect((await cache.load(['bo']))[0]!.displayName).toBe('Robert');
  });
});
