import type { Sql } from 'postgres';
import type { Logger } from 'pino';

/** How long to wait before listening again after PostgreSQL did not answer. */
const LISTEN_RETRY_MS = 2_000;

/**
 * LISTEN on `channel` on the pool's own listening connection: `notified` gets each payload, and
 * `listening` runs each time the listen is (re)established (a notification sent meanwhile was
 * missed). A PostgreSQL that does not answer at start-up is retried every two seconds; postgres.js
 * listens again by itself after a lost connection. `what` names the channel in the log.
 */
export function listenOnChannel(sql: Sql, channel: string, notified: (payload: string) => void, listening: () => void, log: Logger, what: string) {
  let listener: { unlisten(): Promise<void> } | undefined;
  let retry: NodeJS.Timeout | undefined;
  let stopped = false;
  const listen = () => {
    sql.listen(channel, notified, listening).then(
      (active) => {
        if (stopped) void active.unlisten();
        else listener = active;
      },
      (error: unknown) => {
        log.warn({ err: error }, `cannot listen for ${what} yet; retrying`);
        if (!stopped) retry = setTimeout(listen, LISTEN_RETRY_MS);
      },
    );
  };
  return {
    start: listen,
    async stop() {
      stopped = true;
      clearTimeout(retry);
      await listener?.unlisten().catch(() => undefined);
    },
  };
}
