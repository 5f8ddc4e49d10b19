/**
 * `DATABASE_URL`, which may name several hosts, as libpq's URLs do:
 * `postgres://user:password@h1:5432,h2:5433/db?target_session_attrs=read-write`. WHATWG URL (and
 * so `new URL`) refuses a host list, so it is read here: each host checked on its own, and the
 * rest (user, database, parameters) as the URL of one host.
 */

/** One host of the list; `port` is 5432 when the URL gives none. */
export interface PostgresHost {
  host: string;
  port: number;
}

export interface PostgresUrl {
  /** The hosts in the URL's order: one for a plain URL. */
  hosts: PostgresHost[];
  /** The database name, decoded ('' when the URL names none). */
  database: string;
  /** The URL's target_session_attrs, or null without one. */
  targetSessionAttrs: string | null;
  /** The same URL naming only `host`: what postgres.js and `new URL` read. */
  urlFor(host: PostgresHost): string;
  /** The same URL naming every host, on another database (the maintenance database `postgres`, say). */
  withDatabase(database: string): string;
}

/** The values of target_session_attrs the service accepts: both mean "the primary" to it. */
export const PRIMARY_SESSION_ATTRS = ['read-write', 'primary'] as const;

/** `host:port` as the URL spells it (an IPv6 address in brackets): what /readyz and the metrics show. */
export const hostLabel = ({ host, port }: PostgresHost): string => `${host.includes(':') ? `[${host}]` : host}:${port}`;

export class PostgresUrlError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'PostgresUrlError';
  }
}

const SHAPE = /^(postgres(?:ql)?):\/\/([^/?#]*)(.*)$/s;
const HOST = /^(\[[0-9A-Fa-f:.]+\]|[^\s[\]:,@/?#]+)(?::(\d{1,5}))?$/;

/** Reads a postgres:// URL of one host or several; throws PostgresUrlError saying what is wrong. */
export function parsePostgresUrl(url: string): PostgresUrl {
  const shape = SHAPE.exec(url);
  if (!shape) throw new PostgresUrlError('must be a postgres:// URL');
  const [, scheme, authority, rest] = shape as unknown as [string, string, string, string];
  const at = authority.lastIndexOf('@');
  const userinfo = at >= 0 ? authority.slice(0, at + 1) : '';
  const list = authority.slice(at + 1);
  const spell = (hostList: string, tail = rest) => `${scheme}://${userinfo}${hostList}${tail}`;

  let hosts: PostgresHost[];
  if (!list.includes(',')) {
    // One host (or none: postgres.js then takes PGHOST or localhost), read as before.
    if (!URL.canParse(url)) throw new PostgresUrlError('must be a postgres:// URL');
    const parsed = new URL(url);
    hosts = [{ host: parsed.hostname.replace(/^\[(.*)\]$/, '$1') || 'localhost', port: Number(parsed.port || 5432) }];
  } else {
    hosts = list.split(',').map((item) => {
      const match = HOST.exec(item);
      if (!match) throw new PostgresUrlError(`must be a postgres:// URL: "${item}" in its host list is not host or host:port`);
      const port = Number(match[2] ?? 5432);
      if (port < 1 || port > 65_535) throw new PostgresUrlError(`must be a postgres:// URL: the port of "${item}" is not between 1 and 65535`);
      if (!URL.canParse(spell(item))) throw new PostgresUrlError(`must be a postgres:// URL: "${item}" in its host list is not a host name or address`);
      return { host: match[1]!.replace(/^\[(.*)\]$/, '$1'), port };
    });
  }

  const oneHost = (host: PostgresHost) => spell(hostLabel(host));
  const first = new URL(oneHost(hosts[0]!));
  const targetSessionAttrs = first.searchParams.get('target_session_attrs');
  if (targetSessionAttrs !== null && !(PRIMARY_SESSION_ATTRS as readonly string[]).includes(targetSessionAttrs))
    throw new PostgresUrlError(`target_session_attrs must be read-write or primary (the service writes), not "${targetSessionAttrs}"`);
  return {
    hosts,
    database: decodeURIComponent(first.pathname.slice(1)),
    targetSessionAttrs,
    urlFor: oneHost,
    // The path is the database; the parameters after it stay.
    withDatabase: (database) => spell(list, `/${encodeURIComponent(database)}${rest.replace(/^\/[^?#]*/, '')}`),
  };
}
