import { beforeAll, describe, expect, it } from 'vitest';
import { type ModelBoard, type ModelResult, type ViewProbe, expectBucketMatches, indexKeysHolding, modelBuckets, submitAll } from './helpers/board-views.js';
import { type Period, keepsBoardScores } from '../src/model/board.js';
import { seeded } from './helpers/random.js';
import { type TestApp, codeOf, startTestApp } from './helpers/test-app.js';

/**
 * deletePlayer against the tables themselves and a plain model of the boards: everything of the
 * player goes, in every board, and nothing of anyone else; frozen season results keep their ranks.
 */

// A date to come (2037 has 2026's calendar): the app sets Redis expiries from this clock, so a
// past date would expire the keys at once.
const NOW = new Date('2037-11-29T12:00:00.000Z');
const VICTIM = 'victim';
const BOARDS: ModelBoard[] = [
  { id: 'arena', order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME', 'WEEKLY', 'DAILY'], regions: ['eu', 'us'] },
  { id: 'marathon', order: 'LOW_FIRST', aggregate: 'SUM', periods: ['ALL_TIME', 'MONTHLY'], regions: ['eu'] },
];
const PLAYERS = Array.from({ length: 15 }, (_, i) => `p${String(i).padStart(2, '0')}`);
const FRIENDS: Record<string, string[]> = { [VICTIM]: ['p01', 'p02'], p03: [VICTIM, 'p04'], p05: ['p06'] };
const PROBE: ViewProbe = { players: [VICTIM, 'p03'], friendsOf: { p03: FRIENDS.p03!, [VICTIM]: FRIENDS[VICTIM]! } };

function generate(seed: number, count: number): ModelResult[] {
  const next = seeded(seed);
  return Array.from({ length: count }, (_, i) => {
    const board = BOARDS[i % BOARDS.length]!;
    return {
      board: board.id,
      playerId: next() < 0.2 ? VICTIM : PLAYERS[Math.floor(next() * PLAYERS.length)]!,
      matchId: `m${i}`,
      score: board.aggregate === 'SUM' ? 1 + Math.floor(next() * 40) : Math.floor(next() * 1_000),
      region: [null, ...board.regions][Math.floor(next() * (board.regions.length + 1))]!,
      achievedAt: new Date(NOW.getTime() - Math.floor(next() * 9_000) * 60_000),
    };
  });
}

interface RowCounts {
  players: number;
  friends: number;
  friendOf: number;
  results: number;
  boardScores: number;
  seasonResults: number;
}

const DELETE = `mutation($id: ID!) { deletePlayer(playerId: $id) }`;

describe('deletePlayer', () => {
  let t: TestApp;
  const results = generate(7, 400);

  /** How many rows of each table name a player, counted with plain SQL. */
  const rowsOf = async (id: string) => {
    const [counts] = await t.database.sql<RowCounts[]>`
      select (select count(*) from players where id = ${id})::int as players,
             (select count(*) from friendships where player_id = ${id})::int as friends,
             (select count(*) from friendships where friend_id = ${id})::int as "friendOf",
             (select count(*) from results where player_id = ${id})::int as results,
             (select count(*) from board_scores where player_id = ${id})::int as "boardScores",
             (select count(*) from frozen_standings where player_id = ${id})::int as "seasonResults"`;
    return counts!;
  };
  const everyone = () => [VICTIM, ...PLAYERS];
  /** The model's buckets the victim is in. */
  const victimBuckets = () => modelBuckets(BOARDS, results).filter((bucket) => bucket.ranked.some((entry) => entry.playerId === VICTIM));
  const snapshot = async () => Object.fromEntries(await Promise.all(everyone().map(async (id) => [id, await rowsOf(id)] as const)));

  beforeAll(async () => {
    t = await startTestApp({ now: () => NOW });
    for (const board of BOARDS) {
      const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
        // Results from the past week count in their days: a grace longer than that (docs/closing.md).
        input: { ...board, title: board.id, maxScore: 100_000, closeGraceSeconds: 30 * 86_400 },
      });
      expect(created.errors).toBeUndefined();
    }
    for (const id of everyone()) {
      const made = await t.server(`mutation($id: ID!, $name: String) { upsertPlayer(input: { id: $id, displayName: $name }) { id } }`, { id, name: id });
      expect(made.errors).toBeUndefined();
    }
    for (const [id, friendIds] of Object.entries(FRIENDS)) {
      const set = await t.server(`mutation($id: ID!, $f: [ID!]!) { setFriends(playerId: $id, friendIds: $f) }`, { id, f: friendIds });
      expect(set.errors).toBeUndefined();
    }
    await submitAll(t, results);
    // Seasons are another feature's; lay out a closed one (frozen) and an open one by hand.
    await t.database.sql`
      insert into seasons (board_id, id, name, starts_at, closed_at) values
        ('arena', 's1', 'One', '2037-10-01T00:00:00Z', '2037-11-01T00:00:00Z'),
        ('arena', 's2', 'Two', '2037-11-01T00:00:00Z', null)`;
    await t.database.sql`
      insert into frozen_standings (board_id, period, bucket, region, rank, player_id, score, reached_at, metadata) values
        ('arena', 'SEASON', 's1', '', 1, 'p01', 900, '2037-10-02T00:00:00Z', '{"car": "a"}'),
        ('arena', 'SEASON', 's1', '', 2, ${VICTIM}, 800, '2037-10-03T00:00:00Z', '{"car": "b"}'),
        ('arena', 'SEASON', 's1', '', 3, 'p02', 700, '2037-10-04T00:00:00Z', null),
        ('marathon', 'SEASON', 's9', '', 1, ${VICTIM}, 5, '2037-10-05T00:00:00Z', null)`;
    await t.database.sql`
      insert into board_scores (board_id, period, bucket, region, player_id, score, reached_at)
      values ('arena', 'SEASON', 's2', '', ${VICTIM}, 950, '2037-11-20T00:00:00Z')`;
    await t.redis.zadd('lb:{arena:SEASON:s2}', 2, VICTIM, 1, 'p01');
  }, 120_000);

  it('the victim is everywhere before: tables, index and every board view', async () => {
    const rows = await rowsOf(VICTIM);
    expect(rows).toEqual({
      players: 1,
      friends: 2,
      friendOf: 1,
      results: results.filter((r) => r.playerId === VICTIM).length,
      boardScores: rows.boardScores,
      seasonResults: 2,
    });
    // Rows are kept for the buckets the board keeps (keepsBoardScores), the rest derived from the
    // log; the index holds the victim in every bucket of the model, and in the open season laid out by hand.
    const held = victimBuckets();
    expect(held.length).toBeGreaterThan(10);
    expect(rows.boardScores).toBe(held.filter((b) => keepsBoardScores(b.board, b.period as Period)).length + 1);
    expect((await indexKeysHolding(t, VICTIM)).length).toBe(held.length + 1);
    for (const bucket of modelBuckets(BOARDS, results)) await expectBucketMatches(t, bucket, PROBE);
  });

  it('refuses callers without the admin key, and bad ids, erasing nothing', async () => {
    const before = await snapshot();
    expect(codeOf(await t.gql(DELETE, { id: VICTIM }))).toBe('UNAUTHENTICATED');
    expect(codeOf(await t.server(DELETE, { id: VICTIM }))).toBe('FORBIDDEN');
    expect(codeOf(await t.admin(DELETE, { id: '' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(DELETE, { id: 'y'.repeat(129) }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(DELETE, { id: 'tab\there' }))).toBe('BAD_USER_INPUT');
    expect(await snapshot()).toEqual(before);
    expect((await indexKeysHolding(t, VICTIM)).length).toBe(victimBuckets().length + 1);
  });

  it('erases the player everywhere and nothing of anyone else', async () => {
    // Index outbox rows still waiting (dated ahead, so the catch-up job leaves them): a group's,
    // naming the victim beside another player, and one of the shape before migration 0010.
    const [group] = await t.database.sql<{ id: number }[]>`
      insert into index_backlog (board_ids, player_ids, enqueued_at)
      values (array['arena', 'arena', 'marathon'], array[${VICTIM}, 'p01', ${VICTIM}], now() + interval '1 hour') returning id`;
    await t.database.sql`insert into index_backlog (board_id, player_id, enqueued_at) values ('arena', ${VICTIM}, now() + interval '1 hour')`;
    const before = await snapshot();
    const response = await t.admin<{ deletePlayer: boolean }>(DELETE, { id: VICTIM });
    expect(response.errors).toBeUndefined();
    expect(response.data?.deletePlayer).toBe(true);

    expect(await rowsOf(VICTIM)).toEqual({ players: 0, friends: 0, friendOf: 0, results: 0, boardScores: 0, seasonResults: 0 });
    // Others lose only their friendships with the victim.
    const after = await snapshot();
    for (const id of PLAYERS) {
      const friendsWithVictim = FRIENDS[id]?.includes(VICTIM) ? 1 : 0;
      const friendOfVictim = FRIENDS[VICTIM]!.includes(id) ? 1 : 0;
      expect(after[id], id).toEqual({ ...before[id]!, friends: before[id]!.friends - friendsWithVictim, friendOf: before[id]!.friendOf - friendOfVictim });
    }
    // The outbox names the victim no more; the other player of the group's row stays.
    const waiting = await t.database.sql`select id, board_id, player_id, board_ids, player_ids from index_backlog where enqueued_at > now()`;
    expect(waiting).toEqual([{ id: group!.id, board_id: null, player_id: null, board_ids: ['arena'], player_ids: ['p01'] }]);
    await t.database.sql`delete from index_backlog where id = ${group!.id}`;
    const p03 = await t.database.sql<{ friend_id: string }[]>`select friend_id from friendships where player_id = 'p03'`;
    expect(p03.map((row) => row.friend_id)).toEqual(['p04']);

    // Frozen seasons keep every rank; the victim's are there, nameless.
    const frozen = await t.database.sql<{ board_id: string; season_id: string; rank: number; player_id: string | null; score: number; metadata: unknown }[]>`
      select board_id, bucket as season_id, rank, player_id, score, metadata from frozen_standings where period = 'SEASON' order by board_id, bucket, rank`;
    expect(frozen).toEqual([
      { board_id: 'arena', season_id: 's1', rank: 1, player_id: 'p01', score: 900, metadata: { car: 'a' } },
      { board_id: 'arena', season_id: 's1', rank: 2, player_id: null, score: 800, metadata: null },
      { board_id: 'arena', season_id: 's1', rank: 3, player_id: 'p02', score: 700, metadata: null },
      { board_id: 'marathon', season_id: 's9', rank: 1, player_id: null, score: 5, metadata: null },
    ]);

    // The index: no sorted set names the victim, the open season's included; every view equals the model without them.
    expect(await indexKeysHolding(t, VICTIM)).toEqual([]);
    expect(await t.redis.zrange('lb:{arena:SEASON:s2}', 0, -1)).toEqual(['p01']);
    // Friend lists lost the victim both ways.
    const probe: ViewProbe = { players: PROBE.players, friendsOf: { p03: ['p04'], [VICTIM]: [], p01: [] } };
    for (const bucket of modelBuckets(BOARDS, results, new Set([VICTIM]))) await expectBucketMatches(t, bucket, probe);
    const profile = await t.gql<{ player: unknown }>(`{ player(id: "victim") { id } }`);
    expect(profile.data?.player).toBeNull();
  });

  it('a second call, or a player never seen, answers false', async () => {
    expect((await t.admin<{ deletePlayer: boolean }>(DELETE, { id: VICTIM })).data?.deletePlayer).toBe(false);
    expect((await t.admin<{ deletePlayer: boolean }>(DELETE, { id: 'never-seen' })).data?.deletePlayer).toBe(false);
  });

  it('a player known only as someone’s friend, or only by a frozen rank, is still erased', async () => {
    await t.server(`mutation { setFriends(playerId: "p07", friendIds: ["ghost"]) }`);
    await t.database
      .sql`insert into frozen_standings (board_id, period, bucket, region, rank, player_id, score, reached_at) values ('arena', 'SEASON', 's1', '', 4, 'phantom', 1, now())`;
    expect((await t.admin<{ deletePlayer: boolean }>(DELETE, { id: 'ghost' })).data?.deletePlayer).toBe(true);
    expect((await t.admin<{ deletePlayer: boolean }>(DELETE, { id: 'phantom' })).data?.deletePlayer).toBe(true);
    expect(await rowsOf('p07')).toMatchObject({ friends: 0 });
    expect(await rowsOf('phantom')).toMatchObject({ seasonResults: 0 });
    expect((await t.admin<{ deletePlayer: boolean }>(DELETE, { id: 'ghost' })).data?.deletePlayer).toBe(false);
  });

  it('a flagged player can be erased, and comes back only through new results', async () => {
    expect((await t.admin(`mutation { flagPlayer(playerId: "p08", reason: "x") { id } }`)).errors).toBeUndefined();
    expect((await t.admin<{ deletePlayer: boolean }>(DELETE, { id: 'p08' })).data?.deletePlayer).toBe(true);
    expect(await rowsOf('p08')).toEqual({ players: 0, friends: 0, friendOf: 0, results: 0, boardScores: 0, seasonResults: 0 });
    expect(await indexKeysHolding(t, 'p08')).toEqual([]);
    // No flag survives the erasure: a new result is shown again, alone.
    const [payload] = await submitAll(t, [{ board: 'arena', playerId: 'p08', matchId: 'after', score: 1, region: null, achievedAt: NOW }]);
    expect(payload!.standings.length).toBeGreaterThan(0);
    const standing = await t.gql<{ standing: { score: number } }>(`{ standing(board: "arena", playerId: "p08") { score } }`);
    expect(standing.data?.standing).toEqual({ score: 1 });
  });
});
