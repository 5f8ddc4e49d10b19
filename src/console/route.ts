import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type PageRoute, createPageRoute, packageRoot } from '../http/page-route.js';

/** Where the console lives: `/console` (and `/console/`); its files are under `/console/`. */
export const CONSOLE_PATH = '/console';

/**
 * Its own files and its own origin's GraphQL (HTTP and WebSocket) and exports, nothing else (its
 * charts are SVG it draws itself, its exports are saved from blob: URLs it makes); no framing by
 * another site (the page holds an admin key), and no form posts anywhere (every form is handled
 * by the script).
 */
const PAGE_POLICY =
  "default-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; object-src 'none'; frame-ancestors 'none'";

/** The page's script and the modules it imports (console.js first). */
const CONSOLE_MODULES = [
  'console.js',
  'session.js',
  'documents.js',
  'dom.js',
  'router.js',
  'boards.js',
  'buckets.js',
  'charts.js',
  'league.js',
  'rewards.js',
  'players.js',
  'removals.js',
  'operations.js',
  'webhooks.js',
];

export interface ConsoleRouteOptions {
  /** The folder holding console.html, console.css and the console's modules. Default: src/console/ of this package. */
  pageDir?: string;
}

/**
 * The operators' console: `/console` serves the page, `/console/console.css` and its modules its files, and
 * `/console/graphql-ws/*` the graphql-ws browser client (see createPageRoute). It holds no data of
 * its own: everything it shows and does goes through /graphql with the admin key typed into it.
 */
export function createConsoleRoute(options: ConsoleRouteOptions = {}): PageRoute {
  const pageDir = options.pageDir ?? join(packageRoot(dirname(fileURLToPath(import.meta.url))), 'src', 'console');
  return createPageRoute({ path: CONSOLE_PATH, pageDir, files: ['console.html', 'console.css', ...CONSOLE_MODULES], policy: PAGE_POLICY });
}
