import { type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request a test receiver got: its webhook-id, path, body, and whether `standardwebhooks` verified it. */
export interface Received {
  path: string;
  id: string;
  body: string;
  verified: boolean;
  error?: string;
}

/**
 * A webhook receiver on 127.0.0.1 for tests: verifies every request with `standardwebhooks`
 * (new Webhook(secret).verify(body, headers)), unchanged, with the secret registered for its path.
 * `answer` says what a path answers (default 204); `hang` paths never answer.
 */
export async function startWebhookReceiver() {
  const secrets = new Map<string, string>();
  const received: Received[] = [];
  const answers = new Map<string, (res: ServerResponse) => void>();
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      let verified = false;
      let error: string | undefined;
      try {
        new Webhook(secrets.get(path) ?? 'whsec_').verify(body, headers);
        verified = true;
      } catch (e) {
        error = (e as Error).message;
      }
      received.push({ path, id: String(req.headers['webhook-id']), body, verified, ...(error ? { error } : {}) });
      const answer = answers.get(path);
      if (answer) answer(res);
      else res.writeHead(204).end();
    });
    // Open until the sender gives up on it (its connection closes).
    res.on('close', () => hanging.delete(res));
    if (answers.get(req.url ?? '/') === hang) hanging.add(res);
  });
  const hang = () => undefined;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    /** Requests to hanging paths still open. */
    hanging,
    of: (path: string) => received.filter((r) => r.path === path),
    secret(path: string, secret: string) {
      secrets.set(path, secret);
    },
    answer(path: string, respond: (res: ServerResponse) => void) {
      answers.set(path, respond);
    },
    status:
      (code: number, headers: Record<string, string> = {}) =>
      (res: ServerResponse) =>
        res.writeHead(code, headers).end(),
    hang,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type WebhookReceiver = Awaited<ReturnType<typeof startWebhookReceiver>>;
