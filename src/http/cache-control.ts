import { type DocumentNode, Kind, OperationTypeNode, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** What every answer but a cacheable top says: every POST answer among them. */
export const NOT_CACHEABLE = 'no-store';

/** The root fields whose answers may be cached for a second: the shared top view. */
const CACHEABLE_FIELDS = new Set(['top', '__typename']);

/**
 * `Cache-Control: public, max-age=1` for a GET query that asks only for `top` and answered without
 * errors, so a CDN in front absorbs the readers of a hot board; `no-store` for everything else.
 * A top view is at most about a second old already (the shared top cache), so a CDN adds at most
 * another second.
 */
export function useTopCacheControl(): Plugin {
  const cacheable = new WeakSet<Request>();
  return {
    onExecute({ args }) {
      const request = (args.contextValue as { request?: Request }).request;
      if (!request || request.method !== 'GET') return;
      const operation = getOperationAST(args.document as DocumentNode, args.operationName as string | undefined);
      const onlyTop =
        operation?.operation === OperationTypeNode.QUERY &&
        operation.selectionSet.selections.every((selection) => selection.kind === Kind.FIELD && CACHEABLE_FIELDS.has(selection.name.value));
      if (!onlyTop) return;
      return {
        onExecuteDone({ result }) {
          if (!('errors' in result && result.errors?.length)) cacheable.add(request);
        },
      };
    },
    onResponse({ request, response }) {
      response.headers.set('cache-control', cacheable.has(request) && response.status === 200 ? 'public, max-age=1' : NOT_CACHEABLE);
    },
  };
}
