import type { Sql, TransactionSql } from 'postgres';
import type { SourceMark } from '../model/source-mark.js';

/**
 * Advances the counter the mark reads (the outbox sequence), for a change to what the index holds
 * that writes no outbox row: a flag, an unflag, an erasure. Without it, a restore of the data alone
 * (`pg_restore --data-only` into the same database, whose identity stays) after moderation alone
 * would set back nothing the mark reads, and the index would keep hiding a player the restored
 * database shows (or show one it has erased). Call it before the change: a sequence is not rolled
 * back, and an advance that precedes a change that then fails costs nothing. O(1).
 */
export async function advanceSourceMark(sql: Sql | TransactionSql): Promise<void> {
  await sql`select nextval('index_backlog_id_seq')`;
}

/**
 * What PostgreSQL says of itself, for the index's generation check (see ranking/generation.ts and
 * check-generation.ts): the database's identity (its oid and board_scores' oid, both new after a
 * restore into a recreated database or `pg_restore --clean`), its write-ahead log position (back
 * after a physical restore) and the outbox sequence's last value (advanced by every committed
 * batch, and set back to its dumped value by any restore), with its clock. One catalogue query.
 */
export async function readSourceMark(sql: Sql): Promise<SourceMark> {
  const [row] = await sql<{ identity: string; lsn: number; writes: number; at: number }[]>`
    select (select oid from pg_database where datname = current_database())::text || '.' || 'board_scores'::regclass::oid::text as identity,
      (pg_current_wal_lsn() - '0/0'::pg_lsn)::float8 as lsn,
      (select last_value from index_backlog_id_seq)::float8 as writes,
      (extract(epoch from clock_timestamp()) * 1000)::float8 as at`;
  return row!;
}
