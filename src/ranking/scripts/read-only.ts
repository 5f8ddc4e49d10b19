/**
 * The shebang that declares a script read-only (Redis 7): `#!lua flags=no-writes` on its first
 * line. Every script the index's reads send to replicas carries it (read-top, read-standings,
 * read-around, read-near, read-after, count-ahead, and the named reads); the shebang must be the
 * script's very first bytes. Redis then treats a call of it as a read, whatever it is: any write
 * it attempts fails ("Write commands are not allowed from read-only scripts") rather than reaching
 * the data, and a replica refuses it as it refuses other reads while its link is down under
 * `replica-serve-stale-data no` (MASTERDOWN; the read then goes to the master, see replicas.ts),
 * where a script without flags would be served stale. (Redis 7.0 serves a script without flags on
 * a replica too, standalone or a Cluster replica in READONLY mode, and fails only a write inside
 * it; the flag is what keeps that a declared, checked read.)
 *
 * Scripts with a shebang also refuse keys of several slots on a Cluster (unless
 * allow-cross-slot-keys): each of these reads one sorted set. The named reads, which read the
 * players' profile hashes beside it, run on one node only (see ONE_NODE_READ and
 * defineRankingScripts).
 */
export const NO_WRITES = '#!lua flags=no-writes\n';

/**
 * The shebang of a read that runs on one node only (Redis 7): read-only, and refused on a Redis
 * Cluster ("Can not run script on cluster, 'no-cluster' flag is set"). For a script that reads
 * keys it cannot declare, because it finds them only as it runs; it is not even registered on a
 * Cluster client (see defineRankingScripts).
 */
export const ONE_NODE_READ = '#!lua flags=no-writes,no-cluster\n';
