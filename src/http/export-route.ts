import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { Counter, Gauge } from 'prom-client';
import { type Keyring, bearerKey } from '../auth/keys.js';
import {
  EXPORT_PARAMETERS,
  type ExportDeps,
  type ExportParameter,
  type ExportParameters,
  ExportRefusal,
  type PreparedExport,
  prepareExport,
  runExport,
} from '../reads/export.js';
import type { Metrics } from '../services/metrics.js';
import type { RateLimits } from '../services/rate-limits.js';
import type { ClientAddressOf } from './client-address.js';

/** Where exports are served. */
export const EXPORT_PATH = '/export';

/** The longest request target (path and query string) the route reads: six parameters of an id's length, escaped, fit. */
export const MAX_EXPORT_URL_LENGTH = 2_048;

/** What the route takes (6 members): who a key is, the failed-key budget, the read side's export, the client's address, metrics and the log. */
export interface ExportRouteDeps {
  keyring: Pick<Keyring, 'identify'>;
  limits: Pick<RateLimits, 'authFailureAllowed' | 'authFailed'>;
  exports: ExportDeps;
  clientOf: ClientAddressOf;
  metrics: Pick<Metrics, 'registry'>;
  log: Logger;
}

export interface ExportRouteOptions {
  /**
   * The longest an export may take, from its request to its last byte: then it is cut off (the
   * client sees the response end without its last chunk) and its transaction rolled back. PostgreSQL
   * holds its statements to the same bound. @default 900,000 (15 minutes: a million rows take seconds
   * on a client that keeps up, and a client this slow holds a connection and a snapshot for too long)
   */
  maxDurationMs?: number;
  /**
   * The longest a client may take nothing of what it was sent (the response waiting for 'drain'):
   * then the export is cut off. PostgreSQL ends the transaction too if it idles a little longer.
   * @default 60,000
   */
  stallMs?: number;
  /**
   * Exports this process streams at once; more are answered 503 with Retry-After. Each holds a
   * connection of the pool for its whole length, which the API's requests need. @default 2
   */
  maxInFlight?: number;
}

/** How much longer than `stallMs` PostgreSQL lets the export's transaction idle: the service cuts it off first. */
const IDLE_MARGIN_MS = 5_000;

type Answer = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * `GET /export?board=ID&period=P&bucket=B&region=R&format=csv|ndjson&rankStyle=S` with the admin key
 * (`Authorization: Bearer <key>`, as the API takes it): a bucket's whole standings as a download
 * (reads/export.ts), streamed with backpressure: the next batch is read from PostgreSQL only once
 * the socket took the last. 401 without the admin key; 400 naming a bad parameter (unknown or
 * repeated ones too); 503 past `maxInFlight` or with PostgreSQL away. See docs/export.md.
 */
export function createExportRoute(deps: ExportRouteDeps, options: ExportRouteOptions = {}): Answer {
  const maxDurationMs = options.maxDurationMs ?? 900_000;
  const stallMs = options.stallMs ?? 60_000;
  const maxInFlight = options.maxInFlight ?? 2;
  const rowsRead = new Counter({
    name: 'leaderboard_export_rows_total',
    help: 'Standings exports read from PostgreSQL (GET /export), by format: each batch is read once the client took the one before.',
    labelNames: ['format'] as const,
    registers: [deps.metrics.registry],
  });
  const inFlight = new Gauge({
    name: 'leaderboard_exports_in_flight',
    help: 'Exports this process is streaming now (each holds a PostgreSQL connection and a snapshot).',
    registers: [deps.metrics.registry],
  });
  let running = 0;

  async function serve(req: IncomingMessage, res: ServerResponse, query: string): Promise<void> {
    if (!(await isAdmin(deps, req, res))) return;
    const parameters = parametersOf(query);
    if (parameters instanceof ExportRefusal) return refuse(res, parameters);
    if (running >= maxInFlight) {
      return answer(res, 503, { code: 'UNAVAILABLE', message: `${maxInFlight} exports are running in this process; retry later.` }, { 'retry-after': '10' });
    }
    running += 1;
    inFlight.inc();
    try {
      let prepared: PreparedExport;
      try {
        prepared = await prepareExport(deps.exports, parameters);
      } catch (error) {
        if (error instanceof ExportRefusal) return refuse(res, error);
        throw error;
      }
      await stream(res, prepared);
    } finally {
      running -= 1;
      inFlight.dec();
    }
  }

  async function stream(res: ServerResponse, prepared: PreparedExport): Promise<void> {
    // The export ends when the client goes, when it stalls, or at its time bound, whichever comes first.
    const ended = new AbortController();
    const gone = () => {
      if (!res.writableFinished) ended.abort(new Error('the client went away'));
    };
    res.once('close', gone);
    const deadline = setTimeout(() => ended.abort(new Error(`the export took longer than ${maxDurationMs} ms`)), maxDurationMs);
    const counted = rowsRead.labels(prepared.format);
    try {
      await runExport(
        deps.exports,
        prepared,
        {
          opened(snapshot) {
            res.writeHead(200, {
              'content-type': prepared.contentType,
              'content-disposition': `attachment; filename="${prepared.filename}"`,
              'cache-control': 'no-store',
              'x-content-type-options': 'nosniff',
              'leaderboard-bucket': prepared.bucket,
              'leaderboard-rank-style': prepared.rankStyle,
              ...(snapshot.closedAt ? { 'leaderboard-closed-at': snapshot.closedAt.toISOString() } : { 'leaderboard-snapshot-at': snapshot.at.toISOString() }),
            });
          },
          write: (text) => (res.write(text) ? undefined : drained(res, ended, stallMs)),
        },
        { signal: ended.signal, bounds: { statementMs: maxDurationMs, idleMs: stallMs + IDLE_MARGIN_MS }, read: (rows) => counted.inc(rows) },
      );
      res.end();
    } catch (error) {
      if (!ended.signal.aborted) deps.log.error({ err: error, board: prepared.boardId, bucket: prepared.bucket }, 'export failed');
      else deps.log.info({ reason: (ended.signal.reason as Error).message, board: prepared.boardId, bucket: prepared.bucket }, 'export cut off');
      // Before the first byte: a status says so. After it: the connection is cut without the last
      // chunk, so that no client takes a partial file for a whole one.
      if (!res.headersSent && !ended.signal.aborted) answer(res, 503, { code: 'UNAVAILABLE', message: 'PostgreSQL is not answering; retry later.' });
      else res.destroy();
    } finally {
      clearTimeout(deadline);
      res.off('close', gone);
    }
  }

  return (req, res) => {
    const url = req.url ?? '';
    const mark = url.indexOf('?');
    if ((mark === -1 ? url : url.slice(0, mark)) !== EXPORT_PATH) return false;
    if (req.method !== 'GET') {
      answer(res, 405, { code: 'BAD_USER_INPUT', message: 'exports are read with GET.' }, { allow: 'GET' });
      return true;
    }
    if (url.length > MAX_EXPORT_URL_LENGTH) {
      answer(res, 414, { code: 'BAD_USER_INPUT', message: `the request target is longer than ${MAX_EXPORT_URL_LENGTH} characters.` });
      return true;
    }
    serve(req, res, mark === -1 ? '' : url.slice(mark + 1)).catch((error: unknown) => {
      deps.log.error({ err: error }, 'export failed');
      if (!res.headersSent) answer(res, 503, { code: 'UNAVAILABLE', message: 'A backing store is not answering; retry later.' });
      else res.destroy();
    });
    return true;
  };
}

