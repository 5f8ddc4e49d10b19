import type { Sql } from 'postgres';
import type { SourceMark } from '../ranking/generation.js';

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
