import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type PageRoute, createPageRoute, packageRoot } from '../http/page-route.js';

/** Where the page lives: `/overlay` (and `/overlay/`); its assets are under `/overlay/`. */
export const OVERLAY_PATH = '/overlay';

/**
 * The page may load its own files and open a WebSocket to its own origin, nothing else. Styles
 * set from the script through the CSSOM (the `background` parameter) are not inline styles, so
 * `style-src 'self'` allows them.
 */
const PAGE_POLICY = "default-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; object-src 'none'";

export interface OverlayRouteOptions {
  /** The folder holding overlay.html, overlay.css and overlay.js. Default: src/overlay/ of this package. */
  pageDir?: string;
}

/** Answers whether it handled the request; `false` leaves it to the next handler. */
export type OverlayRoute = PageRoute;

/**
 * The overlay for streams: `/overlay` serves the page, `/overlay/overlay.{css,js}` its files and
 * `/overlay/graphql-ws/*` the graphql-ws browser client (see createPageRoute).
 */
export function createOverlayRoute(options: OverlayRouteOptions = {}): OverlayRoute {
  const pageDir = options.pageDir ?? join(packageRoot(dirname(fileURLToPath(import.meta.url))), 'src', 'overlay');
  return createPageRoute({ path: OVERLAY_PATH, pageDir, files: ['overlay.html', 'overlay.css', 'overlay.js'], policy: PAGE_POLICY });
}
