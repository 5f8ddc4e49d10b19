import { describe, expect, it } from 'vitest';
import type { Board } from '../src/model/board.js';
import { type GraphQLResponse, type TestApp, codeOf, startTestApp } from './helpers/test-app.js';
import { labelsAt, rankEntries } from './helpers/oracle.js';
import { DAY_MS, type Result, freeze, insertBoard, noonDaysAgo, submit } from './helpers/bucket-history.js';
import { movableClock } from './helpers/clock.js';

/**
 * Query.history (issue 21, item 3): a player's final standing in each closed bucket of a period,
 * newest first, within retention, against an oracle that folds the results itself; every page
 * concatenated; each board's rank style; an erased player's rows match nobody; bad input.
 */

const HISTORY = `query($board: ID!, $playerId: ID!, $period: Period!, $region: String, $first: Int!, $after: String) {
  history(board: $board, playerId: $playerId, period: $period, region: $region, first: $first, after: $after) {
    edges { cursor node {
      bucket { period bucket region startsAt endsAt closed size }
      standing { rank score percentile achievedAt metadata player { id } } } }
    pageInfo { hasNextPage endCursor } } }`;

interface Row {
  bucket: { period: string; bucket: string; region: string | null; startsAt: string; endsAt: string; closed: boolean; size: number };
  standing: { rank: number; score: number; percentile: number; achievedAt: string; metadata: unknown; player: { id: string } };
}
type Page = { history: { edges: { cursor: string; node: Row }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } };

async function allPages(t: TestApp, args: { board: string; playerId: string; period: string; region: string | null }, first: number): Promise<Row[]> {
  const out: Row[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const answer: GraphQLResponse<Page> = await t.gql<Page>(HISTORY, { ...args, first, after });
    expect(answer.errors).toBeUndefined();
    const { edges, pageInfo } = answer.data!.history;
    expect(edges.length).toBeLessThanOrEqual(first);
    out.push(...edges.map((edge) => edge.node));
    if (!pageInfo.hasNextPage) return out;
    after = pageInfo.endCursor;
  }
  throw new Error('too many pages');
}

/** The oracle's final standing of `playerId` in the results of one list and span: folded, ranked and styled here. */
function oracleStanding(board: Pick<Board, 'order' | 'rankStyle'>, results: readonly Result[], playerId: string) {
  const best = new Map<string, { playerId: string; score: number; reachedAt: number; metadata: unknown }>();
  for (const r of results) {
    const old = best.get(r.playerId);
    const at = r.achievedAt.getTime();
    const better = !old || (board.order === 'HIGH_FIRST' ? r.score > old.score : r.score < old.score) || (r.score === old.score && at < old.reachedAt);
    if (better) best.set(r.playerId, { playerId: r.playerId, score: r.score, reachedAt: at, metadata: r.metadata ?? null });
  }
  const ranked = rankEntries(board, best.values());
  const i = ranked.findIndex((entry) => entry.playerId === playerId);
  if (i < 0) return null;
  const mine = ranked[i]!;
  const ahead = ranked.filter((entry) => (board.order === 'HIGH_FIRST' ? entry.score > mine.score : entry.score < mine.score));
  const rank =
    board.rankStyle === 'ORDINAL' ? i + 1 : board.rankStyle === 'COMPETITION' ? ahead.length + 1 : new Set(ahead.map((entry) => entry.score)).size + 1;
  const size = ranked.length;
  return {
    rank,
    score: mine.score,
    percentile: (100 * (size - rank)) / size,
    achievedAt: new Date(mine.reachedAt).toISOString(),
    metadata: mine.metadata,
    player: { id: playerId },
    size,
  };
}

const STYLES: { style: Board['rankStyle']; order: Board['order'] }[] = [
  { style: 'ORDINAL', order: 'HIGH_FIRST' },
  { style: 'COMPETITION', order: 'LOW_FIRST' },
  { style: 'DENSE', order: 'HIGH_FIRST' },
];

