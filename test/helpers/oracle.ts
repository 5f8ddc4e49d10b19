/**
 * An independent model of what a board should show, written as plainly as possible: fold every
 * accepted result into a map per bucket, then sort. It shares no code with the service.
 */

export interface OracleBoard {
  id: string;
  order: 'HIGH_FIRST' | 'LOW_FIRST';
  aggregate: 'BEST' | 'SUM';
  periods: string[];
}

export interface OracleResult {
  playerId: string;
  score: number;
  region: string | null;
  achievedAt: Date;
  /** The entry metadata sent with it, if any. */
  metadata?: unknown;
}

export interface OracleEntry {
  playerId: string;
  score: number;
  reachedAt: number;
  /** The metadata of the result that set the score; null when it had none. */
  metadata: unknown;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The bucket labels a UTC instant falls in, computed the long way round. */
export function labelsAt(at: Date): Record<string, string> {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  const d = at.getUTCDate();
  // ISO week: the week belongs to the year of its Thursday.
  const day = new Date(Date.UTC(y, m, d));
  const weekday = day.getUTCDay() === 0 ? 7 : day.getUTCDay();
  const thursday = new Date(day.getTime() + (4 - weekday) * 86_400_000);
  const isoYear = thursday.getUTCFullYear();
  const firstDay = new Date(Date.UTC(isoYear, 0, 1));
  const week = Math.floor((thursday.getTime() - firstDay.getTime()) / 86_400_000 / 7) + 1;
  return {
    ALL_TIME: 'all',
    MONTHLY: `${y}-${pad(m + 1)}`,
    WEEKLY: `${isoYear}-W${pad(week)}`,
    DAILY: `${y}-${pad(m + 1)}-${pad(d)}`,
  };
}

export const bucketId = (period: string, label: string, region: string | null) => `${period}|${label}|${region ?? ''}`;

/** Every bucket's entries for one board, keyed by bucketId. */
export function foldResults(board: OracleBoard, results: OracleResult[]): Map<string, Map<string, OracleEntry>> {
  const parts = new Map<string, Map<string, OracleResult[]>>();
  for (const result of results) {
    const labels = labelsAt(result.achievedAt);
    for (const period of board.periods) {
      const label = labels[period];
      if (!label) continue;
      for (const region of result.region ? [null, result.region] : [null]) {
        const id = bucketId(period, label, region);
        const players = parts.get(id) ?? new Map<string, OracleResult[]>();
        parts.set(id, players);
        players.set(result.playerId, [...(players.get(result.playerId) ?? []), result]);
      }
    }
  }
  const buckets = new Map<string, Map<string, OracleEntry>>();
  for (const [id, players] of parts) {
    const entries = new Map<string, OracleEntry>();
    for (const [playerId, list] of players) entries.set(playerId, boardScore(board, playerId, list));
    buckets.set(id, entries);
  }
  return buckets;
}

/**
 * BEST: the best score, reached at the earliest time it was achieved. SUM: the total, reached when
 * its latest non-zero part was (a total of zero: at the first zero when higher wins, the last when lower wins).
 * The metadata is that of the result that set the score: BEST, the first submitted of the best
 * score at its earliest time; SUM, the latest non-zero part (the first submitted of its time), or
 * the first result when every part is zero. `list` is in the order the results were submitted.
 */
function boardScore(board: OracleBoard, playerId: string, list: OracleResult[]): OracleEntry {
  const times = (rs: OracleResult[]) => rs.map((r) => r.achievedAt.getTime());
  const metadataOf = (r: OracleResult | undefined) => r?.metadata ?? null;
  if (board.aggregate === 'SUM') {
    const score = list.reduce((sum, r) => sum + r.score, 0);
    const nonZero = list.filter((r) => r.score > 0);
    const zeroTime = board.order === 'HIGH_FIRST' ? Math.min(...times(list)) : Math.max(...times(list));
    const latest = nonZero.length ? Math.max(...times(nonZero)) : zeroTime;
    const setter = nonZero.length ? nonZero.find((r) => r.achievedAt.getTime() === latest) : list[0];
    return { playerId, score, reachedAt: latest, metadata: metadataOf(setter) };
  }
  const scores = list.map((r) => r.score);
  const best = board.order === 'HIGH_FIRST' ? Math.max(...scores) : Math.min(...scores);
  const reachedAt = Math.min(...times(list.filter((r) => r.score === best)));
  return { playerId, score: best, reachedAt, metadata: metadataOf(list.find((r) => r.score === best && r.achievedAt.getTime() === reachedAt)) };
}

/**
 * Rank order: the better score, then the earlier time, then (as Redis orders equal packed values in
 * a REV read) the larger player id in UTF-8 byte order, which is not JavaScript's string order for
 * characters beyond U+FFFF.
 */
export function rankEntries<E extends Omit<OracleEntry, 'metadata'>>(board: Pick<OracleBoard, 'order'>, entries: Iterable<E>): E[] {
  return [...entries].sort((a, b) => {
    if (a.score !== b.score) return board.order === 'HIGH_FIRST' ? b.score - a.score : a.score - b.score;
    if (a.reachedAt !== b.reachedAt) return a.reachedAt - b.reachedAt;
    return Buffer.compare(Buffer.from(b.playerId), Buffer.from(a.playerId));
  });
}

/**
 * {@link rankEntries} of one score per player, all reached at one time (or the scores distinct, so
 * that times never decide): [player id, score] pairs, the best first.
 */
export function rankScores(scores: Iterable<readonly [string, number]>, order: OracleBoard['order'] = 'HIGH_FIRST'): [string, number][] {
  const entries = [...scores].map(([playerId, score]) => ({ playerId, score, reachedAt: 0 }));
  return rankEntries({ order }, entries).map((entry) => [entry.playerId, entry.score]);
}
