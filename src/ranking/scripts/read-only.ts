/**
 * The shebang that declares a script read-only (Redis 7): `#!lua flags=no-writes` on its first
 * line. Every script the index's reads send to replicas carries it (read-top, read-standings,
 * read-around, read-near, read-after, count-ahead, and the replica variants of the named reads);
 * the shebang must be the script's very first bytes. Redis then treats a call of it as a read,
 * whatever it is: any write it attempts fails ("Write commands are not allowed from read-only
 * scripts") rather than reaching the data, and a replica refuses it as it refuses other reads
 * while its link is down under `replica-serve-stale-data no` (MASTERDOWN; the read then goes to
 * the master, see replicas.ts), where a script without flags would be served stale. (Redis 7.0
 * serves a script without flags on a replica too, standalone or a Cluster replica in READONLY
 * mode, and fails only a write inside it; the flag is what keeps that a declared, checked read.)
 *
 * Scripts with a shebang also refuse keys of several slots on a Cluster (unless
 * allow-cross-slot-keys): each of these reads one sorted set, and the named variants, which read
 * undeclared profile hashes, run only on one node (profile naming is off on a Cluster).
 */
export const NO_WRITES = '#!lua flags=no-writes\n';

/**
 * A named read's Lua (profileValuesLua's, profiles/scripts.ts) made fit for a replica: its changes
 * token is read and never set, the token answered false when there is none (the profiles read are
 * then taken for that read only; the next read on the master, or any profile read, sets it). Throws
 * at load when the token's write is not found where it was, so a change there cannot go unnoticed. O(length).
 */
export function tokenReadOnly(lua: string): string {
  const write = "redis.call('SET', key, fresh)\n  return fresh";
  if (!lua.includes(write)) throw new Error('tokenReadOnly: the changes token write of profileValuesLua was not found');
  return lua.replace(write, 'return false');
}
