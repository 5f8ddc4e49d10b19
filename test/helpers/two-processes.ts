import { expect } from 'vitest';
import { type TestApp, startTestApp } from './test-app.js';

/**
 * Two API processes of one deployment, sharing the database and the Redis key prefix: `reader`,
 * whose PostgreSQL statements go to `onQuery`, and `writer`, which has created board `boardId`
 * (maxScore 1e9). For the tests of what one process sees of another's changes. Close both after.
 * The reader runs no bucket closer: its statements are the reads' alone (the writer's closes buckets).
 */
export async function startTwoProcesses(onQuery: (statement: string) => void, boardId: string): Promise<{ reader: TestApp; writer: TestApp }> {
  const reader = await startTestApp({ onQuery, seasonCloseIntervalMs: null });
  const writer = await startTestApp({ shareStoresOf: { databaseUrl: reader.databaseUrl, keyPrefix: reader.keyPrefix } });
  const created = await writer.admin('mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }', {
    input: { id: boardId, title: boardId, maxScore: 1e9 },
  });
  expect(created.errors).toBeUndefined();
  return { reader, writer };
}
