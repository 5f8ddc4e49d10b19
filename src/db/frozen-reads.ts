import type { Sql } from 'postgres';
import type { EntryMetadata, ScoreOrder } from '../model/board.js';
import { aroundSides } from '../model/around-window.js';
import type { FrozenKey } from './frozen.js';

/**
 * Reads of a closed bucket's frozen final standings (frozen_standings, written by db/frozen.ts):
 * what every read of a closed bucket (top, standing, around, friends, pages, the rank styles,
 * seasonResults) is served from. Each is a range or a probe of one of the table's indexes, never a
 * scan of the bucket:
 * - by rank: the primary key (board, period, bucket, region, rank);
 * - by player: frozen_standings_player_idx (player, board, period, region, bucket);
 * - by score: frozen_standings_score_idx (board, period, bucket, region, score, rank).
 *
 * Rows of erased players (player_id cleared) keep their rank and their score: they still count in
 * the size and in the COMPETITION and DENSE ranks, but are never answered as a standing.
 */

/** One row of a closed bucket's frozen standings, as served. */
export interface FrozenStanding {
  rank: number;
  playerId: string;
  score: number;
  reachedAt: Date;
  /** The frozen board score's entry metadata (JSON text, as it was sent); null when it had none, or when it was not asked for. */
  metadata: EntryMetadata | null;
  /** The frozen result's tie-break values, one per column of the board; empty on a board without them. */
  tieBreakValues: number[];
}

interface Row {
  rank: number;
  player_id: string | null;
  score: number;
  reached_ms: number;
  metadata: EntryMetadata | null;
  tie_break_values: number[] | null;
}

/** A frozen result whose COMPETITION or DENSE rank is asked: its score and, on a board with columns, its tie-break values. */
export interface FrozenResult {
  score: number;
  tieBreakValues?: readonly number[] | undefined;
}

/**
 * The key the rank lookups below answer a result by: equal exactly when two results are equal on
 * the score and every tie-break column (the score alone on a board without them). O(columns).
 */
export function frozenResultKey(result: FrozenResult): string {
  return result.tieBreakValues && result.tieBreakValues.length > 0 ? `${result.score}:${result.tieBreakValues.join(',')}` : String(result.score);
}

/** The columns every read answers; the metadata (as its text: served as it was sent) only when asked for. */
const columns = (sql: Sql, metadata: boolean) =>
  sql`rank, player_id, score, round(extract(epoch from reached_at) * 1000)::float8 as reached_ms, ${metadata ? sql`metadata::text` : sql`null::text`} as metadata,
      tie_break_values::float8[] as tie_break_values`;

/** The rows of one list: the leading columns of every index of the table. */
const ofList = (sql: Sql, key: FrozenKey, alias = '') => {
  const c = (name: string) => sql(alias ? `${alias}.${name}` : name);
  return sql`${c('board_id')} = ${key.boardId} and ${c('period')} = ${key.period} and ${c('bucket')} = ${key.bucket} and ${c('region')} = ${key.region}`;
};

const toStanding = (row: Row): FrozenStanding => ({
  rank: row.rank,
  playerId: row.player_id!,
  score: row.score,
  reachedAt: new Date(row.reached_ms),
  metadata: row.metadata,
  tieBreakValues: row.tie_break_values ?? [],
});

/** The rows of players (erased players' left out), as standings. */
const standingsOf = (rows: readonly Row[]): FrozenStanding[] => rows.flatMap((row) => (row.player_id === null ? [] : [toStanding(row)]));

/**
 * Up to `limit` standings strictly after rank `afterRank`, in rank order (a keyset on the primary
 * key, never an offset); erased players' rows are skipped. O(log N + limit + erased rows skipped).
 */
export async function pageFrozen(sql: Sql, args: FrozenKey & { afterRank: number; limit: number; metadata: boolean }): Promise<FrozenStanding[]> {
  const rows = await sql<Row[]>`
    select ${columns(sql, args.metadata)} from frozen_standings
    where ${ofList(sql, args)} and rank > ${args.afterRank} and player_id is not null
    order by rank limit ${args.limit}`;
  return standingsOf(rows);
}

