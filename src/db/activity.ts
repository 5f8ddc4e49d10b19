import type { Sql } from 'postgres';
import { whileUnbounded } from './client.js';
import { type BoardScoreList, playersOfList } from './board-scores.js';

/**
 * Players' activity on a board, for boards with inactiveAfterDays (jobs/inactive-players.ts): a
 * player is active in a list while they have a result in it achieved at or after a cutoff: any
 * result on the board for the global list, a result sent with the region for a region's list (the
 * results that list is made of, and exactly those its next write comes from).
 *
 * Why the achieved time rather than the recorded one: the score log is partitioned by month of
 * achieved_at and its primary key is (board_id, player_id, match_id, achieved_at), so "a result
 * achieved since the cutoff" is an index-only probe of the player's key range in the partitions
 * from the cutoff on, where the recorded time is in no index (one would cost every result a
 * B-tree insert on the write path). A result's achieved time is its recorded time unless the game
 * sent another (a back-fill, at most a year back): a back-filled result brings its player back
 * into the index (every result is written there), and a later pass takes them out again if
 * nothing was achieved since the cutoff.
 */

/** The result time from which a board's players count as active now: `now` minus the days. O(1). */
export function activeSince(now: Date, inactiveAfterDays: number): Date {
  return new Date(now.getTime() - inactiveAfterDays * 86_400_000);
}

/** The condition that a result `r` counts towards a list's activity: any for the global list ('' or null), its region's otherwise. */
const inList = (sql: Sql, alias: string, region: string | null) => (region ? sql`and ${sql(alias)}.region = ${region}` : sql``);

/**
 * Which of `playerIds` have a result in the board's list (`region` null or '' for the global one)
 * achieved at or after `since`. One query: per player a probe of the primary key in each
 * partition from `since` on (the others pruned), index-only for the global list. O(k · P log N)
 * for k players and P partitions since.
 */
export async function activeAmong(sql: Sql, boardId: string, region: string | null, playerIds: readonly string[], since: Date): Promise<Set<string>> {
  if (playerIds.length === 0) return new Set();
  const rows = await sql<{ id: string }[]>`
    select p.id from unnest(${sql.array([...new Set(playerIds)])}::text[]) as p(id)
    where exists (select 1 from results r where r.board_id = ${boardId} and r.player_id = p.id and r.achieved_at >= ${since.toISOString()}::timestamptz ${inList(sql, 'r', region)})`;
  return new Set(rows.map((row) => row.id));
}

/** What a list holds for unflagged players: all of them, and those active since a cutoff. */
export interface RankableByActivity {
  stored: number;
  active: number;
}

/**
 * countRankable (board-scores.ts) split by activity: how many of one list's board scores belong to
 * unflagged players, and how many of those players have a result in the list achieved at or
 * after `since` (see activeAmong). One query; `unbounded` as countRankable's. O(N · P log M): a probe of the log per
 * board score.
 */
export async function countRankableByActivity(sql: Sql, list: BoardScoreList, since: Date, options: { unbounded?: boolean } = {}): Promise<RankableByActivity> {
  if (options.unbounded) return whileUnbounded(sql, (session) => countRankableByActivity(session, list, since));
  const players = playersOfList(sql, list);
  const [row] = await sql<{ stored: number; active: number }[]>`
    select count(*)::int as stored,
           count(*) filter (where exists (
             select 1 from results a where a.board_id = ${list.boardId} and a.player_id = s.player_id and a.achieved_at >= ${since.toISOString()}::timestamptz ${inList(sql, 'a', list.region)}))::int as active
    from (${players}) as s
    where not exists (select 1 from players p where p.id = s.player_id and p.flagged_at is not null)`;
  return { stored: row?.stored ?? 0, active: row?.active ?? 0 };
}
