import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { DOCS_POLICY, renderDocs } from './docs-route.js';

export interface LandingOptions {
  /** Whether `/graphql` serves GraphiQL to a browser (GRAPHIQL); the page links it only then. */
  graphiql: boolean;
  /** The folder holding README.md, docs/ and schema.graphql (the package's root). */
  packageDir: string;
}

/** Answers whether it handled the request; `false` leaves it to the next handler. */
export type LandingRoute = (req: IncomingMessage, res: ServerResponse) => boolean;

const PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/**
 * `/`: a short page saying what this is and where to go (GraphiQL, the overlay, the console, the docs);
 * `/docs`: the README and the pages under docs/, as HTML (see renderDocs); `/schema.graphql`: the
 * printed schema, for client code generation. Every file is read and rendered once, here. O(1) a request.
 */
export function createLandingRoute(options: LandingOptions): LandingRoute {
  const files = new Map<string, { body: Buffer; type: string; policy: string }>([
    ['/', { body: Buffer.from(landingPage(options.graphiql)), type: 'text/html; charset=utf-8', policy: PAGE_POLICY }],
    ['/schema.graphql', { body: readFileSync(join(options.packageDir, 'schema.graphql')), type: 'text/plain; charset=utf-8', policy: PAGE_POLICY }],
  ]);
  for (const [path, file] of renderDocs(options.packageDir)) {
    files.set(path, { ...file, policy: DOCS_POLICY });
    // The same page with a trailing slash, as a reader may type it.
    if (file.type.startsWith('text/html')) files.set(`${path}/`, { ...file, policy: DOCS_POLICY });
  }
  return (req, res) => {
    const file = files.get((req.url ?? '/').split('?', 1)[0]!);
    if (!file || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
    res
      .writeHead(200, {
        'content-type': file.type,
        'content-length': String(file.body.length),
        'cache-control': 'no-cache',
        'content-security-policy': file.policy,
        'x-content-type-options': 'nosniff',
      })
      .end(req.method === 'HEAD' ? undefined : file.body);
    return true;
  };
}

function landingPage(graphiql: boolean): string {
  const explore = graphiql
    ? '<li><a href="/graphql">GraphiQL</a>: run queries against this service, with the whole schema and its documentation.</li>'
    : '<li><code>/graphql</code>: the GraphQL endpoint (GraphiQL is off on this deployment: <code>GRAPHIQL=false</code>).</li>';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Leaderboard</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem; color: #1b1f24; }
  code { font-size: 0.9em; }
</style>
</head>
<body>
<h1>Leaderboard</h1>
<p>A real-time leaderboard service for games: one GraphQL API over PostgreSQL and Redis.</p>
<ul>
  ${explore}
  <li><a href="/overlay?board=global">The overlay</a>: the live top ten of a board, for a stream (<code>/overlay?board=ID</code>).</li>
  <li><a href="/console">The console</a>: boards, live tops, seasons, moderation and API keys, for the people who run the game (an admin key).</li>
  <li><a href="/docs">The docs</a>: the README's tour, then the API, live boards, running boards, configuration, operating and scaling out.</li>
  <li><a href="/schema.graphql">schema.graphql</a>: the schema, for client code generation.</li>
  <li><a href="/readyz">/readyz</a> and <a href="/metrics">/metrics</a>: health and Prometheus metrics.</li>
</ul>
</body>
</html>
`;
}
