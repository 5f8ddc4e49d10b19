import { expect } from 'vitest';
import type { Board, CalendarPeriod } from '../../src/model/board.js';
import { parseBucketLabel } from '../../src/model/buckets.js';
import type { FreezeList } from '../../src/db/frozen.js';
import { freezeListOf } from '../../src/services/buckets.js';
import type { TestApp } from './test-app.js';

/** Helpers of the tests of periodBuckets, nextReset, history and scoreDistribution. */

export const DAY_MS = 86_400_000;

/** A board made in code, inserted through the app's storage (so it may carry any closeGraceSeconds). */
export async function insertBoard(t: TestApp, board: Partial<Board> & Pick<Board, 'id' | 'periods'>): Promise<Board> {
  const inserted = await t.app.parts.storage.boards.insert({
    title: board.id,
    order: 'HIGH_FIRST',
    aggregate: 'BEST',
    maxScore: 1_000_000,
    regions: [],
    topSize: 10,
    retention: { DAILY: 7, WEEKLY: 35, MONTHLY: 396 },
    ...board,
  });
  expect(inserted, board.id).not.toBeNull();
  return inserted!;
}

export interface Result {
  board: string;
  playerId: string;
  score: number;
  achievedAt: Date;
  region?: string | null;
  metadata?: Record<string, unknown>;
}

let match = 0;

/** Submits results through the API, 500 a call; fails the test on any error. */
export async function submit(t: TestApp, results: readonly Result[]): Promise<void> {
  for (let i = 0; i < results.length; i += 500) {
    const inputs = results.slice(i, i + 500).map((r) => ({
      board: r.board,
      playerId: r.playerId,
      score: r.score,
      matchId: `m${++match}`,
      region: r.region ?? null,
      achievedAt: r.achievedAt.toISOString(),
      ...(r.metadata ? { metadata: r.metadata } : {}),
    }));
    const answer = await t.server(`mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`, { inputs });
    expect(answer.errors).toBeUndefined();
  }
}

/**
 * Freezes buckets of a board (the global list, or a region's) as a close does, in PostgreSQL only
 * (their index keys stay): what reads of closed buckets then serve. Answers each list's size.
 */
export async function freeze(
  t: TestApp,
  boardId: string,
  period: CalendarPeriod,
  labels: readonly string[],
  regions: readonly (string | null)[] = [null],
): Promise<number[]> {
  const { boards, storage } = t.app.parts;
  const board = (await boards.find(boardId))!;
  const lists: FreezeList[] = labels.flatMap((label) =>
    regions.map((region) => freezeListOf({ board, bucket: parseBucketLabel(board, period, label, region)!, region })),
  );
  const frozen = await storage.frozen.freeze({ lists, closedAt: t.app.parts.now() });
  return frozen?.lists.map((list) => list.size) ?? [];
}

/** The UTC date label of an instant. */
export const utcDay = (at: Date | number) => new Date(at).toISOString().slice(0, 10);

/** Noon UTC of the day `daysAgo` days before `now`'s. */
export const noonDaysAgo = (now: Date, daysAgo: number) =>
  new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - daysAgo * DAY_MS + DAY_MS / 2);
