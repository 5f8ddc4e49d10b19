import type { Sql, TransactionSql } from 'postgres';
import type { Logger } from 'pino';
import type { Database } from './client.js';
import { listenOnChannel } from './listen.js';
import { lockBoardForDeletion } from './locks.js';
import { WEBHOOKS_CHANGED_CHANNEL } from './webhooks.js';

/**
 * deleteBoard's PostgreSQL half (issue 60): the board's row and every row naming it, in one
 * transaction, and the notification that tells every process. entry_removals is kept: it is an
 * audit of what was removed, and outlives the board on purpose.
 */

/**
 * A submission names a board deleted (deleteBoard) after the request found it: nothing of the
 * submission is recorded. Raised in the group's transaction, which takes the board's lock shared
 * first and then looks for its row, so it is never recorded for a board that is gone.
 */
export class BoardGoneError extends Error {
  constructor(
    readonly boardId: string,
    /** Which submission of the group it belongs to. */
    readonly submission = 0,
  ) {
    super(`board ${boardId} was deleted`);
    this.name = 'BoardGoneError';
  }
}

/** Every process listens on this channel and forgets the board named (see {@link listenForBoardDeletions}). */
const BOARD_DELETED_CHANNEL = 'leaderboard_board_deleted';

/** A deleted board as every process is told: its id and when the board deleted had been made. */
export interface DeletedBoard {
  id: string;
  createdAt: Date;
}

/** What a deletion did. */
export type BoardDeletion =
  /** There was no such board: nothing changed. */
  | { deleted: false }
  /** Live API keys are scoped to the board: nothing changed. */
  | { deleted: false; scopedKeys: { id: string; name: string }[] }
  /**
   * Deleted. `backlog`: the index_backlog rows naming the board at the deletion, each a group of
   * the board committed before it whose index write was not confirmed yet: it may still land in
   * Redis after the keys are freed (see writes/board-deletion.ts).
   */
  | { deleted: true; board: DeletedBoard; backlog: number[] };

/** Deadlock with an erasure or a removal (they lock rows of many boards): tried again. */
const isDeadlock = (error: unknown) => (error as { code?: unknown }).code === '40P01';

/**
 * Deletes the board and every row of it in one transaction, after taking the board's lock
 * exclusively: the groups of results in flight for it commit first (their rows are then deleted
 * here), and those after find the board gone and record nothing (db/group-transaction.ts). Refused,
 * changing nothing, while a live API key is scoped to the board. Notifies every process on commit.
 *
 * Every statement follows an index leading with the board id (the score log: one probe per month's
 * partition), but webhook_events' and webhooks' (small tables, pruned) and index_backlog's (nearly
 * empty). O(rows of the board · log N).
 */
export async function deleteBoardRows(sql: Sql, boardId: string, retries = 3): Promise<BoardDeletion> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await sql.begin((tx) => deleteInTransaction(tx, boardId));
    } catch (error) {
      if (isDeadlock(error) && attempt < retries) continue;
      throw error;
    }
  }
}

async function deleteInTransaction(tx: TransactionSql, boardId: string): Promise<BoardDeletion> {
  await lockBoardForDeletion(tx, boardId);
  // The row itself, locked: an updateBoard or a season's insert (its foreign key) waits for us.
  const [board] = await tx<{ id: string; created_ms: number }[]>`
    select id, floor(extract(epoch from created_at) * 1000) as created_ms from boards where id = ${boardId} for update`;
  if (!board) return { deleted: false };
  const scopedKeys = await tx<{ id: string; name: string }[]>`
    select id, name from api_keys where revoked_at is null and ${boardId} = any(boards) order by created_at, id`;
  if (scopedKeys.length > 0) return { deleted: false, scopedKeys: scopedKeys.map(({ id, name }) => ({ id, name })) };
  // The groups of the board whose index write is not confirmed: locked, so a catch-up pass that
  // holds one (and is writing it to Redis) ends first; they are tidied once their writes are past.
  const backlog = await tx<{ id: string }[]>`
    select id from index_backlog where board_id = ${boardId} or ${boardId} = any(board_ids) order by id for update`;
  await tx`delete from result_keys where board_id = ${boardId}`;
  await tx`delete from results where board_id = ${boardId}`;
  await tx`delete from board_scores where board_id = ${boardId}`;
  await tx`delete from frozen_standings where board_id = ${boardId}`;
  await tx`delete from frozen_buckets where board_id = ${boardId}`;
  await tx`delete from awards where board_id = ${boardId}`;
  await tx`delete from board_members where board_id = ${boardId}`;
  await tx`delete from board_member_counts where board_id = ${boardId}`;
  await tx`delete from cohort_members where board_id = ${boardId}`;
  await tx`delete from league_cohorts where board_id = ${boardId}`;
  await tx`delete from league_waiting where board_id = ${boardId}`;
  await tx`delete from league_rounds where board_id = ${boardId}`;
  await tx`delete from league_players where board_id = ${boardId}`;
  // Their deliveries go with them (on delete cascade).
  await tx`delete from webhook_events where board_id = ${boardId}`;
  // A webhook of this board alone goes (an empty list would mean every board); one of several boards keeps the others.
  const webhooks = await tx`
    with alone as (delete from webhooks where boards = array[${boardId}]::text[] returning id),
    others as (update webhooks set boards = array_remove(boards, ${boardId}) where ${boardId} = any(boards) and cardinality(boards) > 1 returning id)
    select id from alone union all select id from others`;
  await tx`delete from seasons where board_id = ${boardId}`;
  await tx`delete from boards where id = ${boardId}`;
  if (webhooks.length > 0) await tx`select pg_notify(${WEBHOOKS_CHANGED_CHANNEL}, ${boardId})`;
  // The board's creation time too: a listener told late keeps a board made again since under the same id.
  const told: DeletedBoard = { id: boardId, createdAt: new Date(Number(board.created_ms)) };
  await tx`select pg_notify(${BOARD_DELETED_CHANNEL}, ${JSON.stringify(told)})`;
  return { deleted: true, board: told, backlog: backlog.map(({ id }) => Number(id)) };
}

