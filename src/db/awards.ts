import type { PendingQuery, Row, Sql, TransactionSql } from 'postgres';
import type { RankStyle, RewardBand, ScoreOrder, TieBreak } from '../model/board.js';
import { awardId } from '../model/awards.js';
import { bandRanks } from '../model/rewards.js';
import { type BucketClosedData, EVENT_PAGE_SIZE, type StandingData } from '../model/webhooks.js';
import type { OutboxEvent } from './webhook-outbox.js';
import { resultsBestFirst } from './result-order.js';

/**
 * A closed list's awards (issue 58): what each of its board's reward bands names, computed once,
 * in the freeze's transaction (db/frozen.ts freezeLists), from the frozen standings just written;
 * and the BUCKET_CLOSED event that carries them. Rows never leave the server to be computed.
 *
 * A band covers a range of ranks by the board's rank style (model/rewards.ts bandRanks), as the
 * reads of the closed list rank it (db/frozen-reads.ts): ORDINAL the frozen rank; COMPETITION the
 * first frozen rank of the result; DENSE one more than the distinct better results, a result being
 * the score with every tie-break column (equal only when equal on all of them). Every player
 * whose rank is in the range is awarded, so tied players share a band. An award row keeps the
 * player's frozen (ordinal) rank: band by band in that order is the awards' order.
 */

/** A list as its close takes it: its key, the index's order, and its board's rank style, top size and bands. */
export interface ClosingList {
  boardId: string;
  period: string;
  bucket: string;
  /** '' for the global list. */
  region: string;
  order: ScoreOrder;
  /** The board's maxScore and tie-break columns: what a result is compared by (db/result-order.ts). */
  maxScore: number;
  tieBreaks: readonly TieBreak[];
  rankStyle: RankStyle;
  topSize: number;
  rewards: readonly RewardBand[];
}

/** The rows of the list (alias f): the leading columns of frozen_standings' indexes. */
const ofList = (sql: Sql | TransactionSql, list: ClosingList, alias: string) =>
  sql`${sql(alias)}.board_id = ${list.boardId} and ${sql(alias)}.period = ${list.period} and ${sql(alias)}.bucket = ${list.bucket} and ${sql(alias)}.region = ${list.region}`;

/**
 * Each frozen row's rank in the board's style, over rows read from rank 1 on (a prefix of the
 * list, so counting within it is counting in the whole list): rank() and dense_rank() over the
 * result (the score, then each tie-break column) are the first frozen rank of the result and one
 * more than the distinct better results.
 */
function styledRank(sql: Sql | TransactionSql, list: ClosingList): PendingQuery<Row[]> {
  if (list.rankStyle === 'ORDINAL') return sql`f.rank`;
  const byResult = resultsBestFirst(sql, list, 'f');
  return list.rankStyle === 'DENSE' ? sql`dense_rank() over (order by ${byResult})` : sql`rank() over (order by ${byResult})`;
}

/**
 * Inserts the list's awards (its standings frozen already in this transaction, `size` of them):
 * one INSERT ... SELECT for every band. Answers how many. ORDINAL reads the ranks up to the
 * furthest band's end (the primary key's range); COMPETITION the standings scoring at least the
 * one at that rank (the score index's range: a prefix of the list holding every standing whose
 * result is at least that one's); DENSE, whose rank of a row depends on every
 * distinct score above it, the whole list: O(reach), O(N) for DENSE, plus one row per award.
 */
