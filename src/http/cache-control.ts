import type { DocumentNode, GraphQLSchema } from 'graphql';
import { type Plugin, isAsyncIterable } from 'graphql-yoga';
import { readsOnlyTops } from './response-cache.js';

/** What every answer but a cacheable top says: every POST answer among them. */
export const NOT_CACHEABLE = 'no-store';

/** What a cacheable top says. */
const PUBLIC = 'public, max-age=1';

/** The media types of a regular (JSON) answer: an event stream or multipart answer is never public. */
const JSON_ANSWER = /^application\/(?:graphql-response\+)?json\b/;

/**
 * `Cache-Control: public, max-age=1` for a GET answer every caller would get alike, so a CDN in
 * front absorbs the readers of a hot board; `no-store` for everything else. Alike means a query of
 * shared tops only (readsOnlyTops, the definition cached answers use: `top` and nothing
 * limited to some callers, so an admin's `recentResults` or `boardScores` is never public, nor is
 * the same document sent without a key, which is refused them), answered in JSON without errors.
 * Such an answer also says `Vary: Accept, Authorization`: its media type follows Accept, and a
 * cache that keys by URL alone must not hand one caller's answer to a request another header
 * could have answered otherwise (a key Yoga refuses, say). A top view is at most about a second
 * old already (the shared top cache), so a CDN adds at most another second.
 *
 * Placed before cached answers among the execute hooks: a cached answer stops the hooks after it,
 * and is exactly as public as the execution it came from.
 */
export function useTopCacheControl(): Plugin {
  const cacheable = new WeakSet<Request>();
  return {
    onExecute({ args }) {
      const request = (args.contextValue as { request?: Request }).request;
      if (!request || request.method !== 'GET') return;
      if (!readsOnlyTops(args.schema as GraphQLSchema, args.document as DocumentNode)) return;
      return {
        onExecuteDone({ result }) {
          if (!isAsyncIterable(result) && !result.errors?.length) cacheable.add(request);
        },
      };
    },
    onResponse({ request, response }) {
      const shared = cacheable.has(request) && response.status === 200 && JSON_ANSWER.test(response.headers.get('content-type') ?? '');
      response.headers.set('cache-control', shared ? PUBLIC : NOT_CACHEABLE);
      if (shared) response.headers.append('vary', 'Accept, Authorization');
    },
  };
}