describe.each([1, 8])('history on %i shard(s)', (shards) => {
  it('every page concatenated is the oracle history: closed buckets newest first, within retention, in each rank style', async () => {
    const clock = movableClock();
    const t = await startTestApp({ now: clock.now });
    const now = clock.now();
    const boards = STYLES.map(({ style, order }) => ({ id: `h-${shards}-${style}`, rankStyle: style, order }));
    for (const board of boards) {
      await insertBoard(t, {
        ...board,
        shards,
        periods: ['ALL_TIME', 'DAILY', 'WEEKLY'],
        regions: ['eu'],
        retention: { DAILY: 3, WEEKLY: 35, MONTHLY: 396 },
        closeGraceSeconds: 30 * 86_400,
      });
    }
    const results: Result[] = [];
    for (const board of boards) {
      for (let i = 0; i < 120; i++) {
        results.push({
          board: board.id,
          playerId: `p${(i * 5) % 13}`,
          // Few scores, so that players tie.
          score: ((i * 7) % 6) * 10,
          achievedAt: new Date(noonDaysAgo(now, 1 + (i % 3)).getTime() - (i % 11) * 60_000),
          region: i % 2 === 0 ? 'eu' : null,
          ...(i % 4 === 0 ? { metadata: { i } } : {}),
        });
      }
    }
    await submit(t, results);
    const days = [1, 2, 3].map((k) => labelsAt(noonDaysAgo(now, k)).DAILY!);
    const thisWeek = labelsAt(now).WEEKLY!;
    const weeks = [...new Set([1, 2, 3].map((k) => labelsAt(noonDaysAgo(now, k)).WEEKLY!))].filter((week) => week !== thisWeek);
    for (const board of boards) {
      await freeze(t, board.id, 'DAILY', days, [null, 'eu']);
      if (weeks.length > 0) await freeze(t, board.id, 'WEEKLY', weeks, [null, 'eu']);
    }
    // A day later, day 3 ago (now 4 ago) has passed its retention of 3 days: left out.
    clock.advance(DAY_MS);
    const at = clock.now();

    const dayOf = (k: number) => ({ label: days[k - 1]!, start: noonDaysAgo(now, k).getTime() - DAY_MS / 2 });
    for (const board of boards) {
      for (const region of [null, 'eu']) {
        const ofList = results.filter((r) => r.board === board.id && (region === null || r.region === region));
        for (const playerId of ['p0', 'p3', 'p7', 'nobody']) {
          const expected: Row[] = [];
          for (const k of [1, 2, 3]) {
            const { label, start } = dayOf(k);
            const end = start + DAY_MS;
            if (end + 3 * DAY_MS <= at.getTime()) continue;
            const standing = oracleStanding(
              board,
              ofList.filter((r) => r.achievedAt.getTime() >= start && r.achievedAt.getTime() < end),
              playerId,
            );
            if (!standing) continue;
            const { size, ...rest } = standing;
            expected.push({
              bucket: {
                period: 'DAILY',
                bucket: label,
                region,
                startsAt: new Date(start).toISOString(),
                endsAt: new Date(end).toISOString(),
                closed: true,
                size,
              },
              standing: rest,
            });
          }
          if (playerId !== 'nobody') expect(expected.length).toBeGreaterThan(0);
          for (const first of [1, 2, 30]) {
            expect(await allPages(t, { board: board.id, playerId, period: 'DAILY', region }, first), `${board.id} ${region} ${playerId} ${first}`).toEqual(
              expected,
            );
          }
          // Weeks are kept 35 days: every frozen week where the player had a standing.
          const weekRows = await allPages(t, { board: board.id, playerId, period: 'WEEKLY', region }, 30);
          const expectedWeeks = weeks
            .map((week) => {
              const inWeek = ofList.filter((r) => labelsAt(r.achievedAt).WEEKLY === week);
              const standing = oracleStanding(board, inWeek, playerId);
              return standing && { bucket: week, rank: standing.rank, size: standing.size, score: standing.score };
            })
            .filter((row) => row !== null)
            .reverse();
          expect(weekRows.map((row) => ({ bucket: row.bucket.bucket, rank: row.standing.rank, size: row.bucket.size, score: row.standing.score }))).toEqual(
            expectedWeeks,
          );
        }
      }
      // ALL_TIME never closes: no history.
      expect(await allPages(t, { board: board.id, playerId: 'p0', period: 'ALL_TIME', region: null }, 30)).toEqual([]);
    }
  });
});

