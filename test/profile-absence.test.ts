import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProfileStore } from '../src/profiles/store.js';
import { deleteKeysUnder } from '../src/redis.js';
import { TEST_REDIS_URL } from './helpers/redis-keys.js';
import type { TestApp } from './helpers/test-app.js';
import { startTwoProcesses } from './helpers/two-processes.js';
import { observations } from './helpers/metrics.js';
import { until } from './helpers/wait.js';

/**
 * A player without a profile is a normal player (issue 55, item 8): the profile cache remembers in
 * Redis that there is none, as it remembers a name, and a rename or an erasure replaces what it
 * remembered the same way. Two API processes share the stores; the oracle is the players table,
 * read by SQL. Counted on the reading process: its PostgreSQL statements (onQuery) and its Redis
 * commands (its store-timing metrics, every command and script it sends).
 */
describe('a player without a profile: remembered as none, in Redis, like a name', () => {
  let reader: TestApp;
  let writer: TestApp;
  const statements: string[] = [];
  /** What a read asks PostgreSQL of the profiles (the process's jobs and directories ask other things on their own timers). */
  const readsSince = (before: number) => statements.slice(before).filter((statement) => /players/.test(statement));
  /** The Redis commands and scripts the reader sent, but the index recovery job's, which checks the generation on its timer. */
  const redisCommands = async () =>
    (await observations(reader, 'leaderboard_store_seconds', { store: 'redis' })) -
    (await observations(reader, 'leaderboard_store_seconds', { call: 'checkGeneration' }));

  /** The document: anonymous, its variables named as an outside harness names them. */
  const STANDING = 'query($b:ID!,$p:ID!){ standing(board:$b, playerId:$p){ rank score percentile player{ displayName } } }';
  const nameOf = async (app: TestApp, playerId: string) => {
    const answer = await app.gql<{ standing: { player: { displayName: string | null } } | null }>(STANDING, { b: 'Absent', p: playerId });
    expect(answer.errors).toBeUndefined();
    return answer.data!.standing!.player.displayName;
  };
  const truth = async (id: string) => {
    const [row] = await writer.database.sql<{ display_name: string | null }[]>`select display_name from players where id = ${id}`;
    return row?.display_name ?? null;
  };
  /** A read of `id` (after a first one): its name, its PostgreSQL statements and its Redis commands. */
  const costOf = async (id: string) => {
    const before = statements.length;
    const commands = await redisCommands();
    const name = await nameOf(reader, id);
    return { name, statements: readsSince(before), redis: (await redisCommands()) - commands };
  };
  const upsert = async (id: string, displayName: string | null) => {
    const answer = await writer.server('mutation($input: PlayerInput!) { upsertPlayer(input: $input) { id } }', { input: { id, displayName } });
    expect(answer.errors).toBeUndefined();
  };

  beforeAll(async () => {
    ({ reader, writer } = await startTwoProcesses((statement) => statements.push(statement), 'Absent'));
    const inputs = ['named', 'ghost', 'wisp', 'shade'].map((playerId, i) => ({ board: 'Absent', playerId, score: 100 + i, matchId: 'm1' }));
    expect((await writer.server('mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }', { inputs })).errors).toBeUndefined();
    await upsert('named', 'Named');
  });
  afterAll(async () => {
    await writer?.close();
    await reader?.close();
  });

  it('a player never upserted, read twice: the second read asks PostgreSQL nothing, and costs Redis what a named player does', async () => {
    expect(await nameOf(reader, 'ghost')).toBeNull();
    expect(await nameOf(reader, 'named')).toBe('Named');
    const ghost = await costOf('ghost');
    expect(ghost).toMatchObject({ name: null, statements: [] });
    const named = await costOf('named');
    expect(named).toMatchObject({ name: 'Named', statements: [] });
    expect(ghost.redis).toBe(named.redis);
    // Remembered for every process: the writer's first read of it asks nothing either.
    const before = statements.length;
    expect(await nameOf(writer, 'ghost')).toBeNull();
    expect(readsSince(before)).toEqual([]);
  });

  it("a new player's first result remembers that they have none: their very first read, on another process, asks PostgreSQL nothing", async () => {
    const store = createProfileStore(reader.redis);
    const inputs = [{ board: 'Absent', playerId: 'newcomer', score: 7, matchId: 'm1' }];
    expect((await writer.server('mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }', { inputs })).errors).toBeUndefined();
    // Brought into Redis by the writer off its answer's path, at the end of the write's turn.
    await until(async () => 'profile' in (await store.read(['newcomer'])).held[0]!, 5_000, 'the newcomer remembered');
    const first = await costOf('newcomer');
    expect(first).toMatchObject({ name: null, statements: [] });
    // And costs Redis what a named player's read does.
    expect(first.redis).toBe((await costOf('named')).redis);
  });

  it('upsertPlayer replaces the none remembered: the name shows at once on every process, still without PostgreSQL', async () => {
    expect(await nameOf(reader, 'wisp')).toBeNull();
    expect((await costOf('wisp')).statements).toEqual([]);
    await upsert('wisp', 'Wisp');
    const after = await costOf('wisp');
    expect(after).toMatchObject({ name: 'Wisp', statements: [] });
    expect(await nameOf(writer, 'wisp')).toBe('Wisp');
    expect(await truth('wisp')).toBe('Wisp');
  });

  it('an erasure is remembered as none the same way: the player, back, shows none without PostgreSQL', async () => {
    await upsert('shade', 'Shade');
    expect(await nameOf(reader, 'shade')).toBe('Shade');
    const erased = await writer.admin<{ deletePlayer: boolean }>('mutation { deletePlayer(playerId: "shade") }');
    expect(erased.data?.deletePlayer).toBe(true);
    expect(await truth('shade')).toBeNull();
    // Back with a new result, and no profile.
    const inputs = [{ board: 'Absent', playerId: 'shade', score: 50, matchId: 'm2' }];
    expect((await writer.server('mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }', { inputs })).errors).toBeUndefined();
    expect(await costOf('shade')).toMatchObject({ name: null, statements: [] });
  });

  it('a Redis emptied of the profiles asks PostgreSQL once, then remembers the none again', async () => {
    await deleteKeysUnder(TEST_REDIS_URL, `${reader.keyPrefix}lb:{profiles}:`);
    const first = await costOf('ghost');
    expect(first.name).toBeNull();
    expect(first.statements.some((statement) => /from "players"/.test(statement))).toBe(true);
    expect(await costOf('ghost')).toMatchObject({ name: null, statements: [] });
  });
});
