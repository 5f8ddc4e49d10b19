import { createClient } from 'graphql-ws';
import { expect } from 'vitest';
import { WebSocket } from 'ws';
import { type ModelResult } from './board-views.js';
import { seeded } from './random.js';
import type { TestApp } from './test-app.js';

/**
 * Reads of every rank-styled list for the rank-style tests (rank-styles.test.ts,
 * dense-ranks.test.ts): a standing as they compare it, every page of a list, the first view of
 * topChanged, and where the runs of ties of a plain sort begin and end.
 */

export interface StyledRow {
  rank: number;
  score: number;
  percentile: number;
  player: { id: string };
}
export const STYLED_ROW = 'rank score percentile player { id }';

interface Page {
  edges: { node: StyledRow }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/**
 * Every row of a paged list, page after page: `query` selects one connection field, `field`, as
 * `edges { node { STYLED_ROW } } pageInfo { hasNextPage endCursor }`, and takes `$a` as its cursor.
 */
export async function readAllPages(t: TestApp, field: 'standings' | 'seasonResults', query: string, variables: Record<string, unknown>): Promise<StyledRow[]> {
  const rows: StyledRow[] = [];
  let after: string | null = null;
  for (;;) {
    const answer = await t.gql<Record<string, Page>>(query, { ...variables, a: after });
    expect(answer.errors).toBeUndefined();
    const page: Page = answer.data![field]!;
    rows.push(...page.edges.map((edge) => edge.node));
    if (!page.pageInfo.hasNextPage) return rows;
    after = page.pageInfo.endCursor;
  }
}

/** The first view topChanged sends over graphql-ws for a board's ALL_TIME top `limit`, in `style` (null: the board's). */
export async function firstTopChangedView(t: TestApp, board: string, limit: number, style: string | null): Promise<StyledRow[]> {
  const client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  try {
    const views = client.iterate<{ topChanged: { entries: StyledRow[] } }>({
      query: `subscription($b: ID!, $l: Int!, $s: RankStyle) { topChanged(board: $b, limit: $l, rankStyle: $s) { entries { ${STYLED_ROW} } } }`,
      variables: { b: board, l: limit, s: style },
    });
    const view = await views.next();
    await views.return?.();
    return (view.value as { data: { topChanged: { entries: StyledRow[] } } }).data.topChanged.entries;
  } finally {
    await client.dispose();
  }
}

/** The indexes at both edges of every run of equal scores in a sorted list (the last of one run, the first two of the next), and `more`. */
export function edgesOfRuns(sorted: readonly { score: number }[], more: number[] = []): number[] {
  const edges = sorted.flatMap((entry, i) => (i === 0 || sorted[i - 1]!.score !== entry.score ? [i - 1, i, i + 1] : []));
  return [...new Set([...edges, ...more])].filter((i) => i >= 0 && i < sorted.length);
}

/** 120 players of a race over 6 distinct times, runs of about 20 ties each; seeded, so that a failure can be replayed. */
export function raceOfTies(board: string, seed: number): ModelResult[] {
  const next = seeded(seed);
  return Array.from({ length: 120 }, (_, i) => ({
    board,
    playerId: `läufer-${String(i).padStart(3, '0')}`,
    matchId: `m${i}`,
    score: 100 + 10 * Math.floor(next() * 6),
    region: null,
    achievedAt: new Date(Date.now() + i),
  }));
}

/** Creates a race board (LOW_FIRST, maxScore 1,000, ALL_TIME and SEASON, topSize 30) of `rankStyle`, and starts its season. */
export async function createRaceBoard(t: TestApp, id: string, shards: number, rankStyle: string): Promise<void> {
  const created = await t.admin<{ createBoard: { rankStyle: string } }>(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { rankStyle } }`, {
    input: { id, title: id, order: 'LOW_FIRST', maxScore: 1_000, periods: ['ALL_TIME', 'SEASON'], topSize: 30, shards, rankStyle },
  });
  expect(created.errors).toBeUndefined();
  expect(created.data?.createBoard.rankStyle).toBe(rankStyle);
  expect((await t.admin(`mutation($b: ID!) { startSeason(board: $b, name: "Race") { id } }`, { b: id })).errors).toBeUndefined();
}
