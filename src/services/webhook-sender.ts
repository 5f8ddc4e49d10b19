import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { DELIVERY_TIMEOUT_MS, EVENT_TYPES, type WebhookEvent } from '../model/webhooks.js';
import { type WebhookLookup, addressProblem, hostOf } from './webhook-addresses.js';

/**
 * One attempt of one delivery (issue 58): the Standard Webhooks body and headers, signed with the
 * webhook's secret, POSTed to its url; success is a 2xx whose whole exchange (connection, request,
 * response and its body) ends within DELIVERY_TIMEOUT_MS. Redirects are not followed. The address
 * is checked on the one connected to: a name is resolved in the socket's own `lookup`, which refuses
 * a forbidden address before any connection is made, so no second resolution can differ (no DNS
 * rebinding window).
 */

/** The longest error kept (webhook.lastError, delivery.lastError). */
export const MAX_ERROR_LENGTH = 300;

/** What one attempt sends. */
export interface Attempt {
  id: string;
  url: string;
  secret: string;
  type: WebhookEvent;
  data: unknown;
  occurredAt: Date;
}

/** An attempt's outcome: delivered, or why not in plain words. */
export type AttemptOutcome = { delivered: true } | { delivered: false; error: string };

/** The body every receiver gets: the event's type, when it happened, and its data. */
export const deliveryBody = (attempt: Pick<Attempt, 'type' | 'data' | 'occurredAt'>): string =>
  JSON.stringify({ type: EVENT_TYPES[attempt.type], timestamp: attempt.occurredAt.toISOString(), data: attempt.data });

class RefusedAddress extends Error {}

const bounded = (text: string) => (text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text);

/** What a failed connection or exchange was, in plain words. */
function errorText(error: unknown): string {
  if (error instanceof RefusedAddress) return error.message;
  const { code, message } = error as { code?: string; message?: string };
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset by the receiver',
    ENOTFOUND: 'name not found (DNS)',
    EAI_AGAIN: 'name not resolved (DNS did not answer)',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
  };
  if (code && known[code]) return `${known[code]} (${code})`;
  return code ? `${message ?? 'request failed'} (${code})` : (message ?? 'request failed');
}

export interface SenderOptions {
  allowPrivate: boolean;
  lookup: WebhookLookup;
  /** @default DELIVERY_TIMEOUT_MS */
  timeoutMs?: number | undefined;
}

/** A sender: `send` makes one attempt; `close` ends its kept-alive connections. */
export function createWebhookSender(options: SenderOptions) {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  // Connections are kept alive between attempts to the same receiver; each new one is resolved and checked.
  const agents = { 'http:': new HttpAgent({ keepAlive: true, maxSockets: 8 }), 'https:': new HttpsAgent({ keepAlive: true, maxSockets: 8 }) };

  /** The socket's resolver: the injected one, every address it answers checked, a forbidden one refusing the connection. */
  const checkedLookup =
    (protocol: 'http:' | 'https:'): LookupFunction =>
    (hostname, lookupOptions, callback) => {
      options.lookup(hostname).then(
        (addresses) => {
          const wanted = lookupOptions.family === 4 || lookupOptions.family === 6 ? addresses.filter((a) => a.family === lookupOptions.family) : addresses;
          for (const { address } of wanted) {
            const problem = addressProblem(address, protocol, options.allowPrivate);
            if (problem) return callback(new RefusedAddress(`${problem} (${hostname} resolves to it)`), '', 0);
          }
          if (wanted.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
          if (lookupOptions.all) return (callback as unknown as (e: null, a: typeof wanted) => void)(null, wanted);
          callback(null, wanted[0]!.address, wanted[0]!.family);
        },
        (error: unknown) => callback(error as NodeJS.ErrnoException, '', 0),
      );
    };

  async function send(attempt: Attempt): Promise<AttemptOutcome> {
    const url = new URL(attempt.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return { delivered: false, error: `address refused: ${url.protocol} is not http(s)` };
    const protocol = url.protocol;
    const host = hostOf(url);
    // An address literal is connected to without any lookup: checked here.
    if (isIP(host)) {
      const problem = addressProblem(host, protocol, options.allowPrivate);
      if (problem) return { delivered: false, error: bounded(problem) };
    }
    const body = deliveryBody(attempt);
    // The signature's time is the wall clock's, as the receiver checks it against its own (a 5-minute tolerance), whatever clock schedules the attempts.
    const sentAt = new Date();
    const signature = new Webhook(attempt.secret).sign(attempt.id, sentAt, body);
    const headers = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'user-agent': 'leaderboard-webhooks',
      'webhook-id': attempt.id,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': signature,
    };
    const request = protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<AttemptOutcome>((resolve) => {
      let settled = false;
      const finish = (outcome: AttemptOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome.delivered ? outcome : { delivered: false, error: bounded(outcome.error) });
      };
      const req = request(url, { method: 'POST', headers, agent: agents[protocol], lookup: checkedLookup(protocol) }, (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        // The whole body is read (and dropped): the exchange is over when it ends, within the time.
        res.resume();
        res.on('error', (error) => finish({ delivered: false, error: errorText(error) }));
        res.on('end', () => {
          if (status >= 200 && status < 300) finish({ delivered: true });
          else if (status >= 300 && status < 400)
            finish({ delivered: false, error: `HTTP ${status}: redirect not followed${res.headers.location ? ` (to ${res.headers.location})` : ''}` });
          else finish({ delivered: false, error: `HTTP ${status}` });
        });
      });
      const timer = setTimeout(() => {
        finish({ delivered: false, error: `timeout: no complete 2xx answer within ${timeoutMs / 1000} s` });
        req.destroy();
      }, timeoutMs);
      req.on('error', (error) => finish({ delivered: false, error: errorText(error) }));
      req.end(body);
    });
  }

  return {
    send,
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

export type WebhookSender = ReturnType<typeof createWebhookSender>;
