import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { createProfileStore } from '../src/profiles/store.js';
import { createRedisClient, deleteKeysUnder } from '../src/redis.js';
import { createProfileCache } from '../src/services/profile-cache.js';
import { MAX_BATCH_LOADS } from '../src/services/batch-loader.js';
import { createStorage } from '../src/db/storage.js';
import { TEST_REDIS_URL } from './helpers/redis-keys.js';
import type { TestApp } from './helpers/test-app.js';
import { startTwoProcesses } from './helpers/two-processes.js';
import { until } from './helpers/wait.js';
import { observations } from './helpers/metrics.js';

/**
 * The shared profile cache (profiles in Redis, PostgreSQL the fallback), across two API processes
 * of one deployment (two apps sharing the database and the Redis prefix): a hot read names its
 * players without a PostgreSQL statement, and a rename or an erasure answered by one process is
 * never followed by the old profile in the other, whatever Redis loses meanwhile. The oracle is
 * the players table itself, read by SQL.
 */
describe('shared profile cache: names from Redis, exact after renames, erasures and an emptied Redis', () => {
  let reader: TestApp;
  let writer: TestApp;
  const readerStatements: string[] = [];
  /**
   * The reader's own background jobs query PostgreSQL on their timers, whatever the reads do: the
   * index recovery's check of the database's source mark, the catch-up's look at index_backlog, the
   * season closer, the board directory's refresh of a definition older than BOARD_REFRESH_MS (in
   * the background: the read is answered from what it kept), and the webhooks' directory and
   * delivery job. One may land between two reads; none is part of a read.
   */
  const BACKGROUND = /pg_current_wal_lsn|index_backlog|from "seasons"|from "boards"|webhook/;
  const statementsSince = (before: number) => readerStatements.slice(before).filter((statement) => !BACKGROUND.test(statement));
  const log = createLogger('silent');

  /** What the players table says, the oracle. */
  const truth = async (id: string) => {
    const [row] = await writer.database.sql<{ display_name: string | null }[]>`select display_name from players where id = ${id}`;
    return row?.display_name ?? null;
  };
  const STANDING = `query Mine($playerId: ID!) {
    standing(board: "Global-EU", playerId: $playerId) { __typename rank player { __typename id displayName } }
  }`;
  const nameOf = async (app: TestApp, playerId: string) => {
    const response = await app.gql<{ standing: { player: { displayName: string | null } } | null }>(STANDING, { playerId });
    expect(response.errors).toBeUndefined();
    return response.data!.standing!.player.displayName;
  };
  const rename = async (id: string, displayName: string | null) => {
    const answer = await writer.server('mutation($input: PlayerInput!) { upsertPlayer(input: $input) { id } }', { input: { id, displayName } });
    expect(answer.errors).toBeUndefined();
  };
  const emptyProfiles = () => deleteKeysUnder(TEST_REDIS_URL, `${reader.keyPrefix}lb:{profiles}:`);

  beforeAll(async () => {
    ({ reader, writer } = await startTwoProcesses((statement) => readerStatements.push(statement), 'Global-EU'));
    const ids = ['ann', 'bo', 'cy', 'dee', 'Ünïcode-玩家', 'eve', 'fay'];
    const inputs = ids.map((playerId, i) => ({ board: 'Global-EU', playerId, score: 100 + i, matchId: 'm1' }));
    expect((await writer.server('mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }', { inputs })).errors).toBeUndefined();
    for (const id of ids) await rename(id, `${id[0]!.toUpperCase()}${id.slice(1)}`);
  });
  afterAll(async () => {
    await writer?.close();
    await reader?.close();
  });

  it('a hot standing read with the name makes no PostgreSQL statement', async () => {
    expect(await nameOf(reader, 'ann')).toBe('Ann');
    expect(await nameOf(reader, 'Ünïcode-玩家')).toBe('Ünïcode-玩家');
    const before = readerStatements.length;
    for (const id of ['ann', 'Ünïcode-玩家', 'bo']) expect(await nameOf(reader, id)).toBe(await truth(id));
    expect(statementsSince(before)).toEqual([]);
  });

  it('a rename answered by another process shows in the very next read here, still without PostgreSQL', async () => {
    for (const name of ['Annie', 'Anna', 'A.']) {
      await rename('ann', name);
      const before = readerStatements.length;
      expect(await nameOf(reader, 'ann')).toBe(name);
      // The rename wrote the new profile into Redis: the reader found it there.
      expect(statementsSince(before)).toEqual([]);
    }
    await rename('ann', null);
    expect(await nameOf(reader, 'ann')).toBeNull();
  });

  it("a board screen names its top as seen and its neighbours with their places, and shows another process's rename at once", async () => {
    const SCREEN = `query Screen($playerId: ID!) {
      __typename
      top(board: "Global-EU", limit: 3) { __typename entries { ...Row } }
      me: standing(board: "Global-EU", playerId: $playerId) { ...Row }
      around(board: "Global-EU", playerId: $playerId, radius: 1) { ...Row }
    }
    fragment Row on Standing { __typename rank player { ...Who } }
    fragment Who on Player { __typename id displayName }`;
    type Row = { player: { id: string; displayName: string | null } };
    const rows = async () => {
      const answer = await reader.gql<{ top: { entries: Row[] }; me: Row; around: Row[] }>(SCREEN, { playerId: 'dee' });
      expect(answer.errors).toBeUndefined();
      const { top, me, around } = answer.data!;
      return [...top.entries, me, ...around].map(({ player }) => [player.id, player.displayName] as const);
    };
    const named = async (shown: (readonly [string, string | null])[]) => Promise.all(shown.map(async ([id]) => [id, await truth(id)] as const));
    const profileReads = () => observations(reader, 'leaderboard_store_seconds', { call: 'readProfiles' });
    // The first screens read (and keep) what Redis did not hold yet, the top's names among them.
    await rows();
    await rows();
    const before = await profileReads();
    const shown = await rows();
    expect(shown).toEqual(await named(shown));
    // Dee's neighbours include 'Ünïcode-玩家': its hash found in Lua, or this would read it again.
    expect(shown.map(([id]) => id)).toContain('Ünïcode-玩家');
    expect(await profileReads()).toBe(before);

    const [leader, was] = shown[0]!;
    for (const name of ['Top ✓', 'Top ✓✓', was]) {
      await rename(leader, name);
      const after = await rows();
      expect(after).toEqual(await named(after));
      expect(after[0]).toEqual([leader, name]);
    }
  });

  it('an erasure answered by another process leaves no profile here', async () => {
    expect(await nameOf(reader, 'cy')).toBe('Cy');
    const erased = await writer.admin<{ deletePlayer: boolean }>('mutation { deletePlayer(playerId: "cy") }');
    expect(erased.data?.deletePlayer).toBe(true);
    expect(await reader.app.parts.profiles.load(['cy'])).toEqual([{ id: 'cy', displayName: null, avatarUrl: null }]);
    expect(await truth('cy')).toBeNull();
  });

  it('a Redis emptied of every profile still answers the right names, from PostgreSQL, and keeps them again', async () => {
    await rename('bo', 'Bob');
    await emptyProfiles();
    expect(await nameOf(reader, 'bo')).toBe('Bob');
    expect(await nameOf(writer, 'Ünïcode-玩家')).toBe(await truth('Ünïcode-玩家'));
    await rename('bo', 'Robert');
    expect(await nameOf(reader, 'bo')).toBe('Robert');
    const before = readerStatements.length;
    expect(await nameOf(reader, 'bo')).toBe('Robert');
    expect(statementsSince(before)).toEqual([]);
  });

  it('a profile read from PostgreSQL before a change, or before Redis was emptied, is never kept', async () => {
    const store = createProfileStore(reader.redis);
    // A reader misses dee, reads PostgreSQL ("Dee"), and is slow to keep it: a rename answers meanwhile.
    await emptyProfiles();
    const [missed] = (await store.read(['dee'])).held as [{ epoch: string }];
    expect(typeof missed.epoch).toBe('string');
    await rename('dee', 'Deirdre');
    await store.fill([{ profile: { id: 'dee', displayName: 'Dee', avatarUrl: null }, epoch: missed.epoch }]);
    expect(await nameOf(reader, 'dee')).toBe('Deirdre');

    // Redis emptied between the miss and the keep: the old epoch is gone with it.
    await emptyProfiles();
    const [again] = (await store.read(['dee'])).held as [{ epoch: string }];
    await emptyProfiles();
    await store.fill([{ profile: { id: 'dee', displayName: 'Dee', avatarUrl: null }, epoch: again.epoch }]);
    const [after] = (await store.read(['dee'])).held;
    expect('profile' in after!).toBe(false);
    expect(await nameOf(reader, 'dee')).toBe('Deirdre');
  });

  it('two changes of one player that cross in Redis leave what PostgreSQL committed last', async () => {
    const store = createProfileStore(reader.redis);
    const first = await store.mark(['eve']);
    const second = await store.mark(['eve']);
    // The second commits first, the first last: PostgreSQL holds the first's name.
    await writer.database.sql`update players set display_name = 'Eve (second)' where id = 'eve'`;
    await store.settle(second, new Map([['eve', { id: 'eve', displayName: 'Eve (second)', avatarUrl: null }]]));
    await writer.database.sql`update players set display_name = 'Eve (first)' where id = 'eve'`;
    await store.settle(first, new Map([['eve', { id: 'eve', displayName: 'Eve (first)', avatarUrl: null }]]));
    expect(await nameOf(reader, 'eve')).toBe('Eve (first)');
    expect(await nameOf(writer, 'eve')).toBe(await truth('eve'));
  });

  it('a change whose process died between its commit and its settle leaves reads exact, from PostgreSQL', async () => {
    const store = createProfileStore(reader.redis);
    expect(await nameOf(reader, 'fay')).toBe('Fay');
    await store.mark(['fay']);
    await writer.database.sql`update players set display_name = 'Faye' where id = 'fay'`;
    for (let i = 0; i < 3; i++) {
      const before = readerStatements.length;
      expect(await nameOf(reader, 'fay')).toBe('Faye');
      // Pending: asked of PostgreSQL every time, kept never.
      expect(readerStatements.slice(before).some((statement) => /from "players"/.test(statement))).toBe(true);
    }
    // The next change settles it.
    await rename('fay', 'Fay');
    const before = readerStatements.length;
    expect(await nameOf(reader, 'fay')).toBe('Fay');
    // Nothing asked of the profiles (the process's background jobs may ask other things meanwhile).
    expect(readerStatements.slice(before).filter((statement) => /players/.test(statement))).toEqual([]);
  });

  it(`one turn's loads naming more players than one look-up takes (${MAX_BATCH_LOADS}) each answer their own ids, in their order`, async () => {
    const ids = Array.from({ length: 2 * MAX_BATCH_LOADS + 300 }, (_, i) => `Turn-Ü-${i}`);
    await writer.database.sql`insert into players (id, display_name) select id, 'Name of ' || id from unnest(${writer.database.sql.array(ids)}::text[]) as id`;
    const redis = createRedisClient(TEST_REDIS_URL, { keyPrefix: `${reader.keyPrefix}turn:` });
    await redis.connect();
    try {
      const cache = createProfileCache(redis, createStorage(reader.database).players, log);
      // One turn: three calls whose ids overlap, one of them backwards, and an id nobody has.
      const calls = [ids.slice(0, 1_500), ids.slice(900).reverse(), ['nobody-here', ids[7]!, ids[7]!]];
      const answers = await Promise.all(calls.map((call) => cache.load(call)));
      const names = new Map(
        (await writer.database.sql<{ id: string; display_name: string }[]>`select id, display_name from players where id like 'Turn-Ü-%'`).map((row) => [
          row.id,
          row.display_name,
        ]),
      );
      expect(answers.map((players) => players.map((player) => [player.id, player.displayName]))).toEqual(
        calls.map((call) => call.map((id) => [id, names.get(id) ?? null])),
      );
    } finally {
      redis.disconnect();
    }
  });

  it('a change made outside the service (SQL by hand) shows once its hash is maxAgeMs old', async () => {
    const redis = createRedisClient(TEST_REDIS_URL, { keyPrefix: `${reader.keyPrefix}aged:` });
    await redis.connect();
    try {
      const cache = createProfileCache(redis, createStorage(reader.database).players, log, { maxAgeMs: 500 });
      expect((await cache.load(['bo']))[0]!.displayName).toBe('Robert');
      await until(async () => 'profile' in (await createProfileStore(redis).read(['bo'])).held[0]!, 5_000, 'bo kept');
      await writer.database.sql`update players set display_name = 'Bobby' where id = 'bo'`;
      expect((await cache.load(['bo']))[0]!.displayName).toBe('Robert');
      await until(async () => (await cache.load(['bo']))[0]!.displayName === 'Bobby', 5_000, 'the hand-made change seen');
    } finally {
      redis.disconnect();
    }
  });
});
