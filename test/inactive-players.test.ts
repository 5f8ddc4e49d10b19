import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, codeOf, startTestApp } from './helpers/test-app.js';
import { movableClock } from './helpers/clock.js';
import { labelsAt, rankEntries } from './helpers/oracle.js';
import { readAllPages } from './helpers/rank-views.js';
import { type ModelResult, submitInput } from './helpers/board-views.js';
import { removeInactiveOnce } from '../src/jobs/inactive-players.js';
import { measureBucketDrift } from '../src/writes/board-buckets.js';
import { resolveBoardBucket } from '../src/services/buckets.js';

/**
 * Inactive players leave a board's ALL_TIME and SEASON sorted sets (issue 54 part 4), checked
 * against a plain model of the results with an injected clock: who is inactive is worked out here
 * from the results' achieved times and the board's days, and every list, size and rank the service
 * serves is compared with the model's ranking of the active players alone.
 */

const DAY = 86_400_000;
const DAYS = 30;

interface Row {
  rank: number;
  score: number;
  id: string;
}

const BOARDS = [
  { id: 'Inactive.One', shards: 1, rankStyle: 'ORDINAL', inactiveAfterDays: DAYS },
  { id: 'Inactive.Sharded-Dense', shards: 4, rankStyle: 'DENSE', inactiveAfterDays: DAYS },
  { id: 'Inactive.Never', shards: 1, rankStyle: 'ORDINAL', inactiveAfterDays: null },
] as const;

const PAGES = `query($b: ID!, $p: Period!, $r: String, $a: String) {
  standings(board: $b, period: $p, region: $r, first: 7, after: $a) { edges { node { rank score percentile player { id } } } pageInfo { hasNextPage endCursor } } }`;

