import { NoSchemaIntrospectionCustomRule } from 'graphql';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';

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
 * internet). The package (about 9 MB of script) is loaded on the first request for the page, not
 * at start-up, and the page rendered once.
 */
export function graphiqlOptions(
  enabled: boolean,
): { graphiql: false } | { graphiql: GraphiQLOptions; renderGraphiQL: (options: GraphiQLOptions) => Promise<string> } {
  if (!enabled) return { graphiql: false };
  let page: Promise<string> | undefined;
  return {
    graphiql: { title: 'Leaderboard GraphiQL', defaultQuery: FIRST_TAB_QUERY },
    renderGraphiQL: (options) => (page ??= import('@graphql-yoga/render-graphiql').then(({ renderGraphiQL }) => renderGraphiQL(options))),
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