/**
 * Each player's standing, in the order asked (null for one the bucket did not rank, or who was
 * erased): one probe of frozen_standings_player_idx each. O(k log N).
 */
export async function findFrozen(sql: Sql, args: FrozenKey & { playerIds: readonly string[]; metadata: boolean }): Promise<(FrozenStanding | null)[]> {
  if (args.playerIds.length === 0) return [];
  const ids = [...new Set(args.playerIds)];
  // One equality per player: the index's leading column, then the list's; `= any` keeps it one probe each.
  const rows = await sql<Row[]>`
    select ${columns(sql, args.metadata)} from frozen_standings
    where player_id = any(${ids}::text[]) and board_id = ${args.boardId} and period = ${args.period} and region = ${args.region} and bucket = ${args.bucket}`;
  const byPlayer = new Map(standingsOf(rows).map((standing) => [standing.playerId, standing]));
  return args.playerIds.map((id) => byPlayer.get(id) ?? null);
}

/**
 * A player's standing and up to `radius` standings either side of it (erased players' rows
 * skipped, so a side holds `radius` players where the bucket has them), in rank order; empty when
 * the bucket did not rank the player. With `fill`, 2 × radius + 1 standings (every one there when
 * fewer), the window shifted inward where an edge cuts it (model/around-window.ts): each side's
 * range then reads 2 × radius, as many as the long side of a window at an edge takes, and the
 * window is cut from them by how many each side found. One statement: the player's probe, then two
 * ranges of the primary key from its rank. O(log N + radius + erased rows skipped).
 */
export async function aroundFrozen(
  sql: Sql,
  args: FrozenKey & { playerId: string; radius: number; fill?: boolean | undefined; metadata: boolean },
): Promise<FrozenStanding[]> {
  const reach = args.fill ? 2 * args.radius : args.radius;
  const rows = await sql<Row[]>`
    with own as (
      select rank from frozen_standings
      where player_id = ${args.playerId} and board_id = ${args.boardId} and period = ${args.period} and region = ${args.region} and bucket = ${args.bucket}
    )
    select * from (
      (select ${columns(sql, args.metadata)} from frozen_standings f
        where ${ofList(sql, args, 'f')} and f.rank < (select rank from own) and f.player_id is not null
        order by f.rank desc limit ${reach})
      union all
      (select ${columns(sql, args.metadata)} from frozen_standings f
        where ${ofList(sql, args, 'f')} and f.rank >= (select rank from own) and f.player_id is not null
        order by f.rank limit ${reach + 1})
    ) as run
    order by rank`;
  const run = standingsOf(rows);
  if (!args.fill) return run;
  const own = run.findIndex((standing) => standing.playerId === args.playerId);
  if (own < 0) return [];
  // The rows found stand for the whole list here: a side cut short by `reach` is never the short side.
  const { before, after } = aroundSides(own, run.length, args.radius, true);
  return run.slice(own - before, own + after + 1);
}

/** The distinct results asked, numbered: each one's score, and its values as an array literal for a bigint[] parameter. */
function distinctResults(results: readonly FrozenResult[]) {
  const byKey = new Map<string, FrozenResult>();
  for (const result of results) byKey.set(frozenResultKey(result), result);
  const keys = [...byKey.keys()];
  const asked = [...byKey.values()];
  return {
    keys,
    tuples: asked.some((result) => (result.tieBreakValues?.length ?? 0) > 0),
    scores: asked.map((result) => String(result.score)),
    values: asked.map((result) => `{${(result.tieBreakValues ?? []).join(',')}}`),
  };
}

/**
 * Each result's first frozen rank (erased players' rows included: they keep their places), which
 * is the COMPETITION rank of every standing equal to it on the score and every tie-break column;
 * answered by {@link frozenResultKey}. On a board without columns one probe of
 * frozen_standings_score_idx per distinct score, never a walk of a run of ties: O(k log N). With
 * columns, one range of that index per distinct result, from its score's first rank to the
 * result's (the standings of one score are in rank order, which is the tuple's): O(k (log N + S))
 * for S standings of the score ahead of it.
 */
