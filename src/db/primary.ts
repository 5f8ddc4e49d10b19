import { connect } from 'node:net';
import { Duplex } from 'node:stream';
import postgres, { type Options } from 'postgres';
import { type PostgresHost, hostLabel, parsePostgresUrl } from './postgres-url.js';

/**
 * Reaching the primary of a DATABASE_URL that names several hosts (a primary and its standbys),
 * through a promotion, with no restart.
 *
 * postgres.js's own target_session_attrs=read-write takes a server whose default_transaction_read_only
 * is off for a primary, and a PostgreSQL 14+ hot standby reports it off: connections landed on the
 * standby, and every write failed ("cannot execute ... in a read-only transaction"). Its host list
 * also tries the hosts one after another with no pause and never fails the waiting query while no
 * host suits, so a request could not answer UNAVAILABLE while no primary is up. Here instead:
 * - each new connection of the pool asks a locator which host is the primary; the locator asks every
 *   host at once, on a short connection of its own, `pg_is_in_recovery()` (and, on a primary, its
 *   timeline), and keeps the answer until a connection to that host closes;
 * - the pool itself is given that one host (postgres.js's `socket` option), so a connection that
 *   cannot be made fails its query at once (UNAVAILABLE), and the next one asks again;
 * - each connection is checked again on its own session (target_session_attrs=primary: postgres.js
 *   reads in_hot_standby, which PostgreSQL 14+ reports at connection, at no round trip) and closed
 *   when it is on a standby after all (its query fails, UNAVAILABLE).
 * Two primaries at once (the old one started again after a promotion, not as a standby) is the
 * operator's to prevent; meanwhile the locator takes the one on the later timeline.
 */

/** Which PostgreSQL host a pool writes to: what /readyz and the metrics show. */
export interface PrimaryWatch {
  /** `host:port` of the primary the pool's connections open on; null while no host is one. */
  current(): string | null;
  /** Calls `listener` now with current(), then at each change; answers a function that stops it. */
  watch(listener: (host: string | null) => void): () => void;
}

/** No host of DATABASE_URL is a primary that answers: nothing can be recorded now (UNAVAILABLE). */
export class NoPrimaryError extends Error {
  readonly code = 'NO_PRIMARY';
  constructor(hosts: PostgresHost[], found: string) {
    super(`no PostgreSQL primary among ${hosts.map(hostLabel).join(', ')} (${found})`);
    this.name = 'NoPrimaryError';
  }
}

/** How long a probe waits to connect to one host, in seconds (postgres.js counts in seconds). */
const PROBE_CONNECT_TIMEOUT_S = 2;
/** A search that found no primary is answered again, without asking, for this long: a pool of waiting queries asks once. */
const NO_PRIMARY_HOLD_MS = 250;

interface Probe {
  host: PostgresHost;
  /** null: the host did not answer. */
  primary: boolean | null;
  /** On a primary, its timeline (the WAL file name's first 8 hex digits). */
  timeline: string | null;
}

/** A search that found no primary: when, and what each host was. */
interface Miss {
  at: number;
  found: string;
}

type ClientOptions = Options<Record<string, postgres.PostgresType>>;

/** What postgres.js is given for `url`: one URL, its options, and which host it is on. */
export interface PrimaryConnection<O> {
  url: string;
  options: O;
  primary: PrimaryWatch;
}

/**
 * The URL and options postgres.js needs to write to `url`'s primary. A URL of one host is passed as
 * it is (with target_session_attrs, checked on each session); one of several goes through a locator.
 */
export function primaryConnection<O extends ClientOptions>(url: string, options: O): PrimaryConnection<O> {
  const parsed = parsePostgresUrl(url);
  const checked: O = parsed.targetSessionAttrs || parsed.hosts.length > 1 ? { ...options, target_session_attrs: 'primary' } : options;
  if (parsed.hosts.length === 1) {
    const host = hostLabel(parsed.hosts[0]!);
    return { url, options: checked, primary: { current: () => host, watch: (listener) => (listener(host), () => {}) } };
  }
  const locator = createLocator(parsed.hosts, (host) => parsed.urlFor(host), options);
  return {
    url: parsed.urlFor(parsed.hosts[0]!),
    // `socket` is a documented option of postgres.js its types leave out.
    options: { ...checked, socket: () => locator.socket() },
    primary: locator.watch,
  };
}

