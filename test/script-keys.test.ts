import { createHash, randomUUID } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { type Board, type BoardScore, boardScoreRow } from '../src/model/board.js';
import { bucketAt } from '../src/model/buckets.js';
import { defineProfileScripts } from '../src/profiles/scripts.js';
import { PROFILE_CHANGES_KEY, createProfileStore, encodeProfile } from '../src/profiles/store.js';
import { createRedisCluster, type RedisClient } from '../src/redis.js';
import { createIndexGeneration } from '../src/ranking/generation.js';
import { type BoardBucket, createRankingIndex } from '../src/ranking/index.js';
import { defineRankingScripts } from '../src/ranking/scripts/index.js';
import { indexTestBoard } from './helpers/board-views.js';
import { scratchRedis } from './helpers/redis-keys.js';

/**
 * Every Lua script declares every key it touches (issue 55, item 4): on a Redis Cluster a script
 * may only touch the keys it declares, and a key it finds by itself is a key of another slot, or
 * of no node's, the day it moves. Each script the service registers (the index's, the profiles')
 * is run here as the service runs it, through the index and the profile store, with every
 * `redis.call` and `redis.pcall` checked inside Redis against KEYS: a key argument not declared
 * fails the script. A script marked for one node (`no-cluster`) is exempt, and must not be
 * registered on a Cluster client at all. What the named reads answer is checked against the
 * plain reads and the profile store, the oracle.
 */

const NOW = new Date('2037-11-29T12:00:00.000Z');
const bucketOf = (board: Board): BoardBucket => ({ board, bucket: bucketAt(board, 'ALL_TIME', NOW), region: null });

/**
 * A script's Lua, with each redis.call and redis.pcall checked first: its key arguments must be
 * among KEYS (a shard channel must begin with one: it then hashes to its slot). The check goes
 * after the shebang, which must stay the first line.
 */
function checked(lua: string): string {
  const check = `
local __declared = {}
for i = 1, #KEYS do __declared[KEYS[i]] = true end
local __every = {DEL = true, UNLINK = true, EXISTS = true}
local function __keysOf(command, args)
  if command == 'CLUSTER' then return {} end
  if __every[command] then return args end
  if command == 'RENAME' then return {args[1], args[2]} end
  return {args[1]}
end
local function __check(args)
  local command = string.upper(args[1])
  local rest = {}
  for i = 2, #args do rest[#rest + 1] = args[i] end
  if command == 'SPUBLISH' then
    for key in pairs(__declared) do
      if string.sub(rest[1], 1, #key) == key then return end
    end
    error('undeclared channel ' .. tostring(rest[1]) .. ' in SPUBLISH')
  end
  for _, key in ipairs(__keysOf(command, rest)) do
    if not __declared[key] then error('undeclared key ' .. tostring(key) .. ' in ' .. command) end
  end
end
local __call, __pcall = redis.call, redis.pcall
local function __checkedCall(...) __check({...}) return __call(...) end
local function __checkedPcall(...) __check({...}) return __pcall(...) end
`;
  const body = lua.replaceAll('redis.call(', '__checkedCall(').replaceAll('redis.pcall(', '__checkedPcall(');
  if (!body.startsWith('#!')) return `${check}${body}`;
  const end = body.indexOf('\n') + 1;
  return `${body.slice(0, end)}${check}${body.slice(end)}`;
}

/** Whether a script is marked for one node (`#!lua flags=...no-cluster`): exempt, never on a Cluster. */
const oneNode = (lua: string) => /^#!lua flags=\S*\bno-cluster\b/.test(lua);

/** Tells this run's checked scripts apart from any other run's on the same Redis (SCRIPT EXISTS: was it run here). */
const RUN = randomUUID();

/**
 * Makes every script defined on `redis` from now on the checked one (unless marked for one node).
 * Answers the Lua of each name as defined, and the one sent.
 */
function instrument(redis: RedisClient): Map<string, { lua: string; sent: string }> {
  const defined = new Map<string, { lua: string; sent: string }>();
  const define = redis.defineCommand.bind(redis);
  redis.defineCommand = (name, definition) => {
    const sent = oneNode(definition.lua) ? `${definition.lua}-- ${RUN}\n` : `${checked(definition.lua)}-- ${RUN}\n`;
    defined.set(name, { lua: definition.lua, sent });
    define(name, { ...definition, lua: sent });
  };
  return defined;
}