/**
 * Whether the request carries the admin key (an environment's or one made with the CLI); else
 * answers 401 (429 past the client's budget of failed keys, as the API does) and false.
 */
async function isAdmin(deps: ExportRouteDeps, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const key = bearerKey(req.headers.authorization);
  const client = deps.clientOf(req) ?? 'unknown';
  let role: string | undefined;
  if (key) {
    try {
      const caller = await deps.keyring.identify(key, { beforeLookup: () => deps.limits.authFailureAllowed(client) });
      if (!caller) await deps.limits.authFailed(client);
      role = caller?.role;
    } catch (error) {
      if ((error as { extensions?: { code?: unknown } }).extensions?.code !== 'RATE_LIMITED') throw error;
      answer(res, 429, { code: 'RATE_LIMITED', message: (error as Error).message });
      return false;
    }
  }
  if (role === 'admin') return true;
  answer(
    res,
    401,
    { code: 'UNAUTHENTICATED', message: 'exports need the admin key: Authorization: Bearer <key>.' },
    { 'www-authenticate': 'Bearer realm="export"' },
  );
  return false;
}

/**
 * The query string's parameters, or a refusal naming the one that is unknown or repeated. The
 * string is bounded (MAX_EXPORT_URL_LENGTH) before it is parsed, and so is every value.
 */
function parametersOf(query: string): ExportParameters | ExportRefusal {
  const parameters: ExportParameters = {};
  for (const [name, value] of new URLSearchParams(query)) {
    if (!(EXPORT_PARAMETERS as readonly string[]).includes(name)) {
      const shown = name.length > 40 ? `${name.slice(0, 40)}…` : name;
      return new ExportRefusal(shown, 'BAD_USER_INPUT', `is not a parameter of an export, which takes ${EXPORT_PARAMETERS.join(', ')}.`);
    }
    if (parameters[name as ExportParameter] !== undefined) {
      return new ExportRefusal(name, 'BAD_USER_INPUT', 'is given more than once.');
    }
    parameters[name as ExportParameter] = value;
  }
  return parameters;
}

function refuse(res: ServerResponse, refusal: ExportRefusal): void {
  answer(res, 400, { code: refusal.code, parameter: refusal.parameter, message: refusal.message });
}

/** A JSON answer that is not an export: `{ "error": { code, parameter?, message } }`. */
function answer(res: ServerResponse, status: number, error: { code: string; parameter?: string; message: string }, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers }).end(JSON.stringify({ error }));
}

/**
 * Resolves once the response drained; rejects when the export ended meanwhile (the client went, or
 * its time was up) or when the client took nothing for `stallMs`.
 */
function drained(res: ServerResponse, ended: AbortController, stallMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(stall);
      res.off('drain', onDrain);
      ended.signal.removeEventListener('abort', onAbort);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onDrain = () => done();
    // Every reason the export is ended with is an Error (see stream()).
    const onAbort = () => done(ended.signal.reason as Error);
    const stall = setTimeout(() => {
      ended.abort(new Error(`the client took nothing for ${stallMs} ms`));
    }, stallMs);
    res.once('drain', onDrain);
    ended.signal.addEventListener('abort', onAbort, { once: true });
    if (ended.signal.aborted) onAbort();
  });
}
