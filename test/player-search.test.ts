import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, createDatabase } from '../src/db/client.js';
import { searchPlayers } from '../src/db/players.js';
import { createTestStores } from './helpers/test-app.js';

/**
 * The console's player search (db/players.ts searchPlayers) finds a player who has results but no
 * profile by a prefix of their id, as it finds one with a profile: searching "ch" finds `chen`,
 * whoever else plays. The walk over board_scores is bounded by the answer's size and goes by its
 * index, never a scan of the board.
 */
describe('the player search', () => {
  let stores: Awaited<ReturnType<typeof createTestStores>>;
  let database: Database;

  beforeAll(async () => {
    stores = await createTestStores();
    database = createDatabase(stores.databaseUrl);
    const { sql } = database;
    await sql`insert into players (id, display_name) values ('charlie', 'Charlie'), ('ada', 'Chloé Ada'), ('chx', 'Has a profile')`;
    // Board scores as results leave them: an ALL_TIME row per board and region list (and a SUM
    // board's other periods), for players with a profile and without.
    const rows: { board_id: string; period: string; bucket: string; region: string; player_id: string; score: number; reached_at: string }[] = [];
    const add = (player: string, board: string, region = '', period = 'ALL_TIME', bucket = 'all') =>
      rows.push({ board_id: board, period, bucket, region, player_id: player, score: 10, reached_at: '2026-12-01T00:00:00Z' });
    for (const board of ['race', 'global', 'arena']) {
      add('chen', board);
      add('chen', board, 'eu');
      add('charlie', board);
      add('chx', board);
    }
    add('Chiara', 'race');
    add('chen', 'arena', '', 'DAILY', '2026-12-01');
    add('christo', 'arena', '', 'WEEKLY', '2026-W49'); // only a SUM board's weekly row: not an ALL_TIME one
    add('ch%', 'race');
    add('bob', 'race');
    // Many players past the prefix, so that a scan of the board would show against the index.
    for (let i = 0; i < 20_000; i++) add(`player-${String(i).padStart(5, '0')}`, 'race');
    for (let from = 0; from < rows.length; from += 5_000) await sql`insert into board_scores ${sql(rows.slice(from, from + 5_000))}`;
    await sql`analyze board_scores`;
  });
  afterAll(async () => {
    await database?.close();
    await stores?.drop();
  });

  const ids = async (text: string, limit = 20) => (await searchPlayers(database.sql, text, limit)).map((player) => player.id);

  // First, while nothing has searched yet, so that the counters hold only this search.
  it('walks the index, a few rows a player found, rather than the board', async () => {
    const { sql } = database;
    // A connection of its own, whose counters it sends to the statistics at once when told.
    const own = postgres(stores.databaseUrl, { max: 1, onnotice: () => {} });
    /** board_scores' sequential scans and the rows the search index gave, as PostgreSQL counts them. */
    const counts = async () => {
      const [row] = await sql<{ seq: number; read: number; scans: number }[]>`
        select t.seq_scan::float8 as seq, i.idx_tup_read::float8 as read, i.idx_scan::float8 as scans
        from pg_stat_user_tables t join pg_stat_user_indexes i on i.relid = t.relid
        where t.relname = 'board_scores' and i.indexrelname = 'board_scores_player_search_idx'`;
      return row!;
    };
    const before = await counts();
    try {
      expect(await searchPlayers(own, 'player-', 5)).toHaveLength(5);
      await own`select pg_stat_force_next_flush()`;
    } finally {
      await own.end();
    }
    await expect.poll(async () => (await counts()).scans, { timeout: 5_000, interval: 100 }).toBeGreaterThan(before.scans);
    const after = await counts();
    expect(after.seq - before.seq).toBe(0);
    // Five players found, each one probe of the index (and one more that finds the range's end):
    // a handful of rows, not the 20,000 players under the prefix.
    expect(after.read - before.read).toBeLessThanOrEqual(12);
  });
  it('finds players with results but no profile by a prefix of their id, in any case, each once', async () => {
    // chen: no profile, on three boards and two regions; Chiara: no profile, capital C; charlie and
    // chx have profiles; ada's name holds "ch". ch% has no profile and is found only literally.
    expect(await ids('ch')).toEqual(['ch%', 'charlie', 'chen', 'Chiara', 'chx', 'ada']);
    expect(await ids('CH')).toEqual(['ch%', 'charlie', 'chen', 'Chiara', 'chx', 'ada']);
    expect(await searchPlayers(database.sql, 'chen', 20)).toEqual([{ id: 'chen', displayName: null, avatarUrl: null }]);
    expect(await ids('ch%')).toEqual(['ch%']);
    expect(await ids('chi')).toEqual(['Chiara']);
    expect(await ids('nobody')).toEqual([]);
  });

  it('keeps the exact id first and answers at most the limit, the first in order', async () => {
    expect(await ids('chen', 1)).toEqual(['chen']);
    expect(await ids('ch', 3)).toEqual(['ch%', 'charlie', 'chen']);
    expect(await ids('player-', 3)).toEqual(['player-00000', 'player-00001', 'player-00002']);
    expect(await ids('player-19999')).toEqual(['player-19999']);
  });
});