/** The names among `defined` whose script Redis has not been sent (by EVAL, after EVALSHA missed): none was run. */
async function notRun(redis: RedisClient, defined: Map<string, { sent: string }>): Promise<string[]> {
  const names = [...defined.keys()];
  const exists = (await redis.script('EXISTS', ...names.map((name) => createHash('sha1').update(defined.get(name)!.sent).digest('hex')))) as number[];
  return names.filter((_, i) => exists[i] !== 1);
}

describe('every Lua script declares every key it touches', () => {
  const { redis } = scratchRedis('script-keys');
  const defined = instrument(redis);
  const index = createRankingIndex(redis);
  const profiles = createProfileStore(redis, { hashes: 64 });
  const generation = createIndexGeneration(redis);

  const ids = ['ann', 'bo', 'Ünïcode-玩家', '🎮-Gamer_42', 'cy', 'dee', 'eve'];
  const scoresOf = (offset: number) =>
    ids.map((playerId, i): BoardScore => ({ playerId, score: 10 * i + offset, reachedAt: new Date(NOW.getTime() - 60_000), tieBreakValues: [i, 7] }));
  const one = bucketOf(indexTestBoard('one', 1, 'HIGH_FIRST', 'BEST', 3, NOW));
  const sharded = bucketOf(indexTestBoard('sharded', 4, 'HIGH_FIRST', 'BEST', 3, NOW));
  const dense = bucketOf({ ...indexTestBoard('dense', 2, 'LOW_FIRST', 'BEST', 3, NOW), rankStyle: 'DENSE' });
  // Boards whose score and columns leave no room for the time in the double: their time is in the member (ranking/members.ts).
  const wideBoard = (id: string, shards: number): Board => ({
    ...indexTestBoard(id, shards, 'HIGH_FIRST', 'BEST', 3, NOW),
    maxScore: 2 ** 30,
    tieBreaks: [
      { name: 'laps', order: 'HIGH_FIRST', max: 2 ** 12 - 1 },
      { name: 'ms', order: 'LOW_FIRST', max: 2 ** 9 - 1 },
    ],
  });
  const wide = bucketOf(wideBoard('wide', 1));
  const wideSharded = bucketOf(wideBoard('wide-sharded', 4));
  const wideDense = bucketOf({ ...wideBoard('wide-dense', 2), rankStyle: 'DENSE' });

  it('the index: writes, reads, removals, rebuilds and the generation check', async () => {
    for (const at of [one, sharded, dense, wide, wideSharded, wideDense]) {
      await index.writeBoardScores(scoresOf(1).map((score) => ({ at, score, expiresAt: null })));
      // Scores moved, one player twice in one batch.
      await index.writeBoardScores([...scoresOf(3), scoresOf(5)[0]!].map((score) => ({ at, score, expiresAt: new Date(NOW.getTime() + 86_400_000) })));
      await index.top(at, 3);
      await index.standings(at, [...ids, 'nobody']);
      await index.arounds(at, [{ playerId: 'cy', radius: 2 }]);
      const page = await index.page(at, null, 2);
      await index.page(at, page.places.at(-1)!, 2);
      // Backwards (readBefore) from a place and from the end, and from a rank (readFrom; a sharded bucket's counts).
      await index.pageBefore(at, page.places.at(-1)!, 2);
      await index.pageBefore(at, null, 2);
      await index.pageFrom(at, 3, 2);
      await index.size(at);
      await index.scoreBins(at, 3);
      await index.countBetter(at, [15, 40]);
      if (at.board.rankStyle === 'DENSE') await index.countDistinctBetter(at, [15, 40]);
      const { pairs } = await index.scanShard(at, 0, '0', 100);
      await index.removeInactive(at, 0, pairs.slice(0, 2));
      await index.removePlayer([at], 'eve');
      await index.rebuild(
        at,
        (async function* () {
          yield scoresOf(7).map((score) => boardScoreRow(score));
        })(),
        { expiresAt: null, membersPerRecount: 2 },
      );
      // A rebuild whose source fails drops what it wrote.
      await expect(
        index.rebuild(
          at,
          (async function* () {
            yield scoresOf(9).map((score) => boardScoreRow(score));
            throw new Error('the source failed');
          })(),
          { expiresAt: null },
        ),
      ).rejects.toThrow('the source failed');
    }
    // The overtakings' channel (no script: one SPUBLISH, one PUBSUB SHARDNUMSUB a node).
    await index.announceOvertaken(one.board.id, '{}');
    expect(await index.overtakenListeners(one.board.id)).toBe(0);
    // A first check sets the generation (the marker was missing), a second finds it; the plan, twice.
    const [first] = await generation.check();
    expect(first!.claimed).toBe('empty');
    const [again] = await generation.check({ identity: 'db', lsn: 1, writes: 1, at: Date.now() });
    expect(again!.generation).toBe(first!.generation);
    await generation.plan(again!, [one, sharded, dense]);
    await generation.plan(again!, [one]);
  });

  it('a generation check that finds another generation than the one it named names that one next', async () => {
    const [before] = await generation.check();
    // Another node's marker came over (a failover): this process still names the one it read.
    await redis.hset(before!.marker, 'owner', 'another-node');
    const [after] = await generation.check();
    expect(after!.claimed).toBe('failed-over');
    expect(after!.generation).not.toBe(before!.generation);
    expect(after!.recovering).toBe(true);
    // A fresh process names none: it is told the generation, and asks again naming it.
    const [fresh] = await createIndexGeneration(redis).check();
    expect(fresh).toMatchObject({ generation: after!.generation, claimed: null, recovering: true });
  });

  it('the profiles: read, fill, mark and settle', async () => {
    const { held } = await profiles.read(ids);
    await profiles.fill(
      held.flatMap((entry, i) =>
        'epoch' in entry && entry.epoch ? [{ profile: { id: ids[i]!, displayName: `N-${ids[i]}`, avatarUrl: null }, epoch: entry.epoch }] : [],
      ),
    );
    const marks = await profiles.mark(['ann', 'dee']);
    await profiles.settle(marks, new Map([['ann', { id: 'ann', displayName: 'Ann', avatarUrl: null }]]));
    expect(await profiles.changes()).not.toBeNull();
  });

  it.each([
    ['', false],
    [' (time in the member)', true],
  ])('the named reads answer the plain reads and the profile store%s', async (_, timed) => {
    const at = timed ? wide : one;
    const naming = profiles.naming!;
    const asked = [...ids, 'nobody'];
    const { view, token, values } = await index.standingsNamed(at, asked, naming);
    expect(view).toEqual(await index.standings(at, asked));
    expect(token).toBe(await redis.get(PROFILE_CHANGES_KEY));
    const { held } = await profiles.read(asked);
    const oracle = held.map((entry, i) => (view.places[i] === null || !('profile' in entry) ? null : encodeProfile(entry.profile)));
    expect(values).toEqual(oracle);
    // dee is pending nothing, ann settled, the rest filled: every ranked one held.
    expect(values.filter((value) => value !== null)).toHaveLength(view.places.filter((place) => place !== null).length);

    const asks = [
      { playerId: 'cy', radius: 2 },
      { playerId: 'nobody', radius: 1 },
      { playerId: 'Ünïcode-玩家', radius: 0 },
      // A filled window (issue 60): as many rows named as it holds, shifted inward at an edge.
      { playerId: 'cy', radius: 3, fill: true },
    ];
    const around = await index.aroundsNamed(at, asks, naming);
    expect(around.views).toEqual(await index.arounds(at, asks));
    expect(around.token).toBe(token);
    const players = around.views.flatMap(({ places }) => places.map((place) => place.playerId));
    const aroundHeld = (await profiles.read(players)).held;
    expect(around.values).toEqual(aroundHeld.map((entry) => ('profile' in entry ? encodeProfile(entry.profile) : null)));
  });

  it('every script registered was run, checked unless marked for one node', async () => {
    expect(await notRun(redis, defined)).toEqual([]);
    expect([...defined].filter(([, { lua }]) => oneNode(lua)).map(([name]) => name)).toEqual(['readAroundNamed', 'readWideAroundNamed']);
  });

  it('no script marked for one node is registered on a Cluster client', () => {
    // Never connected: registering is the client's own bookkeeping.
    const cluster: Cluster = createRedisCluster([{ host: '127.0.0.1', port: 1 }]);
    const onCluster = instrument(cluster);
    defineRankingScripts(cluster);
    defineProfileScripts(cluster);
    expect(onCluster.size).toBeGreaterThan(20);
    expect([...onCluster].filter(([, { lua }]) => oneNode(lua)).map(([name]) => name)).toEqual([]);
    expect(onCluster.has('readStandingsNamed')).toBe(false);
    expect(onCluster.has('readWideStandingsNamed')).toBe(false);
    expect(createProfileStore(cluster).naming).toBeNull();
    cluster.disconnect();
  });
});
