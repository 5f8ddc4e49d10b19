import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, extname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the page lives: `/overlay` (and `/overlay/`); its assets are under `/overlay/`. */
export const OVERLAY_PATH = '/overlay';

/** The page's own files, in src/overlay/ beside this module's source. */
const PAGE_FILES = ['overlay.html', 'overlay.css', 'overlay.js'] as const;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
};

/**
 * The page may load its own files and open a WebSocket to its own origin, nothing else. Styles
 * set from the script through the CSSOM (the `background` parameter) are not inline styles, so
 * `style-src 'self'` allows them.
 */
const PAGE_POLICY = "default-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; object-src 'none'";

interface Asset {
  body: Buffer;
  headers: Record<string, string>;
}

export interface OverlayRouteOptions {
  /** The folder holding overlay.html, overlay.css and overlay.js. Default: src/overlay/ of this package. */
  pageDir?: string;
}

/** Answers whether it handled the request; `false` leaves it to the next handler. */
export type OverlayRoute = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * The overlay for streams: `/overlay` serves the page, `/overlay/overlay.{css,js}` its files and
 * `/overlay/graphql-ws/*` the graphql-ws browser client straight from node_modules. Every file is
 * read once, here, so a broken install fails at start-up rather than on a stream. O(total size of
 * the files) once; O(1) a request.
 */
export function createOverlayRoute(options: OverlayRouteOptions = {}): OverlayRoute {
  const pageDir = options.pageDir ?? join(packageRoot(dirname(fileURLToPath(import.meta.url))), 'src', 'overlay');
  const assets = new Map<string, Asset>();
  for (const name of PAGE_FILES) assets.set(`${OVERLAY_PATH}/${name}`, asset(join(pageDir, name)));
  for (const [path, file] of graphqlWsClientFiles()) assets.set(`${OVERLAY_PATH}/graphql-ws/${path}`, asset(file));
  const page = assets.get(`${OVERLAY_PATH}/overlay.html`)!;
  page.headers['content-security-policy'] = PAGE_POLICY;

  return (req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    if (path !== OVERLAY_PATH && !path.startsWith(`${OVERLAY_PATH}/`)) return false;
    const found = path === OVERLAY_PATH || path === `${OVERLAY_PATH}/` ? page : assets.get(path);
    if (!found) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end('not found\n');
      return true;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end('method not allowed\n');
      return true;
    }
    if (req.headers['if-none-match'] === found.headers.etag) {
      res.writeHead(304, { etag: found.headers.etag!, 'cache-control': found.headers['cache-control']! }).end();
      return true;
    }
    res.writeHead(200, found.headers).end(req.method === 'HEAD' ? undefined : found.body);
    return true;
  };
}

function asset(file: string): Asset {
  const body = readFileSync(file);
  return {
    body,
    headers: {
      'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
      'content-length': String(body.length),
      // The URLs carry no version, so a browser (or OBS) asks again each time and gets a 304 while
      // nothing changed: an upgrade is picked up by the next reload, never a stale mix of files.
      'cache-control': 'no-cache',
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    },
  };
}

/** The nearest folder at or above `from` that holds a package.json: the same from src/ (tsx) and dist/ (npm start). */
export function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/**
 * graphql-ws's browser client (its package's `browser` export of `./client`, an ES module) and the
 * chunks it imports, as (path relative to the client's folder, file). Following the imports keeps
 * the hashed chunk names out of this code, so an upgrade of graphql-ws needs no change here.
 */
function graphqlWsClientFiles(): Map<string, string> {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('graphql-ws/package.json');
  const { exports } = JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { browser?: string }> };
  const entry = exports['./client']?.browser;
  if (!entry) throw new Error('graphql-ws has no browser build of ./client');
  const base = join(dirname(manifest), posix.dirname(entry));
  const files = new Map<string, string>();
  const visit = (path: string) => {
    if (files.has(path)) return;
    if (path.split('/').includes('..')) throw new Error(`graphql-ws's client imports ${path} from outside its folder`);
    const file = join(base, path);
    files.set(path, file);
    const source = readFileSync(file, 'utf8');
    for (const match of source.matchAll(/\b(?:from|import)\s*["'](\.\/[^"']+)["']/g)) visit(posix.join(posix.dirname(path), match[1]!));
  };
  visit(posix.basename(entry));
  return files;
}
