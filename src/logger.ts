import { type DestinationStream, type Logger, pino } from 'pino';

/**
 * Fields of PostgreSQL's and postgres.js's errors that carry the values a statement was sent with
 * (the parameters, the row a constraint saw, the portal parameter an encoding error was found in):
 * display names, URLs, whole batches. They never reach a log line; the SQLSTATE, the message, the
 * statement's text and the table and constraint names are enough to tell what went wrong.
 * drizzle's DrizzleQueryError writes the parameters into its message as well ("params: ..."), so
 * its message is cut before them.
 */
const VALUE_FIELDS = new Set(['parameters', 'params', 'args', 'types', 'where', 'detail', 'internal_query']);

/** The most characters any one string of a log line keeps; a longer one is cut, saying how long it was. */
export const MAX_LOG_STRING = 2_000;

const cut = (text: string) => (text.length <= MAX_LOG_STRING ? text : `${text.slice(0, MAX_LOG_STRING)}… (${text.length} characters)`);

/**
 * Cuts every string in `value` (objects and arrays walked to a few levels) to MAX_LOG_STRING.
 * Errors are left whole: pino's formatter runs before its serializers, and errorWithoutValues
 * bounds what it keeps of one.
 */
function bounded(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return cut(value);
  if (depth > 4 || value === null || typeof value !== 'object' || value instanceof Error) return value;
  if (Array.isArray(value)) return value.slice(0, 50).map((item) => bounded(item, depth + 1));
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, bounded(item, depth + 1)]));
}

const withoutParams = (text: string) => text.replace(/\nparams: [\s\S]*?(?=\n {4}at |$)/, '');
/**
 * PostgreSQL quotes the offending value in the message of a data or integrity error (classes 22 and
 * 23: `invalid input syntax for type integer: "..."`); the names of the table, column and
 * constraint stay in their own fields.
 */
const withoutQuoted = (text: string) => text.replace(/"(?:[^"\\]|\\.)*"/g, '"…"');

/** An error as a plain record: its name, message, stack, own fields and causes, less the fields that carry values. */
function errorWithoutValues(error: unknown, depth = 0): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: cut(String(error)) };
  const code = (error as { code?: unknown }).code;
  const quotesValues = typeof code === 'string' && /^2[23]/.test(code);
  const clean = (text: string) => (quotesValues ? withoutQuoted(withoutParams(text)) : withoutParams(text));
  const record: Record<string, unknown> = { type: error.name, message: clean(error.message), stack: clean(error.stack ?? '') };
  for (const [key, value] of Object.entries(error)) {
    if (!VALUE_FIELDS.has(key) && key !== 'cause') record[key] = value;
  }
  if (error.cause !== undefined && depth < 5) record.cause = errorWithoutValues(error.cause, depth + 1);
  return bounded(record) as Record<string, unknown>;
}

/**
 * Structured JSON logs on stdout. Authorization headers never reach a log line, nor the values a
 * SQL statement was sent with, and no string of a line is longer than MAX_LOG_STRING, so one bad
 * request cannot write megabytes of log.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: ['req.headers.authorization', 'authorization', 'headers.authorization'],
    serializers: { err: (error: unknown) => errorWithoutValues(error), error: (error: unknown) => errorWithoutValues(error) },
    formatters: { log: (object: Record<string, unknown>) => bounded(object) as Record<string, unknown> },
    hooks: {
      logMethod(this: Logger, args: Parameters<Logger['info']>, method: (...args: unknown[]) => void) {
        method.apply(
          this,
          args.map((arg) => (typeof arg === 'string' ? cut(arg) : arg)),
        );
      },
    },
  };
  // Standard output unless a test gives a stream to read the lines from. Written synchronously:
  // pino's asynchronous standard output can reorder lines when a pipe is full (a retried write
  // overtaken by a flush), and the service logs little per request.
  return pino(options, destination ?? pino.destination({ dest: 1, sync: true }));
}

/**
 * Exits with `code` once every line logged so far is written. Why: pino writes asynchronously, so a
 * line logged just before process.exit (the last words of a shutdown) would be lost. Exits anyway
 * after a second should the flush never finish (a standard output that blocks).
 */
export function exitAfterFlush(log: Logger, code: number): void {
  log.flush(() => process.exit(code));
  setTimeout(() => process.exit(code), 1_000).unref();
}
