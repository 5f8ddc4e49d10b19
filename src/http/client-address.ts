import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

/**
 * Who a request comes from, for per-client budgets: the socket's peer, or, when that peer is a
 * trusted proxy, the rightmost address of `X-Forwarded-For` (or, without it, `Forwarded`) that is
 * not itself a trusted proxy. Each proxy appends the address it saw, so the entries right of the
 * first untrusted one were written by proxies we trust, and anything left of it may be made up by
 * the client: never read further. An untrusted peer's headers are never read.
 */
export type ClientAddressOf = (req: Pick<IncomingMessage, 'headers' | 'socket'>) => string;

/** `10.0.0.0/8`, `fd00::/8` or a single address: one entry of TRUSTED_PROXIES. */
export function isAddressOrRange(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** A socket's peer as one key per client (an IPv4-mapped `::ffff:` v6 as its IPv4), before any header is read. */
export function peerAddressOf(socket: { remoteAddress?: string | undefined }): string {
  return plainAddress(socket.remoteAddress ?? '') ?? 'unknown';
}

/** Whether a bare address (see {@link peerAddressOf}) is one of the trusted proxies, addresses or CIDR ranges. */
export function createTrustedProxies(trustedProxies: readonly string[] = []): (address: string) => boolean {
  if (trustedProxies.length === 0) return () => false;
  const trusted = new BlockList();
  for (const entry of trustedProxies) {
    const [address, prefix] = entry.split('/') as [string, string | undefined];
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) trusted.addAddress(address, family);
    else trusted.addSubnet(address, Number(prefix), family);
  }
  return (address) => trusted.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/** The trusted proxies, addresses or CIDR ranges (see {@link isAddressOrRange}); none by default. */
export function createClientAddressOf(trustedProxies: readonly string[] = []): ClientAddressOf {
  const peerOf = (req: Pick<IncomingMessage, 'socket'>) => peerAddressOf(req.socket);
  if (trustedProxies.length === 0) return peerOf;
  const isTrusted = createTrustedProxies(trustedProxies);

  return (req) => {
    let client = peerOf(req);
    if (!isTrusted(client)) return client;
    for (const hop of forwardedChain(req.headers).reverse()) {
      const address = plainAddress(hop);
      // A hop a trusted proxy could not name ("unknown", an obfuscated Forwarded id): the nearest
      // address known is the proxy's own, so the request counts against that.
      if (address === undefined) return client;
      client = address;
      if (!isTrusted(address)) return client;
    }
    return client;
  };
}

/** Every hop, leftmost first: X-Forwarded-For when present (all its headers), else Forwarded's `for=`. */
function forwardedChain(headers: IncomingMessage['headers']): string[] {
  const xff = headers['x-forwarded-for'];
  if (xff !== undefined) return (Array.isArray(xff) ? xff.join(',') : xff).split(',').map((hop) => hop.trim());
  const forwarded = headers.forwarded;
  if (forwarded === undefined) return [];
  // RFC 7239: `for=192.0.2.60;proto=http, for="[2001:db8::1]:4711"`; elements by commas, pairs by semicolons.
  return forwarded.split(',').map((element) => {
    const pair = element.split(';').find((part) => /^\s*for\s*=/i.test(part));
    return pair
      ? pair
          .slice(pair.indexOf('=') + 1)
          .trim()
          .replace(/^"(.*)"$/, '$1')
      : '';
  });
}

/**
 * The bare IP of a hop or peer (`[2001:db8::1]:4711`, `192.0.2.60:80`, an IPv4-mapped `::ffff:` v6),
 * so one client has one key; undefined when it is not an IP address.
 */
function plainAddress(hop: string): string | undefined {
  let address = hop.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) address = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(address)) address = address.slice(0, address.lastIndexOf(':'));
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) address = mapped[1]!;
  return isIP(address) === 0 ? undefined : address.toLowerCase();
}
