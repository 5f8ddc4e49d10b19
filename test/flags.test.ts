import { watchCommands } from './helpers/monitor.js';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FLAG_VERSIONS_KEY } from '../src/services/flag-changes.js';
import { type ModelBoard, type ModelResult, type ViewProbe, expectBucketMatches, indexKeysHolding, modelBuckets, submitAll } from './helpers/board-views.js';
import { movableClock } from './helpers/clock.js';
import { seeded } from './helpers/random.js';
import { type TestApp, codeOf, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';

/**
 * flagPlayer / unflagPlayer against a plain model of the recorded results: a flagged player is in
 * no bucket of any board, however it is read, while their results are still recorded; unflagging
 * brings back exactly the scores they would have had, results sent while flagged included.
 */

// A date to come (2037 has 2026's calendar): the app sets Redis expiries from this clock, so a
// past date would expire the keys at once.
const NOW = new Date('2037-11-29T12:00:00.000Z');
const MINUTE = 60_000;

const BOARDS: ModelBoard[] = [
  { id: 'arena', order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME', 'MONTHLY', 'WEEKLY', 'DAILY'], regions: ['eu', 'us'] },
  { id: 'marathon', order: 'LOW_FIRST', aggregate: 'SUM', periods: ['ALL_TIME', 'DAILY'], regions: ['eu'] },
  // The cheater never plays here: flagging must leave it exactly as it was.
  { id: 'quiet', order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME'], regions: [] },
];
const MAX_SCORE: Record<string, number> = { arena: 1_000_000, marathon: 100_000, quiet: 1_000 };
const PLAYERS = Array.from({ length: 20 }, (_, i) => `p${String(i).padStart(2, '0')}`);
const CHEATER = 'cheater';

const FRIENDS: Record<string, string[]> = { p01: [CHEATER, 'p02', 'p03'], [CHEATER]: ['p01', 'p04'] };
const PROBE: ViewProbe = { players: [CHEATER, 'p01', 'p02'], friendsOf: FRIENDS };

let matches = 0;
/** Results over the last seven and a half days (every one of them still in a kept DAILY bucket). */
function generate(seed: number, count: number, { cheaterOnly = false } = {}): ModelResult[] {
  const next = seeded(seed);
  const out: ModelResult[] = [];
  for (let i = 0; i < count; i++) {
    const board = BOARDS[Math.floor(next() * BOARDS.length)]!;
    const cheats = board.id !== 'quiet' && (cheaterOnly || next() < 0.15);
    const playerId = cheats ? CHEATER : PLAYERS[Math.floor(next() * PLAYERS.length)]!;
    const base = board.id === 'marathon' ? 1 + Math.floor(next() * 50) : Math.floor(next() * 1_000);
    out.push({
      board: board.id,
      playerId,
      matchId: `m${++matches}`,
      // The cheater scores well, so that they sit in the tops.
      score: cheats && board.id === 'arena' ? base + 600 : base,
      region: [null, ...board.regions][Math.floor(next() * (board.regions.length + 1))]!,
      achievedAt: new Date(NOW.getTime() - Math.floor(next() * 10_700) * MINUTE),
    });
  }
  return out;
}

const FLAG = `mutation($id: ID!, $reason: String!) { flagPlayer(playerId: $id, reason: $reason) { id displayName } }`;
const UNFLAG = `mutation($id: ID!) { unflagPlayer(playerId: $id) { id displayName } }`;

describe('flagPlayer / unflagPlayer', () => {
  let t: TestApp;
  // Running from NOW: the top cache ages its views by this clock, and the reads below wait out its bound.
  const clock = movableClock({ startsAt: NOW });
  const results: ModelResult[] = [];
  const hidden = new Set<string>();

  const expectEveryBucket = async () => {
    for (const bucket of modelBuckets(BOARDS, results, hidden)) await expectBucketMatches(t, bucket, PROBE);
  };
  const flagRow = async (id: string) => {
    const [row] = await t.database.sql<{ flagged: boolean; reason: string | null }[]>`
      select flagged_at is not null as flagged, flag_reason as reason from players where id = ${id}`;
    return row ?? null;
  };

  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
    for (const board of BOARDS) {
      const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
        // Results from the past week count in their days: a grace longer than the retention (docs/closing.md).
        input: { ...board, title: board.id, maxScore: MAX_SCORE[board.id], closeGraceSeconds: 30 * 86_400 },
      });
      expect(created.errors).toBeUndefined();
    }
    for (const [id, friendIds] of Object.entries(FRIENDS)) {
      const set = await t.server(`mutation($id: ID!, $f: [ID!]!) { setFriends(playerId: $id, friendIds: $f) }`, { id, f: friendIds });
      expect(set.errors).toBeUndefined();
    }
    await t.server(`mutation { upsertPlayer(input: { id: "p01", displayName: "Ada" }) { id } }`);
    results.push(...generate(1, 600));
    await submitAll(t, results);
  }, 120_000);
  afterAll(() => t.close());

  it('before any flag every bucket equals the model, the cheater at the top of some', async () => {
    const buckets = modelBuckets(BOARDS, results);
    expect(buckets.some((b) => b.board.id === 'arena' && b.ranked[0]?.playerId === CHEATER)).toBe(true);
    expect(buckets.filter((b) => b.ranked.some((e) => e.playerId === CHEATER)).length).toBeGreaterThan(20);
    await expectEveryBucket();
  });

  it('refuses callers without the admin key, and bad input, changing nothing', async () => {
    const variables = { id: CHEATER, reason: 'aimbot' };
    expect(codeOf(await t.gql(FLAG, variables))).toBe('UNAUTHENTICATED');
    expect(codeOf(await t.server(FLAG, variables))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(UNFLAG, { id: CHEATER }))).toBe('UNAUTHENTICATED');
    expect(codeOf(await t.server(UNFLAG, { id: CHEATER }))).toBe('FORBIDDEN');
    expect(codeOf(await t.admin(FLAG, { id: '', reason: 'aimbot' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(FLAG, { id: 'x'.repeat(129), reason: 'aimbot' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(FLAG, { id: 'bad\u0007id', reason: 'aimbot' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(FLAG, { id: CHEATER, reason: '' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(FLAG, { id: CHEATER, reason: '   ' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(FLAG, { id: CHEATER, reason: 'r'.repeat(501) }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(UNFLAG, { id: '' }))).toBe('BAD_USER_INPUT');
    expect(await flagRow(CHEATER)).toBeNull();
    await expectEveryBucket();
  });

  it('a flagged player is in no bucket of any board, however read; the rest is untouched', async () => {
    const flagged = await t.admin<{ flagPlayer: { id: string; displayName: string | null } }>(FLAG, { id: CHEATER, reason: 'r'.repeat(500) });
    expect(flagged.errors).toBeUndefined();
    expect(flagged.data?.flagPlayer).toEqual({ id: CHEATER, displayName: null });
    // The cheater had scores but no profile: the row is created to hold the flag.
    expect(await flagRow(CHEATER)).toEqual({ flagged: true, reason: 'r'.repeat(500) });
    hidden.add(CHEATER);
    await expectEveryBucket();
    expect(await indexKeysHolding(t, CHEATER)).toEqual([]);
  });

  it('flagging again is harmless and keeps the profile', async () => {
    const again = await t.admin<{ flagPlayer: { id: string } }>(FLAG, { id: 'p01', reason: 'smurf' });
    expect(again.data?.flagPlayer).toEqual({ id: 'p01', displayName: 'Ada' });
    expect((await t.admin(FLAG, { id: 'p01', reason: 'smurf, twice' })).errors).toBeUndefined();
    expect(await flagRow('p01')).toEqual({ flagged: true, reason: 'smurf, twice' });
    hidden.add('p01');
    await expectEveryBucket();
    expect((await t.admin<{ unflagPlayer: { id: string } }>(UNFLAG, { id: 'p01' })).data?.unflagPlayer).toEqual({ id: 'p01', displayName: 'Ada' });
    hidden.delete('p01');
    expect(await flagRow('p01')).toEqual({ flagged: false, reason: null });
    await expectEveryBucket();
  });

  it('results sent while flagged are recorded, answered without standings, and still shown nowhere', async () => {
    const more = [...generate(2, 40, { cheaterOnly: true }), ...generate(3, 120)];
    const payloads = await submitAll(t, more, 30);
    more.forEach((result, i) => {
      expect(payloads[i]!.duplicate).toBe(false);
      if (result.playerId === CHEATER) expect(payloads[i]!.standings).toEqual([]);
      else expect(payloads[i]!.standings.length).toBeGreaterThan(0);
    });
    results.push(...more);
    // A replay of a result from before the flag says duplicate and shows nothing either.
    const first = results.find((r) => r.playerId === CHEATER)!;
    const [replayed] = await submitAll(t, [{ ...first, score: 1 }]);
    expect(replayed).toEqual({ duplicate: true, improved: false, standings: [] });

    const cheats = results.filter((r) => r.playerId === CHEATER);
    const [logged] = await t.database.sql<{ n: number }[]>`select count(*)::int as n from results where player_id = ${CHEATER}`;
    expect(logged!.n).toBe(cheats.length);
    // The durable board score already holds what unflagging will show.
    const best = Math.max(...cheats.filter((r) => r.board === 'arena').map((r) => r.score));
    const [stored] = await t.database.sql<{ score: number }[]>`
      select score from board_scores where board_id = 'arena' and period = 'ALL_TIME' and region = '' and player_id = ${CHEATER}`;
    expect(stored!.score).toBe(best);

    // Tops are served from a cache at most about a second old: every read agrees once it has turned over.
    await vi.waitFor(expectEveryBucket, { timeout: 5_000, interval: 100 });
    expect(await indexKeysHolding(t, CHEATER)).toEqual([]);
  });

  it('unflagging brings back exactly the scores the player would have had', async () => {
    const unflagged = await t.admin<{ unflagPlayer: { id: string } }>(UNFLAG, { id: CHEATER });
    expect(unflagged.errors).toBeUndefined();
    expect(unflagged.data?.unflagPlayer.id).toBe(CHEATER);
    expect(await flagRow(CHEATER)).toEqual({ flagged: false, reason: null });
    hidden.delete(CHEATER);
    await expectEveryBucket();
    // Unflagging someone never flagged (or unknown) changes nothing and creates nobody.
    expect((await t.admin<{ unflagPlayer: { id: string } }>(UNFLAG, { id: 'p05' })).data?.unflagPlayer).toEqual({ id: 'p05', displayName: null });
    expect(await flagRow('p05')).toBeNull();
    await expectEveryBucket();
  });

  it('a flag that lands while the player submits leaves them in no bucket once everything settles', async () => {
    const racer = generate(4, 60, { cheaterOnly: true })
      .filter((r) => r.playerId === CHEATER)
      .map((r) => ({ ...r, playerId: 'racer' }));
    const submits = racer.map((r) => submitAll(t, [r]));
    // The flag lands once the first of them is answered, with the others still on their way.
    const flag = Promise.race(submits).then(() => t.admin(FLAG, { id: 'racer', reason: 'race' }));
    await Promise.all([...submits, flag]);
    results.push(...racer);
    hidden.add('racer');
    expect(await indexKeysHolding(t, 'racer')).toEqual([]);
    await vi.waitFor(expectEveryBucket, { timeout: 5_000, interval: 100 });

    expect((await t.admin(UNFLAG, { id: 'racer' })).errors).toBeUndefined();
    hidden.delete('racer');
    await expectEveryBucket();
  });

  it('a flag that commits and takes the player out while their result waits for its index write still leaves them out', async () => {
    const { index, storage } = t.app.parts;
    const write = index.writeBoardScores.bind(index);
    // The write path's index write for this player is held (the stores stay real) until the flag
    // has committed and taken the player out: the order the flag check exists for.
    let atGate!: () => void;
    const reached = new Promise<void>((resolve) => (atGate = resolve));
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const held = vi.spyOn(index, 'writeBoardScores').mockImplementation(async (writes) => {
      if (writes.some((w) => w.score.playerId === 'late-flag')) {
        atGate();
        await gate;
      }
      return write(writes);
    });
    const checks = vi.spyOn(storage.players, 'flaggedAmong');
    const late: ModelResult = { board: 'arena', playerId: 'late-flag', matchId: 'late-1', score: 999_000, region: 'eu', achievedAt: NOW };
    try {
      const submitted = submitAll(t, [late]);
      await reached;
      expect((await t.admin(FLAG, { id: 'late-flag', reason: 'late' })).errors).toBeUndefined();
      openGate();
      const [payload] = await submitted;
      // Recorded, and answered as a flagged player's result is: with no standings.
      expect(payload).toMatchObject({ duplicate: false, standings: [] });
      // The flag check asked PostgreSQL: the flag token moved while the result was written.
      expect(checks).toHaveBeenCalledWith(['late-flag']);
    } finally {
      held.mockRestore();
      checks.mockRestore();
    }
    results.push(late);
    hidden.add('late-flag');
    expect(await indexKeysHolding(t, 'late-flag')).toEqual([]);
    await expectEveryBucket();

    expect((await t.admin(UNFLAG, { id: 'late-flag' })).errors).toBeUndefined();
    hidden.delete('late-flag');
    await expectEveryBucket();
  });

  it('a write no flag raced asks PostgreSQL nothing about flags after its index write', async () => {
    const checks = vi.spyOn(t.app.parts.storage.players, 'flaggedAmong');
    const quiet = generate(5, 12).map((r) => ({ ...r, playerId: r.playerId === CHEATER ? 'p05' : r.playerId }));
    try {
      // One at a time: a group each, each with its own flag check.
      for (const result of quiet) await submitAll(t, [result]);
      expect(checks).not.toHaveBeenCalled();
    } finally {
      checks.mockRestore();
    }
    results.push(...quiet);
    // Plain writes leave the shared top as it was read for up to its bound: wait that out.
    clock.advance(1_001);
    await expectEveryBucket();
  });

  it('the flag check reads its token once the index write was answered: after it in Redis’s order, on any topology', async () => {
    const { parts: services } = t.app;
    // Redis's own record of the order it ran this app's commands in.
    const ran: string[][] = [];
    // A MONITOR socket of its own (helpers/monitor.ts): ioredis's monitor mode throws "Command queue
    // state error" when a line arrives as it disconnects.
    const { host, port } = (t.redis as Redis).options;
    const monitor = await watchCommands(
      port!,
      (args) => {
        if (args.some((arg) => arg.startsWith(t.keyPrefix))) ran.push(args);
      },
      host,
    );
    const order: string[] = [];
    const write = services.index.writeBoardScores.bind(services.index);
    const writes = vi.spyOn(services.index, 'writeBoardScores').mockImplementation(async (...args) => {
      const placed = await write(...args);
      order.push('write answered');
      return placed;
    });
    const read = services.flagChanges.read.bind(services.flagChanges);
    const tokenReads = vi.spyOn(services.flagChanges, 'read').mockImplementation(() => {
      order.push('token read sent');
      return read();
    });
    const checks = vi.spyOn(services.storage.players, 'flaggedAmong');
    const result: ModelResult = { board: 'arena', playerId: 'Spieler-Ü', matchId: 'behind-1', score: 512, region: 'eu', achievedAt: NOW };
    const isTokenRead = (args: string[]) => args[0]!.toLowerCase() === 'hmget' && args[1] === `${t.keyPrefix}${FLAG_VERSIONS_KEY}`;
    try {
      const [payload] = await submitAll(t, [result]);
      results.push(result);
      expect(payload).toMatchObject({ duplicate: false });
      expect(payload!.standings.length).toBeGreaterThan(0);
      await until(() => ran.some(isTokenRead), 5_000, 'the token read in MONITOR');
    } finally {
      writes.mockRestore();
      tokenReads.mockRestore();
      checks.mockRestore();
      monitor.close();
    }
    // Sent once the write was answered, not queued behind it on the connection (which orders
    // nothing on a Cluster, where the token's node is not the board's); one read.
    expect(order).toEqual(['write answered', 'token read sent']);
    // ...and run by Redis after every index write of the group: the span it ends covers the write.
    const isArenaWrite = (args: string[]) =>
      args[0]!.toLowerCase() === 'evalsha' && args.slice(3).some((arg) => arg.startsWith(t.keyPrefix) && arg.includes('arena'));
    const lastWrite = ran.findLastIndex(isArenaWrite);
    expect(lastWrite).toBeGreaterThanOrEqual(0);
    expect(ran.findLastIndex(isTokenRead)).toBeGreaterThan(lastWrite);
    // No flag was raised meanwhile: the token did not move, and PostgreSQL was not asked.
    expect(checks).not.toHaveBeenCalled();
    clock.advance(1_001);
    await expectEveryBucket();
  });

  it('an open season bucket is emptied by a flag and refilled by an unflag', async () => {
    // Seasons are another feature's: set one up by hand, as its writes would leave it.
    await t.database.sql`insert into seasons (board_id, id, name, starts_at) values ('arena', 'season-x', 'X', ${NOW.toISOString()})`;
    await t.database.sql`
      insert into board_scores (board_id, period, bucket, region, player_id, score, reached_at)
      values ('arena', 'SEASON', 'season-x', '', ${CHEATER}, 77, ${NOW.toISOString()})`;
    await t.redis.zadd('lb:{arena:SEASON:season-x}', 1, CHEATER, 0, 'someone');
    expect((await t.admin(FLAG, { id: CHEATER, reason: 'again' })).errors).toBeUndefined();
    expect(await t.redis.zrange('lb:{arena:SEASON:season-x}', 0, -1)).toEqual(['someone']);
    expect((await t.admin(UNFLAG, { id: CHEATER })).errors).toBeUndefined();
    expect((await t.redis.zrange('lb:{arena:SEASON:season-x}', 0, -1)).sort()).toEqual([CHEATER, 'someone']);
    await t.database.sql`update seasons set closed_at = now() where board_id = 'arena' and id = 'season-x'`;
    await t.redis.zrem('lb:{arena:SEASON:season-x}', CHEATER);
    // A closed season's key is let go: an unflag does not bring it back.
    expect((await t.admin(UNFLAG, { id: CHEATER })).errors).toBeUndefined();
    expect(await t.redis.zrange('lb:{arena:SEASON:season-x}', 0, -1)).toEqual(['someone']);
    await expectEveryBucket();
  });

  it('an unflag leaves out buckets no longer kept', async () => {
    expect((await t.admin(FLAG, { id: CHEATER, reason: 'late' })).errors).toBeUndefined();
    // Nine days on, every DAILY bucket of the data is past its seven days of retention.
    clock.advance(9 * 86_400_000);
    expect((await t.admin(UNFLAG, { id: CHEATER })).errors).toBeUndefined();
    const buckets = modelBuckets(BOARDS, results);
    const daily = buckets.filter((b) => b.period === 'DAILY' && b.ranked.some((e) => e.playerId === CHEATER));
    expect(daily.length).toBeGreaterThan(0);
    for (const b of daily) {
      const key = `lb:{${b.board.id}:DAILY:${b.label}${b.region ? `:${b.region}` : ''}}`;
      expect(await t.redis.zscore(key, CHEATER), key).toBeNull();
    }
    for (const bucket of buckets.filter((b) => b.period !== 'DAILY')) await expectBucketMatches(t, bucket, PROBE);
  });
});
