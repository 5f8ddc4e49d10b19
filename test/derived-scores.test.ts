import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRankable, findBoardScores, streamBoardScores } from '../src/db/board-scores.js';
import { findBoard } from '../src/db/boards.js';
import { createDatabase } from '../src/db/client.js';
import { derivedScoresOfPlayers } from '../src/db/derived-scores.js';
import type { Board, CalendarPeriod } from '../src/model/board.js';
import { type Bucket, isKept, keptBuckets, parseBucketLabel } from '../src/model/buckets.js';
import { CLOCK_SKEW_MS, boardScoreList } from '../src/services/buckets.js';
import { type ModelBoard, type ModelResult, createModelBoards, expectBucketMatches, modelBuckets, submitInput } from './helpers/board-views.js';
import { type OracleEntry, type OracleResult, bucketId, foldResults } from './helpers/oracle.js';
import { seeded } from './helpers/random.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * A BEST board's day, week, month and season are derived from the score log rather than kept as
 * board-score rows: every way PostgreSQL is asked for them (a bucket's whole list for a rebuild, its
 * count for the drift gauge, a few players' recorded scores, a player's every bucket for a flag or
 * the catch-up) must equal a plain fold of the same results (the oracle), on the global list and a
 * region, with ties on score and on time, metadata, a year and more of history and a season open
 * for longer than any calendar bucket is kept.
 */