function createLocator(hosts: PostgresHost[], urlFor: (host: PostgresHost) => string, options: ClientOptions) {
  /** The primary found last, kept until a connection to it closes. */
  let known: PostgresHost | null = null;
  let shown: string | null = null;
  let searching: Promise<PostgresHost | Miss> | null = null;
  let lastMiss: Miss | null = null;
  const listeners = new Set<(host: string | null) => void>();

  const show = (host: string | null) => {
    if (host === shown) return;
    shown = host;
    for (const listener of listeners) listener(host);
  };

  async function probe(host: PostgresHost): Promise<Probe> {
    const sql = postgres(urlFor(host), {
      ...(options.ssl === undefined ? {} : { ssl: options.ssl }),
      max: 1,
      connect_timeout: PROBE_CONNECT_TIMEOUT_S,
      fetch_types: false,
      prepare: false,
      onnotice: () => {},
      connection: { application_name: 'leaderboard primary probe' },
    });
    try {
      // pg_walfile_name names the file of the current timeline; on a standby it raises, so it is asked only on a primary.
      const [row] = await sql<{ standby: boolean; timeline: string | null }[]>`
        select pg_is_in_recovery() as standby,
               case when not pg_is_in_recovery() then substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) end as timeline`;
      return { host, primary: row ? !row.standby : null, timeline: row?.timeline ?? null };
    } catch {
      return { host, primary: null, timeline: null };
    } finally {
      void sql.end({ timeout: 0 }).catch(() => undefined);
    }
  }

  async function search(): Promise<PostgresHost | Miss> {
    const probes = await Promise.all(hosts.map(probe));
    const primaries = probes.filter((p) => p.primary === true);
    if (primaries.length === 0) {
      const found = probes.map((p) => `${hostLabel(p.host)} ${p.primary === false ? 'is a standby' : 'does not answer'}`).join(', ');
      show(null);
      return { at: performance.now(), found };
    }
    // The later timeline is the newer primary; on a tie, the one the pool was on, then the URL's order.
    const chosen = primaries.reduce((best, p) =>
      (p.timeline ?? '') > (best.timeline ?? '') || (p.timeline === best.timeline && hostLabel(p.host) === shown && hostLabel(best.host) !== shown) ? p : best,
    ).host;
    known = chosen;
    show(hostLabel(chosen));
    return chosen;
  }

  async function primary(): Promise<PostgresHost | Miss> {
    if (known) return known;
    if (lastMiss && performance.now() - lastMiss.at < NO_PRIMARY_HOLD_MS) return lastMiss;
    searching ??= search().then((found) => {
      searching = null;
      lastMiss = 'found' in found ? found : null;
      return found;
    });
    return searching;
  }

  return {
    /** postgres.js's `socket` option: a socket to the primary, or one that fails at once with NoPrimaryError. */
    async socket(): Promise<Duplex> {
      const found = await primary();
      if ('found' in found) return failing(new NoPrimaryError(hosts, found.found));
      const socket = connect({ host: found.host, port: found.port });
      // postgres.js names the server with it for TLS (servername).
      Object.assign(socket, { host: found.host, port: found.port });
      socket.once('close', () => {
        // A connection to it closed (its server died, or the pool let it go): the next one asks again.
        if (known === found) known = null;
      });
      return socket;
    },
    watch: {
      current: () => shown,
      watch(listener: (host: string | null) => void) {
        listeners.add(listener);
        listener(shown);
        return () => listeners.delete(listener);
      },
    } satisfies PrimaryWatch,
  };
}

/**
 * A stream that fails with `error` once postgres.js listens to it: the connection's query is
 * rejected and the connection goes back to the pool's closed ones (a socket function that throws
 * instead leaves postgres.js's connection stuck in "connecting").
 */
function failing(error: Error): Duplex {
  const stream = new Duplex({
    read() {},
    write(_chunk, _encoding, callback) {
      callback();
    },
  });
  // After postgres.js has attached its listeners (they are attached once the socket function's promise settles).
  setImmediate(() => stream.destroy(error));
  return stream;
}