export async function firstRanksOfFrozenScores(sql: Sql, args: FrozenKey & { results: readonly FrozenResult[] }): Promise<Map<string, number>> {
  const { keys, tuples, scores, values } = distinctResults(args.results);
  if (keys.length === 0) return new Map();
  const sameValues = tuples ? sql`and f.tie_break_values = s.vals::bigint[]` : sql``;
  const rows = await sql<{ i: string | number; first: number | null }[]>`
    select s.i, (
      select f.rank from frozen_standings f where ${ofList(sql, args, 'f')} and f.score = s.score ${sameValues} order by f.rank limit 1
    ) as first
    from unnest(${scores}::bigint[], ${values}::text[]) with ordinality as s(score, vals, i)`;
  return new Map(rows.flatMap((row) => (row.first === null ? [] : [[keys[Number(row.i) - 1]!, row.first] as const])));
}

/**
 * Each result's DENSE rank among a closed bucket's frozen standings (erased players' rows included:
 * their results still count): 1 + the number of distinct better results (by the score, then every
 * tie-break column); answered by {@link frozenResultKey}.
 *
 * Without columns, one recursive statement walks the distinct scores from the best down to the
 * worst of those asked, each step one probe of frozen_standings_score_idx (the next distinct
 * score, never a walk of a run of ties; PostgreSQL has no skip scan of its own before 18): O(D log
 * N) for the D distinct scores at or above the worst asked. With columns, where most results are
 * distinct, the standings from rank 1 to the furthest result asked are read in rank order (the
 * tuple's order), each counting one more when it differs from the one before: O(log N + R) for
 * the R standings ahead of the furthest.
 */
export async function denseRanksOfFrozenScores(
  sql: Sql,
  args: FrozenKey & { order: ScoreOrder; results: readonly FrozenResult[] },
): Promise<Map<string, number>> {
  const { keys, tuples, scores, values } = distinctResults(args.results);
  if (keys.length === 0) return new Map();
  if (tuples) {
    const rows = await sql<{ i: string | number; rank: string | number }[]>`
      with asked as (
        select s.i, (
          select f.rank from frozen_standings f
          where ${ofList(sql, args, 'f')} and f.score = s.score and f.tie_break_values = s.vals::bigint[] order by f.rank limit 1
        ) as first
        from unnest(${scores}::bigint[], ${values}::text[]) with ordinality as s(score, vals, i)
      ), steps as (
        select f.rank,
               case when (f.score, f.tie_break_values) is not distinct from (lag(f.score) over w, lag(f.tie_break_values) over w) then 0 else 1 end as new
        from frozen_standings f
        where ${ofList(sql, args, 'f')} and f.rank <= (select max(first) from asked)
        window w as (order by f.rank)
      ), dense as (
        select rank, sum(new) over (order by rank) as dense from steps
      )
      select a.i, d.dense as rank from asked a join dense d on d.rank = a.first`;
    return new Map(rows.map((row) => [keys[Number(row.i) - 1]!, Number(row.rank)]));
  }
  const asked = scores.map(Number);
  const highFirst = args.order === 'HIGH_FIRST';
  const worst = highFirst ? Math.min(...asked) : Math.max(...asked);
  // The best score, then each next distinct one: max below (HIGH_FIRST) or min above (LOW_FIRST).
  const first = highFirst ? sql`max(score)` : sql`min(score)`;
  const next = highFirst ? sql`max(r.score)` : sql`min(r.score)`;
  const beyond = highFirst ? sql`r.score < walk.score` : sql`r.score > walk.score`;
  const notPast = highFirst ? sql`walk.score > ${worst}` : sql`walk.score < ${worst}`;
  const rows = await sql<{ score: number; rank: number }[]>`
    with recursive walk(score, rank) as (
      select ${first}, 1 from frozen_standings where ${ofList(sql, args)}
      union all
      select (select ${next} from frozen_standings r where ${ofList(sql, args, 'r')} and ${beyond}), walk.rank + 1
      from walk where walk.score is not null and ${notPast}
    )
    select score, rank from walk where score = any(${scores}::bigint[])`;
  return new Map(rows.map((row) => [String(Number(row.score)), Number(row.rank)]));
}