describe('history and erasure, and bad input', () => {
  it("an erased player's frozen rows match nobody; the others keep their ranks", async () => {
    const t = await startTestApp();
    const now = t.app.parts.now();
    await insertBoard(t, { id: 'erased', periods: ['ALL_TIME', 'DAILY'], closeGraceSeconds: 30 * 86_400 });
    await submit(
      t,
      ['a', 'b', 'c'].map((playerId, i) => ({ board: 'erased', playerId, score: 30 - 10 * i, achievedAt: noonDaysAgo(now, 1) })),
    );
    await freeze(t, 'erased', 'DAILY', [labelsAt(noonDaysAgo(now, 1)).DAILY!]);
    const before = await allPages(t, { board: 'erased', playerId: 'c', period: 'DAILY', region: null }, 30);
    expect(before.map((row) => [row.standing.rank, row.bucket.size])).toEqual([[3, 3]]);
    expect((await t.admin(`mutation { deletePlayer(playerId: "a") }`)).errors).toBeUndefined();
    expect(await allPages(t, { board: 'erased', playerId: 'a', period: 'DAILY', region: null }, 30)).toEqual([]);
    expect(await allPages(t, { board: 'erased', playerId: 'c', period: 'DAILY', region: null }, 30)).toEqual(before);
  });

  it('an unknown board is NOT_FOUND; a period not kept, a region not had, first outside 1..100 and a forged or foreign cursor BAD_USER_INPUT', async () => {
    const t = await startTestApp();
    const now = t.app.parts.now();
    await insertBoard(t, { id: 'hbad', periods: ['ALL_TIME', 'DAILY'], regions: ['eu'], closeGraceSeconds: 30 * 86_400 });
    await submit(
      t,
      [1, 2].map((k) => ({ board: 'hbad', playerId: 'p', score: k, achievedAt: noonDaysAgo(now, k) })),
    );
    await freeze(
      t,
      'hbad',
      'DAILY',
      [1, 2].map((k) => labelsAt(noonDaysAgo(now, k)).DAILY!),
    );
    const code = async (variables: Record<string, unknown>) =>
      codeOf(await t.gql(HISTORY, { board: 'hbad', playerId: 'p', period: 'DAILY', region: null, first: 30, ...variables }));
    expect(await code({ board: 'no-such-board' })).toBe('NOT_FOUND');
    expect(await code({ period: 'WEEKLY' })).toBe('BAD_USER_INPUT');
    expect(await code({ region: 'zz' })).toBe('BAD_USER_INPUT');
    expect(await code({ first: 0 })).toBe('BAD_USER_INPUT');
    expect(await code({ first: 101 })).toBe('BAD_USER_INPUT');
    const page = await t.gql<Page>(HISTORY, { board: 'hbad', playerId: 'p', period: 'DAILY', region: null, first: 1 });
    const cursor = page.data!.history.pageInfo.endCursor!;
    expect(page.data!.history.pageInfo.hasNextPage).toBe(true);
    expect(await code({ after: cursor })).toBeUndefined();
    expect(await code({ after: `${cursor.slice(0, -1)}${cursor.endsWith('A') ? 'B' : 'A'}` })).toBe('BAD_USER_INPUT');
    // Another player's, or another region's, list.
    expect(await code({ playerId: 'q', after: cursor })).toBe('BAD_USER_INPUT');
    expect(await code({ region: 'eu', after: cursor })).toBe('BAD_USER_INPUT');
  });
});
