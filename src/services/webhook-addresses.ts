import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup } from 'node:dns';

/**
 * Where webhooks may be sent (issue 58, SSRF): https to a public address; http, and any address in
 * the ranges below but the never-ones, only with WEBHOOK_ALLOW_PRIVATE. Checked on a literal
 * address at creation, and on the address a name resolves to at each delivery, the one connected
 * to (see webhook-sender.ts).
 */

/** Resolves a name as dns.lookup does with `all: true`; injectable (WebhookOptions.lookup) so a test can make a name resolve anywhere. */
export type WebhookLookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

/** The system's resolver (getaddrinfo, as Node connects by default). */
export const systemLookup: WebhookLookup = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

/** Each kind of address refused without allowPrivate, by name, so a refusal says which it is. */
function ranges(kind: string, cidrs: string[]): { kind: string; list: BlockList } {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [network, prefix] = cidr.split('/');
    list.addSubnet(network!, Number(prefix), isIP(network!) === 6 ? 'ipv6' : 'ipv4');
  }
  return { kind, list };
}

/** Refused even with allowPrivate: no receiver listens there. */
const NEVER = [ranges('unspecified', ['0.0.0.0/8', '::/128']), ranges('multicast', ['224.0.0.0/4', 'ff00::/8']), ranges('reserved', ['240.0.0.0/4'])];
/** Refused without allowPrivate: what a service inside the deployment's network listens on. */
const INTERNAL = [
  ranges('loopback', ['127.0.0.0/8', '::1/128']),
  ranges('private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7', '100.64.0.0/10']),
  // 169.254.169.254 (the cloud metadata address) is in here.
  ranges('link-local', ['169.254.0.0/16', 'fe80::/10']),
];

/** The IPv4 address an IPv4-mapped IPv6 address (::ffff:a.b.c.d, or ::ffff:7f00:1 as URL writes it) carries; undefined for any other. */
function mappedIpv4(address: string): string | undefined {
  const match = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:(.+)$/i.exec(address);
  if (!match) return undefined;
  const tail = match[1]!;
  if (isIP(tail) === 4) return tail;
  const groups = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(tail);
  if (!groups) return undefined;
  const high = parseInt(groups[1]!, 16);
  const low = parseInt(groups[2]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Whether `address` (a literal IP) is internal: loopback, private or link-local. */
export function isInternalAddress(address: string): boolean {
  return kindOf(address, INTERNAL) !== undefined;
}

function kindOf(address: string, lists: { kind: string; list: BlockList }[]): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  const v4 = isIP(bare) === 6 ? mappedIpv4(bare) : undefined;
  const [checked, family] = v4 ? [v4, 'ipv4' as const] : [bare, isIP(bare) === 6 ? ('ipv6' as const) : ('ipv4' as const)];
  return lists.find(({ list }) => list.check(checked, family))?.kind;
}

/**
 * Why a webhook may not be sent to `address` (a literal IP) over `protocol`, in plain words; null
 * when it may. Without allowPrivate: internal and never-addresses refused, http refused. With it:
 * never-addresses refused, and http only to an internal address.
 */
export function addressProblem(address: string, protocol: 'http:' | 'https:', allowPrivate: boolean): string | null {
  const bare = address.replace(/^\[|\]$/g, '');
  const never = kindOf(bare, NEVER);
  if (never) return `address refused: ${bare} is ${never}`;
  const internal = kindOf(bare, INTERNAL);
  if (internal && !allowPrivate) return `address refused: ${bare} is ${internal}`;
  if (protocol === 'http:' && !internal)
    return `address refused: http is allowed only to a loopback or private address with WEBHOOK_ALLOW_PRIVATE; ${bare} is public (use https)`;
  return null;
}

/** Why a url's scheme is refused (null when not): https, or http with allowPrivate. */
export function schemeProblem(protocol: string, allowPrivate: boolean): string | null {
  if (protocol === 'https:') return null;
  if (protocol === 'http:') return allowPrivate ? null : 'must be https (http only to a loopback or private address, with WEBHOOK_ALLOW_PRIVATE=true)';
  return 'must be an https URL';
}

/** A URL's host without IPv6 brackets: what isIP and the resolver take. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '');