describe('inactive players leave the index', () => {
  const clock = movableClock();
  let t: TestApp;
  let other: TestApp;
  const results: ModelResult[] = [];
  const seasonStart = new Map<string, number>();
  let match = 0;

  const submit = async (batch: ModelResult[]) => {
    const answer = await t.server(`mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`, {
      inputs: batch.map(submitInput),
    });
    expect(answer.errors).toBeUndefined();
    results.push(...batch);
  };

  /** A wave of results on every board, achieved in the last minute of the clock. */
  const wave = (players: string[], score: (i: number) => number) => {
    const now = clock.now().getTime();
    return BOARDS.flatMap((board) =>
      players.map((playerId, i) => ({
        board: board.id,
        playerId,
        matchId: `m${match++}`,
        score: score(i),
        region: i % 2 === 0 ? 'EU' : null,
        achievedAt: new Date(now - 60_000 + i * 1_000),
      })),
    );
  };

  /** The model: a bucket's BEST board scores of the players active now (all when `days` is null), ranked. */
  function expected(board: string, period: 'ALL_TIME' | 'SEASON', region: string | null, days: number | null, style: string): Row[] {
    const cutoff = clock.now().getTime() - (days ?? Infinity) * DAY;
    const mine = results.filter((r) => r.board === board);
    const last = new Map<string, number>();
    // Activity is per list: any result for the global one, the region's results for a region's.
    for (const r of mine) if (region === null || r.region === region) last.set(r.playerId, Math.max(last.get(r.playerId) ?? 0, r.achievedAt.getTime()));
    const best = new Map<string, { playerId: string; score: number; reachedAt: number }>();
    for (const r of mine) {
      if (region !== null && r.region !== region) continue;
      if (period === 'SEASON' && r.achievedAt.getTime() < seasonStart.get(board)!) continue;
      if (days !== null && last.get(r.playerId)! < cutoff) continue;
      const held = best.get(r.playerId);
      const at = r.achievedAt.getTime();
      if (!held || r.score > held.score || (r.score === held.score && at < held.reachedAt))
        best.set(r.playerId, { playerId: r.playerId, score: r.score, reachedAt: at });
    }
    const ranked = rankEntries({ order: 'HIGH_FIRST' }, best.values());
    const distinct = [...new Set(ranked.map((e) => e.score))];
    return ranked.map((e, i) => ({ rank: style === 'DENSE' ? distinct.indexOf(e.score) + 1 : i + 1, score: e.score, id: e.playerId }));
  }

  const served = async (board: string, period: string, region: string | null): Promise<Row[]> =>
    (await readAllPages(t, 'standings', PAGES, { b: board, p: period, r: region })).map((row) => ({ rank: row.rank, score: row.score, id: row.player.id }));

  const sizeOf = async (board: string, period: string, region: string | null, bucket: string | null = null) => {
    const answer = await t.gql<{ board: { size: number } }>(
      `query($b: ID!, $p: Period!, $r: String, $k: String) { board(id: $b) { size(period: $p, region: $r, bucket: $k) } }`,
      {
        b: board,
        p: period,
        r: region,
        k: bucket,
      },
    );
    expect(answer.errors).toBeUndefined();
    return answer.data!.board.size;
  };

  /** Every ALL_TIME and SEASON list of the board (global and EU), its sizes too, against the model. */
  async function expectLists(board: string, days: number | null, style: string) {
    for (const period of ['ALL_TIME', 'SEASON'] as const) {
      for (const region of [null, 'EU']) {
        const want = expected(board, period, region, days, style);
        expect(await served(board, period, region), `${board} ${period} ${region}`).toEqual(want);
        expect(await sizeOf(board, period, region)).toBe(want.length);
      }
    }
  }

  const removedMetric = async (board: string) =>
    (await t.app.parts.metrics.inactivePlayersRemoved.get()).values.find((v) => v.labels.board === board)?.value ?? 0;

  const old = Array.from({ length: 24 }, (_, i) => `old-${String(i).padStart(2, '0')}`);
  const fresh = Array.from({ length: 16 }, (_, i) => `new-${String(i).padStart(2, '0')}`);

  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
    other = await startTestApp({ now: clock.now, shareStoresOf: { databaseUrl: t.databaseUrl, keyPrefix: t.keyPrefix } });
    for (const board of BOARDS) {
      const created = await t.admin<{ createBoard: { inactiveAfterDays: number | null } }>(
        `mutation($input: CreateBoardInput!) { createBoard(input: $input) { inactiveAfterDays } }`,
        {
          input: {
            id: board.id,
            title: board.id,
            maxScore: 1_000,
            periods: ['ALL_TIME', 'SEASON', 'DAILY'],
            regions: ['EU'],
            retention: { daily: 100 },
            shards: board.shards,
            rankStyle: board.rankStyle,
            ...(board.inactiveAfterDays === null ? {} : { inactiveAfterDays: board.inactiveAfterDays }),
          },
        },
      );
      expect(created.errors).toBeUndefined();
      expect(created.data!.createBoard.inactiveAfterDays).toBe(board.inactiveAfterDays);
      const season = await t.admin<{ startSeason: { startsAt: string } }>(`mutation($b: ID!) { startSeason(board: $b, name: "S1") { startsAt } }`, {
        b: board.id,
      });
      expect(season.errors).toBeUndefined();
      seasonStart.set(board.id, Date.parse(season.data!.startSeason.startsAt));
    }
    clock.advance(3_600_000);
    // Scores with long runs of ties, so DENSE ranks differ from ORDINAL ones.
    await submit(wave(old, (i) => 100 + ((i * 7) % 6) * 50));
    clock.advance(20 * DAY);
    // Three old players play again, lower than their best: they stay active and keep that best; old-02
    // (EU before) without a region this time, so it stays active globally and not in EU.
    await submit(wave([...fresh, 'old-00', 'old-02', 'old-01'], (i) => 90 + ((i * 5) % 4) * 50));
    clock.advance(15 * DAY);
  }, 120_000);

  afterAll(async () => {
    await other?.close();
    await t?.close();
  });

  it('refuses days outside 1 to 36,500 with BAD_USER_INPUT naming the field', async () => {
    for (const days of [0, -3, 36_501]) {
      const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
        input: { id: `Bad.${days}`, title: 'x', maxScore: 10, inactiveAfterDays: days },
      });
      expect(codeOf(created), String(days)).toBe('BAD_USER_INPUT');
      expect(created.errors![0]!.message).toContain('inactiveAfterDays');
      const updated = await t.admin(`mutation($input: UpdateBoardInput!) { updateBoard(input: $input) { id } }`, {
        input: { id: BOARDS[0].id, inactiveAfterDays: days },
      });
      expect(codeOf(updated)).toBe('BAD_USER_INPUT');
      expect(updated.errors![0]!.message).toContain('inactiveAfterDays');
    }
  });

  it('before the job every player is ranked; after it only the active ones, exactly, on one shard and on a sharded DENSE board', async () => {
    for (const board of BOARDS) await expectLists(board.id, null, board.rankStyle);
    const dayLabel = labelsAt(results.find((r) => r.playerId === 'old-03')!.achievedAt).DAILY!;
    const dailyBefore = await Promise.all(BOARDS.map((board) => sizeOf(board.id, 'DAILY', null, dayLabel)));
    expect(dailyBefore.every((size) => size > 0)).toBe(true);

    const pass = await removeInactiveOnce(t.app.parts, { batch: 5, pauseMs: 1 });
    expect(pass.ran).toBe(true);
    expect(pass.returned).toBe(0);
    let removedWanted = 0;
    for (const board of BOARDS) {
      await expectLists(board.id, board.inactiveAfterDays, board.rankStyle);
      const out = board.inactiveAfterDays === null ? 0 : countOut(board.id);
      expect(await removedMetric(board.id), board.id).toBe(out);
      removedWanted += out;
    }
    expect(pass.removed).toBe(removedWanted);
    expect(removedWanted).toBeGreaterThan(0);
    // The DAILY buckets are left alone (they expire on their own).
    expect(await Promise.all(BOARDS.map((board) => sizeOf(board.id, 'DAILY', null, dayLabel)))).toEqual(dailyBefore);

    // Out of the index, still in PostgreSQL.
    const [row] = await t.database.sql<
      { n: number }[]
    >`select count(*)::int as n from board_scores where board_id = ${BOARDS[0].id} and period = 'ALL_TIME' and region = ''`;
    expect(row?.n).toBe(old.length + fresh.length);

    // Neither ranked nor counted in any read: standing, around, friends.
    const board = BOARDS[1].id;
    const standing = await t.gql<{ standing: unknown }>(`query($b: ID!) { standing(board: $b, playerId: "old-05") { rank } }`, { b: board });
    expect(standing.data!.standing).toBeNull();
    const around = await t.gql<{ around: unknown[] }>(`query($b: ID!) { around(board: $b, playerId: "old-05", radius: 3) { rank } }`, { b: board });
    expect(around.data!.around).toEqual([]);
    expect((await t.server(`mutation { setFriends(playerId: "new-01", friendIds: ["old-05", "new-02", "old-00"]) }`)).errors).toBeUndefined();
    const friends = await t.gql<{ friends: { rank: number; player: { id: string } }[] }>(
      `query($b: ID!) { friends(board: $b, playerId: "new-01") { rank player { id } } }`,
      {
        b: board,
      },
    );
    const want = expected(board, 'ALL_TIME', null, DAYS, 'DENSE').filter((row) => ['new-01', 'new-02', 'old-00'].includes(row.id));
    expect(friends.data!.friends.map((f) => ({ rank: f.rank, id: f.player.id }))).toEqual(want.map((row) => ({ rank: row.rank, id: row.id })));

    // The drift gauge does not count them as missing.
    for (const b of BOARDS) {
      for (const period of ['ALL_TIME', 'SEASON']) {
        const at = await resolveBoardBucket(t.app.parts, { board: b.id, period: period as 'ALL_TIME', bucket: null, region: null });
        expect((await measureBucketDrift(t.app.parts, at)).drift, `${b.id} ${period}`).toBe(0);
      }
    }
    // A real drift is still one: an active player missing.
    const at = await resolveBoardBucket(t.app.parts, { board: BOARDS[0].id, period: 'ALL_TIME', bucket: null, region: null });
    const key = `lb:{${BOARDS[0].id}:ALL_TIME:all}`;
    const packed = await t.redis.zscore(key, 'new-03');
    expect(packed).not.toBeNull();
    await t.redis.zrem(key, 'new-03');
    expect((await measureBucketDrift(t.app.parts, at)).drift).toBe(1);
    await t.redis.zadd(key, packed!, 'new-03');
    expect((await measureBucketDrift(t.app.parts, at)).drift).toBe(0);
  }, 120_000);

  /** How many members the model says leave a board: inactive players in each ALL_TIME and SEASON list, global and EU. */
  function countOut(board: string): number {
    let out = 0;
    for (const period of ['ALL_TIME', 'SEASON'] as const) {
      for (const region of [null, 'EU'])
        out += expected(board, period, region, null, 'ORDINAL').length - expected(board, period, region, DAYS, 'ORDINAL').length;
    }
    return out;
  }

  it('a returning player comes back with their best, even when their new result is worse; a rebuild brings everyone back and the next pass takes them out again', async () => {
    for (const board of BOARDS.slice(0, 2)) {
      await submit([{ board: board.id, playerId: 'old-05', matchId: `m${match++}`, score: 1, region: null, achievedAt: clock.now() }]);
      const standing = await t.gql<{ standing: { score: number } | null }>(`query($b: ID!) { standing(board: $b, playerId: "old-05") { score } }`, {
        b: board.id,
      });
      expect(standing.data!.standing?.score).toBe(results.find((r) => r.board === board.id && r.playerId === 'old-05')!.score);
      await expectLists(board.id, DAYS, board.rankStyle);
    }
    const board = BOARDS[1];
    for (const period of ['ALL_TIME', 'SEASON']) {
      const rebuilt = await t.admin<{ rebuildBoard: number }>(`mutation($b: ID!, $p: Period!) { rebuildBoard(board: $b, period: $p) }`, {
        b: board.id,
        p: period,
      });
      expect(rebuilt.errors).toBeUndefined();
      expect(rebuilt.data!.rebuildBoard).toBe(expected(board.id, period as 'ALL_TIME', null, null, 'DENSE').length);
      expect(await served(board.id, period, null)).toEqual(expected(board.id, period as 'ALL_TIME', null, null, 'DENSE'));
    }
    const pass = await removeInactiveOnce(t.app.parts, { batch: 3, pauseMs: 0 });
    expect(pass.removed).toBe(
      expected(board.id, 'ALL_TIME', null, null, 'DENSE').length -
        expected(board.id, 'ALL_TIME', null, DAYS, 'DENSE').length +
        (expected(board.id, 'SEASON', null, null, 'DENSE').length - expected(board.id, 'SEASON', null, DAYS, 'DENSE').length),
    );
    for (const b of BOARDS) await expectLists(b.id, b.inactiveAfterDays, b.rankStyle);
  }, 120_000);

  it('null never removes anyone; set later by updateBoard, the next pass removes; a field left out keeps it, null clears it', async () => {
    const never = BOARDS[2].id;
    const update = (input: Record<string, unknown>) =>
      t.admin<{ updateBoard: { inactiveAfterDays: number | null } }>(
        `mutation($input: UpdateBoardInput!) { updateBoard(input: $input) { inactiveAfterDays } }`,
        {
          input: { id: never, ...input },
        },
      );
    expect((await removeInactiveOnce(t.app.parts)).ran).toBe(true);
    await expectLists(never, null, 'ORDINAL');
    expect((await update({ inactiveAfterDays: DAYS })).data!.updateBoard.inactiveAfterDays).toBe(DAYS);
    expect((await update({ title: 'Renamed' })).data!.updateBoard.inactiveAfterDays).toBe(DAYS);
    const pass = await removeInactiveOnce(t.app.parts, { pauseMs: 0 });
    expect(pass.removed).toBe(countOut(never));
    await expectLists(never, DAYS, 'ORDINAL');
    expect((await update({ inactiveAfterDays: null })).data!.updateBoard.inactiveAfterDays).toBeNull();
    const read = await other.gql<{ board: { inactiveAfterDays: number | null } }>(`query($b: ID!) { board(id: $b) { inactiveAfterDays } }`, { b: never });
    expect(read.data!.board.inactiveAfterDays).toBeNull();
  }, 120_000);

  it('the clock decides: moved on past the days, every player is out', async () => {
    clock.advance(31 * DAY);
    await removeInactiveOnce(t.app.parts, { pauseMs: 0 });
    for (const board of BOARDS.slice(0, 2)) {
      for (const period of ['ALL_TIME', 'SEASON']) expect(await sizeOf(board.id, period, null)).toBe(0);
      await expectLists(board.id, DAYS, board.rankStyle);
    }
  }, 120_000);

  it('two processes running the job at once take turns: one passes, the other skips while it holds the lock', async () => {
    // Everyone back (a rebuild), then two passes at once.
    for (const period of ['ALL_TIME', 'SEASON']) {
      for (const region of [null, 'EU']) {
        const rebuilt = await t.admin(`mutation($b: ID!, $p: Period!, $r: String) { rebuildBoard(board: $b, period: $p, region: $r) }`, {
          b: BOARDS[0].id,
          p: period,
          r: region,
        });
        expect(rebuilt.errors).toBeUndefined();
      }
    }
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const first = removeInactiveOnce(t.app.parts, {
      pauseMs: 0,
      afterStep: async () => {
        entered();
        await held;
      },
    });
    await inside;
    const second = await removeInactiveOnce(other.app.parts, { pauseMs: 0 });
    expect(second).toEqual({ ran: false, removed: 0, returned: 0, skipped: 0 });
    release();
    const done = await first;
    expect(done.ran).toBe(true);
    expect(done.removed).toBe(countOut(BOARDS[0].id));
    // Its turn now: nothing left to take out.
    expect(await removeInactiveOnce(other.app.parts, { pauseMs: 0 })).toEqual({ ran: true, removed: 0, returned: 0, skipped: 0 });
    await expectLists(BOARDS[0].id, DAYS, 'ORDINAL');
  }, 120_000);
  it('a result landing between the check and the removal is not lost: the player is written back, with their best', async () => {
    const board = BOARDS[0];
    const rebuilt = await t.admin(`mutation($b: ID!) { rebuildBoard(board: $b) }`, { b: board.id });
    expect(rebuilt.errors).toBeUndefined();
    let returning: string | undefined;
    const pass = await removeInactiveOnce(t.app.parts, {
      pauseMs: 0,
      beforeRemoval: async (ids) => {
        if (returning) return;
        returning = ids[0]!;
        // Committed and written to the index before the removal, worse than their best.
        await submit([{ board: board.id, playerId: returning, matchId: `m${match++}`, score: 0, region: null, achievedAt: clock.now() }]);
      },
    });
    expect(returning).toBeDefined();
    expect(pass.returned).toBe(1);
    const best = Math.max(...results.filter((r) => r.board === board.id && r.playerId === returning).map((r) => r.score));
    const standing = await t.gql<{ standing: { score: number } | null }>(`query($b: ID!, $p: ID!) { standing(board: $b, playerId: $p) { score } }`, {
      b: board.id,
      p: returning,
    });
    expect(standing.data!.standing?.score).toBe(best);
    await expectLists(board.id, DAYS, board.rankStyle);
  }, 120_000);
});