export async function insertAwards(tx: TransactionSql, list: ClosingList, size: number): Promise<number> {
  const bands = list.rewards.flatMap((band, i) => {
    const ranks = bandRanks(band, size);
    return ranks && ranks.from <= size ? [{ band_index: i, band: band.name, from_rank: ranks.from, to_rank: ranks.to }] : [];
  });
  if (bands.length === 0) return 0;
  const reach = Math.min(size, Math.max(...bands.map((band) => band.to_rank)));
  const better = list.order === 'HIGH_FIRST' ? tx`>=` : tx`<=`;
  const cut =
    list.rankStyle === 'ORDINAL'
      ? tx`and f.rank <= ${reach}`
      : list.rankStyle === 'COMPETITION'
        ? tx`and f.score ${better} (select g.score from frozen_standings g where ${ofList(tx, list, 'g')} and g.rank = ${reach})`
        : tx``;
  const inserted = await tx`
    insert into awards (board_id, period, bucket, region, band_index, band, rank, player_id)
    select ${list.boardId}, ${list.period}, ${list.bucket}, ${list.region}, b.band_index, b.band, s.rank, s.player_id
    from (
      select f.rank, f.player_id, ${styledRank(tx, list)} as style_rank
      from frozen_standings f
      where ${ofList(tx, list, 'f')} ${cut}
    ) as s
    join jsonb_to_recordset(${JSON.stringify(bands)}::jsonb) as b(band_index int, band text, from_rank int, to_rank int)
      on s.style_rank between b.from_rank and b.to_rank`;
  return inserted.count;
}

interface EventRow {
  part: 'top' | 'award';
  band: string | null;
  player_id: string;
  score: string | number;
  reached_ms: number;
  style_rank: string | number;
  display_name: string | null;
  /** null on a board without tie-break columns. */
  tie_break_values: number[] | null;
}

/**
 * The BUCKET_CLOSED event of a list frozen (with its awards) in this transaction: its final top
 * (the board's topSize first standings) and its first EVENT_PAGE_SIZE awards, band by band in rank
 * order, each a standing in the board's rank style with the player's display name. One statement:
 * the frozen standings from rank 1 to the furthest of the top and the awards page (a prefix, the
 * style's ranks counted over it), joined with the players. O(reach + EVENT_PAGE_SIZE).
 */
export async function bucketClosedEvent(
  tx: TransactionSql,
  list: ClosingList,
  closed: { size: number; awardCount: number; closedAt: Date },
): Promise<OutboxEvent> {
  const rows = await tx<EventRow[]>`
    with page as (
      select a.band_index, a.band, a.rank, a.player_id from awards a
      where ${ofList(tx, list, 'a')}
      order by a.band_index, a.rank limit ${EVENT_PAGE_SIZE}
    ), styled as (
      select f.rank, f.player_id, f.score, round(extract(epoch from f.reached_at) * 1000)::float8 as reached_ms, ${styledRank(tx, list)} as style_rank,
             f.tie_break_values::float8[] as tie_break_values
      from frozen_standings f
      where ${ofList(tx, list, 'f')} and f.rank <= greatest(${list.topSize}::int, (select coalesce(max(rank), 0) from page))
    )
    select * from (
      select 'top' as part, -1 as band_index, null::text as band, s.rank, s.player_id, s.score, s.reached_ms, s.style_rank, p.display_name, s.tie_break_values
      from styled s left join players p on p.id = s.player_id
      where s.rank <= ${list.topSize}
      union all
      select 'award', g.band_index, g.band, s.rank, s.player_id, s.score, s.reached_ms, s.style_rank, p.display_name, s.tie_break_values
      from page g join styled s on s.rank = g.rank left join players p on p.id = s.player_id
    ) as parts
    order by band_index, rank`;
  const standing = (row: EventRow): StandingData => ({
    rank: Number(row.style_rank),
    playerId: row.player_id,
    displayName: row.display_name,
    score: Number(row.score),
    achievedAt: new Date(row.reached_ms).toISOString(),
    ...(row.tie_break_values && row.tie_break_values.length > 0 && { tieBreakValues: row.tie_break_values.map(Number) }),
  });
  const region = list.region === '' ? null : list.region;
  const data: BucketClosedData = {
    boardId: list.boardId,
    period: list.period,
    bucket: list.bucket,
    region,
    closedAt: closed.closedAt.toISOString(),
    size: closed.size,
    top: rows.filter((row) => row.part === 'top').map(standing),
    awards: rows
      .filter((row) => row.part === 'award')
      .map((row) => ({
        id: awardId({ boardId: list.boardId, period: list.period, bucket: list.bucket, region, band: row.band!, playerId: row.player_id }),
        band: row.band!,
        standing: standing(row),
      })),
    awardCount: closed.awardCount,
  };
  return { type: 'BUCKET_CLOSED', boardId: list.boardId, data, at: closed.closedAt };
}
