import type { Logger } from 'pino';

/**
 * postgres.js 3.4.9 can throw from a timer after a connection dropped: a write queued just as the
 * socket closed runs `socket.write` on a socket it has already set to null
 * (connection.js, nextWrite). Nothing awaits that timer, so the TypeError is uncaught and would
 * end the process on every PostgreSQL flap; the connection itself is already closed and its queries
 * already failed or requeued by the library. This recognises exactly that error so the process can
 * log it and carry on; every other uncaught exception still ends the process.
 */
export function isPostgresWriteAfterClose(error: unknown): boolean {
  return (
    error instanceof TypeError &&
    /Cannot read properties of null \(reading 'write'\)/.test(error.message) &&
    /postgres[\\/]src[\\/]connection\.js/.test(error.stack ?? '')
  );
}

let installed = false;

/** Installs the process-wide handler once: the known postgres.js race is logged, anything else is fatal. */
export function survivePostgresWriteAfterClose(log: Logger): void {
  if (installed) return;
  installed = true;
  process.on('uncaughtException', (error) => {
    if (isPostgresWriteAfterClose(error)) {
      log.warn({ err: error }, 'postgres.js wrote to a closed connection (known library race); carrying on');
      return;
    }
    log.fatal({ err: error }, 'uncaught exception');
    process.exit(1);
  });
}