/** Which of these backlog rows are still there (their group's index write not confirmed yet). O(k log N). */
export async function backlogLeft(sql: Sql, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from index_backlog where id = any(${sql.array(ids.map(String))}::int8[])`;
  return row?.n ?? 0;
}

/**
 * Takes a deleted board's pairs out of these backlog rows (those named at its deletion; a board
 * created again since has rows of its own, left alone), and deletes the rows left empty. Their
 * board scores are gone, so a replay would write nothing; this keeps the outbox from naming the
 * board at all. O(k log N).
 */
export async function forgetBacklogBoard(sql: Sql, boardId: string, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  const rows = sql.array(ids.map(String));
  await sql.begin(async (tx) => {
    await tx`delete from index_backlog where id = any(${rows}::int8[]) and board_id = ${boardId}`;
    // Both arrays rebuilt from the pairs kept, in their order, in one pass over each row.
    await tx`
      update index_backlog b
      set (board_ids, player_ids) = (
        select coalesce(array_agg(u.board order by u.n), '{}'), coalesce(array_agg(u.player order by u.n), '{}')
        from unnest(b.board_ids, b.player_ids) with ordinality as u(board, player, n)
        where u.board <> ${boardId})
      where b.id = any(${rows}::int8[]) and ${boardId} = any(b.board_ids)`;
    await tx`delete from index_backlog where id = any(${rows}::int8[]) and cardinality(board_ids) = 0`;
  });
}

/**
 * Which of the boards have no row (deleted since the caller found them), in a statement of its own:
 * taken after the boards' shared locks (locks.ts lockBoardsShared), its snapshot sees a deletion
 * committed before them. One probe per board.
 */
export async function goneBoards(tx: TransactionSql, boardIds: readonly string[]): Promise<string[]> {
  const [row] = await tx<{ gone: string[] }[]>`
    select array(select b from unnest(${tx.array([...boardIds])}::text[]) as b where not exists (select 1 from boards where id = b)) as gone`;
  return row?.gone ?? [];
}

/** The boards, among these, whose row is gone or was made again since (another createdAt). One probe per board. */
export async function boardsGoneAmong(sql: Sql, known: readonly DeletedBoard[]): Promise<string[]> {
  if (known.length === 0) return [];
  const [row] = await sql<{ gone: string[] }[]>`
    select array(
      select k.id from unnest(${sql.array(known.map((b) => b.id))}::text[], ${sql.array(known.map((b) => b.createdAt.toISOString()))}::text[]::timestamptz[])
        as k(id, created_at)
      -- Compared to the millisecond, as the process read it (a JavaScript Date).
      where not exists (select 1 from boards b where b.id = k.id and date_trunc('milliseconds', b.created_at) = k.created_at)) as gone`;
  return row?.gone ?? [];
}

/** How often the boards a process knows are looked at behind transaction pooling. */
const BOARD_POLL_MS = 500;

/**
 * Calls `gone(board)` whenever any process deletes a board (LISTEN on its own connection), and
 * `check()` each time the listener is (re)connected, since a deletion notified meanwhile was
 * missed. Behind transaction pooling, where no LISTEN outlives its statement, `check()` is called
 * every {@link BOARD_POLL_MS} instead. A PostgreSQL that does not answer is retried.
 */
export function listenForBoardDeletions(database: Database, gone: (board: DeletedBoard) => void, check: () => Promise<void>, log: Logger) {
  const checked = () =>
    void check().catch((error: unknown) => log.warn({ err: error }, 'could not look for boards deleted meanwhile; the directory refresh finds them'));
  if (database.pooling === 'transaction') {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const poll = () => {
      void check()
        .catch((error: unknown) => log.warn({ err: error }, 'could not look for deleted boards; trying again'))
        .finally(() => {
          if (!stopped) timer = setTimeout(poll, BOARD_POLL_MS);
        });
    };
    return {
      start: poll,
      async stop() {
        stopped = true;
        clearTimeout(timer);
      },
    };
  }
  const told = (payload: string) => {
    const { id, createdAt } = JSON.parse(payload) as { id: string; createdAt: string };
    gone({ id, createdAt: new Date(createdAt) });
  };
  return listenOnChannel(database.sql, BOARD_DELETED_CHANNEL, told, checked, log, 'board deletions');
}