// A date to come (2037 has 2026's calendar): the app sets Redis expiries from this clock.
const NOW = new Date('2037-11-29T12:00:00.000Z');
const DAY_MS = 86_400_000;
const SEASON_START = new Date(NOW.getTime() - 500 * DAY_MS);
/** The board's one season, open since SEASON_START: longer than any calendar bucket is kept. */
const SEASON: Bucket = { period: 'SEASON', label: 's1', start: SEASON_START, end: null };
const BOARD = { id: 'Derived-EU', order: 'HIGH_FIRST' as const, aggregate: 'BEST' as const, regions: ['EU'], maxScore: 1_000 };
const CALENDAR: CalendarPeriod[] = ['DAILY', 'WEEKLY', 'MONTHLY'];
/** 366 days: the longest closeGraceSeconds. */
const GRACE_SECONDS = 31_622_400;
const PLAYERS = ['Zoë', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', '玩家'];

interface LoggedResult extends ModelResult, OracleResult {
  metadata: { match: string } | null;
}

/** Results over the last 600 days, few distinct scores (ties), a few at the same millisecond, half with metadata. */
function generate(count: number): LoggedResult[] {
  const next = seeded(41);
  const times: number[] = [];
  return Array.from({ length: count }, (_, i) => {
    // Now and then the time of an earlier result, so that equal scores tie on time too.
    const at = times.length > 0 && next() < 0.1 ? times[Math.floor(next() * times.length)]! : NOW.getTime() - Math.floor(next() * 600 * DAY_MS);
    times.push(at);
    const matchId = `m${String(i).padStart(5, '0')}`;
    return {
      board: BOARD.id,
      playerId: PLAYERS[Math.floor(next() * PLAYERS.length)]!,
      matchId,
      score: Math.floor(next() * 12),
      region: next() < 0.5 ? 'EU' : null,
      achievedAt: new Date(at),
      metadata: next() < 0.5 ? { match: matchId } : null,
    };
  });
}

describe('board scores derived from the score log', () => {
  let t: TestApp;
  let board: Board;
  const results = generate(1_500);

  /** The oracle's entries of one bucket: the calendar's fold, or for the season its span's. */
  const oracleOf = (bucket: Bucket, region: string | null): Map<string, OracleEntry> => {
    if (bucket.period === 'SEASON') {
      const inSeason = results.filter((r) => r.achievedAt.getTime() >= SEASON_START.getTime());
      return foldResults({ ...BOARD, periods: ['ALL_TIME'] }, inSeason).get(bucketId('ALL_TIME', 'all', region)) ?? new Map<string, OracleEntry>();
    }
    return foldResults({ ...BOARD, periods: [bucket.period] }, results).get(bucketId(bucket.period, bucket.label, region)) ?? new Map<string, OracleEntry>();
  };
  /** Every bucket of the derived periods kept at NOW, globally and in the region. */
  const keptDerived = (): { bucket: Bucket; region: string | null }[] => {
    return [null, 'EU'].flatMap((region) => [
      { bucket: SEASON, region },
      // A bucket closed before the results came in (its end plus the grace before NOW) holds none of them.
      ...CALENDAR.flatMap((period) =>
        keptBuckets(board, period, NOW, region, CLOCK_SKEW_MS)
          .filter((bucket) => bucket.end!.getTime() + GRACE_SECONDS * 1000 > NOW.getTime())
          .map((bucket) => ({ bucket, region })),
      ),
    ]);
  };
  const plain = (entry: OracleEntry) => ({ score: entry.score, reachedMs: entry.reachedAt, metadata: entry.metadata });

  beforeAll(async () => {
    t = await startTestApp({ now: () => NOW });
    await createModelBoards(t, [{ ...BOARD, periods: ['ALL_TIME', 'SEASON', 'MONTHLY', 'WEEKLY', 'DAILY'] }]);
    // Results of the last 600 days count in their buckets for as long as any may: the longest grace (docs/closing.md).
    const graced = await t.admin(`mutation { updateBoard(input: { id: "${BOARD.id}", closeGraceSeconds: ${GRACE_SECONDS} }) { id } }`);
    expect(graced.errors).toBeUndefined();
    // A season open for longer than any calendar bucket is kept, laid out by hand.
    await t.database.sql`insert into seasons (board_id, id, name, starts_at) values (${BOARD.id}, 's1', 'Long', ${SEASON_START.toISOString()}::timestamptz)`;
    for (let i = 0; i < results.length; i += 100) {
      const inputs = results.slice(i, i + 100).map((r) => ({ ...submitInput(r), ...(r.metadata ? { metadata: r.metadata } : {}) }));
      const answer = await t.server(`mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`, { inputs });
      expect(answer.errors).toBeUndefined();
    }
    board = (await findBoard(t.database.db, BOARD.id))!;
  }, 120_000);
  afterAll(() => t?.close());

  it('a bucket read whole (a rebuild), counted (the drift gauge) or for a few players equals the oracle', async () => {
    const lists = keptDerived();
    expect(lists.length).toBeGreaterThan(40);
    let nonEmpty = 0;
    for (const { bucket, region } of lists) {
      const where = `${bucket.period} ${bucket.label} ${region ?? ''}`;
      const oracle = oracleOf(bucket, region);
      if (oracle.size > 0) nonEmpty += 1;
      const list = boardScoreList({ board, bucket, region });
      expect(list.derived, where).not.toBeNull();

      // Read whole by one reader, and in parts by several (each player in one part, once).
      for (const readers of [1, 2, 3]) {
        const streamed = new Map<string, unknown>();
        let rows = 0;
        for await (const chunk of streamBoardScores(t.database.sql, list, { chunkSize: 7, readers })) {
          rows += chunk.length;
          for (const [playerId, score, reachedMs] of chunk) streamed.set(playerId, { score, reachedMs });
        }
        expect(streamed, `${where} by ${readers}`).toEqual(new Map([...oracle].map(([id, entry]) => [id, { score: entry.score, reachedMs: entry.reachedAt }])));
        expect(rows, `${where} by ${readers}`).toBe(streamed.size);
      }
      expect(await countRankable(t.database.sql, list), where).toBe(oracle.size);

      const asked = ['Zoë', '玩家', 'nobody'];
      const found = await findBoardScores(t.database.sql, list, asked, { metadata: true });
      const expected = new Map(asked.flatMap((id) => (oracle.has(id) ? [[id, plain(oracle.get(id)!)] as const] : [])));
      expect(
        new Map(
          [...found].map(([id, score]) => [
            id,
            { score: score.score, reachedMs: score.reachedAt.getTime(), metadata: score.metadata === null ? null : (JSON.parse(score.metadata) as unknown) },
          ]),
        ),
        where,
      ).toEqual(expected);
    }
    expect(nonEmpty).toBeGreaterThan(20);
  });

  it("a player's every bucket (a flag, the catch-up) equals the oracle, and the bound on their history drops nothing kept", async () => {
    const kept = keptDerived();
    for (const playerId of PLAYERS) {
      const pairs = [{ boardId: BOARD.id, playerId }];
      const all = await derivedScoresOfPlayers(t.database.sql, pairs);
      const bounded = await derivedScoresOfPlayers(t.database.sql, pairs, { keptAt: NOW });
      // Older months are not read at all with the bound; what is still kept is the same.
      expect(bounded.length, playerId).toBeLessThan(all.length);
      // Kept, and not closed (its callers leave a closed bucket alone: its standings are frozen).
      const isKeptRow = (row: (typeof all)[number]) => {
        if (row.period === 'SEASON') return true;
        const bucket = parseBucketLabel(board, row.period, row.bucket, row.region || null)!;
        return isKept(bucket, board.retention, NOW, CLOCK_SKEW_MS) && bucket.end!.getTime() + GRACE_SECONDS * 1000 > NOW.getTime();
      };
      const asMap = (rows: typeof all) =>
        new Map(
          rows
            .filter(isKeptRow)
            .map((row) => [
              `${row.period}|${row.bucket}|${row.region}`,
              { score: row.score, reachedMs: row.reachedAt.getTime(), metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as unknown) },
            ]),
        );
      const expected = new Map(
        kept.flatMap(({ bucket, region }) => {
          const entry = oracleOf(bucket, region).get(playerId);
          return entry ? [[`${bucket.period}|${bucket.label}|${region ?? ''}`, plain(entry)] as const] : [];
        }),
      );
      expect(asMap(bounded), playerId).toEqual(expected);
      expect(asMap(all), playerId).toEqual(expected);
    }
  });

  it('a read in parts stopped early, each reader with a chunk asked for ahead, gives every connection back', { timeout: 20_000 }, async () => {
    const list = boardScoreList({ board, bucket: SEASON, region: null });
    // A pool of just the readers' connections: one a stopped read kept would leave the next read waiting for ever.
    const database = createDatabase(t.databaseUrl, { maxConnections: 2 });
    try {
      for await (const chunk of streamBoardScores(database.sql, list, { chunkSize: 1, readers: 2 })) {
        expect(chunk).toHaveLength(1);
        break;
      }
      const players = new Set<string>();
      for await (const chunk of streamBoardScores(database.sql, list, { chunkSize: 1, readers: 2 })) for (const [playerId] of chunk) players.add(playerId);
      expect(players).toEqual(new Set(oracleOf(SEASON, null).keys()));
    } finally {
      await database.close();
    }
  });

  it('a rebuild of a derived bucket serves the oracle on every view', async () => {
    const model: ModelBoard = { ...BOARD, periods: ['DAILY', 'MONTHLY'] };
    const buckets = modelBuckets([model], results).filter((b) => {
      const bucket = parseBucketLabel(board, b.period as CalendarPeriod, b.label, b.region);
      return bucket !== null && isKept(bucket, board.retention, NOW, CLOCK_SKEW_MS);
    });
    expect(buckets.length).toBeGreaterThan(5);
    for (const bucket of buckets.slice(0, 6)) {
      const rebuilt = await t.admin(
        `mutation($k: String!, $p: Period!, $r: String) { rebuildBoard(board: "${BOARD.id}", period: $p, bucket: $k, region: $r) }`,
        {
          k: bucket.label,
          p: bucket.period,
          r: bucket.region,
        },
      );
      expect(rebuilt.errors).toBeUndefined();
      await expectBucketMatches(t, bucket, { players: ['Zoë', 'p1'], friendsOf: {} });
    }
  });
});
