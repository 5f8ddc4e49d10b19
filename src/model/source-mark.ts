/**
 * What the system of record says of itself, read just before the index's generation check (see
 * db/source-mark.ts, which reads it, and ranking/generation.ts, which compares it): which database
 * it is, and two counters that only grow while it runs, with its clock when read. A restore (or
 * another database) shows as a different identity or a counter gone back.
 */
export interface SourceMark {
  identity: string;
  /** Write-ahead log position (bytes): goes back when a physical backup is restored. */
  lsn: number;
  /** The outbox sequence, advanced by every committed batch and every moderation: goes back when any backup is restored. */
  writes: number;
  /** The database's clock when read, ms since the epoch. */
  at: number;
}
