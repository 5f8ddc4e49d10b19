import { NoSchemaIntrospectionCustomRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';

/**
 * GraphiQL's first tab: a real query against the board every fresh database has, so a newcomer's
 * first click on "run" answers something.
 */
export const FIRST_TAB_QUERY = `# The top ten of the board \`global\`, with names.
# Run it with the pink button (Ctrl-Enter);
# the Docs panel (top left) lists every operation.
query TopOfGlobal {
  top(board: "global", limit: 10) {
    bucket
    size
    asOf
    entries {
      rank
      score
      achievedAt
      player {
        id
        displayName
      }
    }
  }
}
`;

/**
 * Yoga's options for GraphiQL on `/graphql`: off, or on with its scripts, styles and editor workers
 * all inlined from `@graphql-yoga/render-graphiql` (nothing loads from a CDN, so it works without
 * internet). The page (about 9 MB) is rendered once, on its first request, not per request.
 */
export function graphiqlOptions(enabled: boolean): { graphiql: false } | { graphiql: { title: string; defaultQuery: string }; renderGraphiQL: typeof renderGraphiQL } {
  if (!enabled) return { graphiql: false };
  let page: string | undefined;
  return {
    graphiql: { title: 'Leaderboard GraphiQL', defaultQuery: FIRST_TAB_QUERY },
    renderGraphiQL: (options) => (page ??= renderGraphiQL(options)),
  };
}

/**
 * Refuses `__schema` and `__type` (GraphQL's own NoSchemaIntrospectionCustomRule) when
 * introspection is off; `__typename` stays allowed, since clients add it everywhere. Yoga, the fast
 * path and graphql-ws all validate through this pipeline.
 */
export function useIntrospection(enabled: boolean): Plugin {
  if (enabled) return {};
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(NoSchemaIntrospectionCustomRule);
    },
  };
}
