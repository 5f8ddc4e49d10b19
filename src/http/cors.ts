import type { IncomingHttpHeaders } from 'node:http';
import type { Plugin } from 'graphql-yoga';

/**
 * Which web pages may call the API from a browser (CORS_ORIGINS): `'*'` any (the default), or a
 * list of origins (`https://game.example`). Never with credentials: keys travel in the
 * Authorization header, which a page sends only when its own script sets it, so no cookie or
 * ambient credential is ever involved and `Access-Control-Allow-Credentials` is never sent.
 */
export type CorsOrigins = '*' | readonly string[];

/** How long a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** Whether `value` is an origin as a browser sends it: scheme, host and port only. */
export function isOrigin(value: string): boolean {
  return URL.canParse(value) && /^https?:$/.test(new URL(value).protocol) && new URL(value).origin === value;
}

/**
 * The CORS headers for a request with these headers (none when it has no Origin, or an origin not
 * allowed); a preflight's also say which methods and headers may follow. O(allowed origins).
 */
export function corsHeaders(origins: CorsOrigins, headers: IncomingHttpHeaders | Pick<Headers, 'get'>, preflight: boolean): Record<string, string> {
  // Yoga's Headers are @whatwg-node's, not the global class: told apart by their get().
  const fetchHeaders = typeof (headers as { get?: unknown }).get === 'function';
  const get = (name: string) =>
    fetchHeaders ? ((headers as Pick<Headers, 'get'>).get(name) ?? undefined) : ((headers as IncomingHttpHeaders)[name] as string | undefined);
  const origin = get('origin');
  if (origin === undefined) return {};
  const answer: Record<string, string> = {};
  if (origins === '*') answer['access-control-allow-origin'] = '*';
  else if (origins.includes(origin)) Object.assign(answer, { 'access-control-allow-origin': origin, vary: 'Origin' });
  // Not allowed: no CORS headers, so the browser keeps the answer from the page; Vary, since
  // another origin's request gets a different answer.
  else return { vary: 'Origin' };
  if (preflight) {
    answer['access-control-allow-methods'] = 'GET, POST, OPTIONS';
    const requested = get('access-control-request-headers');
    if (requested) answer['access-control-allow-headers'] = requested;
    answer['access-control-max-age'] = String(PREFLIGHT_MAX_AGE_SECONDS);
  }
  return answer;
}

/**
 * The policy for what Yoga answers (GET, server-sent events, everything the fast path leaves it),
 * in place of Yoga's own CORS, whose default echoes any Origin with credentials allowed: preflights
 * (OPTIONS) answered 204 here, and the headers set on every other answer.
 */
export function useCorsPolicy(origins: CorsOrigins): Plugin {
  return {
    onRequest(payload) {
      const { request, fetchAPI } = payload;
      if (request.method !== 'OPTIONS') return;
      payload.endResponse(new fetchAPI.Response(null, { status: 204, headers: { 'content-length': '0', ...corsHeaders(origins, request.headers, true) } }));
    },
    onResponse({ request, response }) {
      if (request.method === 'OPTIONS') return;
      for (const [name, value] of Object.entries(corsHeaders(origins, request.headers, false))) response.headers.set(name, value);
    },
  };
}
