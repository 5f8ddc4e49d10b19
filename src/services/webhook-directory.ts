import type { Storage } from '../db/storage.js';
import type { WebhookEvent, WebhookInterest } from '../model/webhooks.js';
import type { Logger } from 'pino';

/**
 * How old what the directory knows may be before a lookup loads it again (in the background): bounds
 * what a missed notification (PostgreSQL away, a dropped listening connection) costs.
 * @default 10,000 ms
 */
export const WEBHOOK_DIRECTORY_MAX_AGE_MS = 10_000;

/** Per event: whether some webhook wants it of every board, and the boards others name. */
type Wanted = Map<WebhookEvent, { everyBoard: boolean; boards: Set<string> }>;

export type WebhookDirectory = WebhookInterest & {
  /** Whether the deployment has no webhook at all, as last loaded (then no delivery can be due). */
  none(): boolean;
  /** Loads the webhooks now; answers once loaded (or once the load failed, keeping what was known). */
  refresh(): Promise<void>;
  /** Loads the webhooks and listens for their changes in every process. */
  start(): Promise<void>;
  stop(): Promise<void>;
};

/**
 * Which events the deployment's webhooks (≤ MAX_WEBHOOKS) want, kept in the process so that the
 * write side asks without a query (wants() is two map lookups). Loaded at start, again at once in
 * every process when any creates or deletes a webhook (LISTEN/NOTIFY, or polling behind transaction
 * pooling: db/webhooks.ts listenForWebhookChanges), and in the background once older than
 * `maxAgeMs`. Until the first load answers, nothing is wanted.
 */
export function createWebhookDirectory(
  deps: { storage: Pick<Storage, 'webhooks'>; log: Logger },
  options: { maxAgeMs?: number | undefined; clock?: (() => number) | undefined } = {},
): WebhookDirectory {
  const maxAgeMs = options.maxAgeMs ?? WEBHOOK_DIRECTORY_MAX_AGE_MS;
  const clock = options.clock ?? (() => performance.now());
  let wanted: Wanted = new Map();
  // Until the first load answers, there may be webhooks: only a load says there are none.
  let count = -1;
  let loadedAt = -Infinity;
  let loading: Promise<void> | undefined;
  // A change told while a load runs may be missed by it: load once more after it.
  let again = false;
  const load = async (): Promise<void> => {
    const startedAt = clock();
    try {
      const next: Wanted = new Map();
      const webhooks = await deps.storage.webhooks.list();
      for (const webhook of webhooks) {
        for (const event of webhook.events) {
          const entry = next.get(event) ?? { everyBoard: false, boards: new Set<string>() };
          if (webhook.boards.length === 0) entry.everyBoard = true;
          for (const board of webhook.boards) entry.boards.add(board);
          next.set(event, entry);
        }
      }
      wanted = next;
      count = webhooks.length;
      loadedAt = startedAt;
    } catch (error) {
      deps.log.warn({ err: error }, 'cannot load the webhooks; keeping what was known');
    }
  };
  const refresh = (): Promise<void> => {
    if (loading) {
      again = true;
      return loading;
    }
    loading = load().finally(() => {
      loading = undefined;
      if (again) {
        again = false;
        void refresh();
      }
    });
    return loading;
  };
  const changes = deps.storage.webhooks.listenForChanges(() => void refresh(), deps.log);
  const renewIfOld = () => {
    if (clock() - loadedAt > maxAgeMs && !loading) void refresh();
  };
  return {
    none() {
      renewIfOld();
      return count === 0;
    },
    wants(boardId, event) {
      renewIfOld();
      const entry = wanted.get(event);
      return entry !== undefined && (entry.everyBoard || entry.boards.has(boardId));
    },
    refresh,
    async start() {
      changes.start();
      await refresh();
    },
    async stop() {
      await changes.stop();
      await loading;
    },
  };
}
