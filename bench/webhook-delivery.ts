/**
 * The webhook delivery rate (issue 58): deliveries a second from one process to a local receiver
 * that answers 204 at once, through the real job (claims, signing, HTTP, outcomes). Run by hand,
 * not in the test suite:
 *
 *     npx tsx bench/webhook-delivery.ts [deliveries]
 *
 * The events are written straight into the outbox (db/webhook-outbox.ts) before the clock starts;
 * the figure is from the first claim to the last outcome recorded. On stores of its own
 * (bench/lib/scratch-app.ts), removed at the end.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { enqueueWebhookEvents, type OutboxEvent } from '../src/db/webhook-outbox.js';
import { scratchApp } from './lib/scratch-app.js';

const DELIVERIES = Number(process.argv[2] ?? 5_000);

async function main(): Promise<void> {
  let received = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  const scratch = await scratchApp('webhook-bench', { webhooks: { allowPrivate: true, intervalMs: null }, seasonCloseIntervalMs: null });
  try {
    await scratch.app.start();
    const made = await scratch.app.parts.storage.webhooks.insert(
      {
        id: 'wh_bench',
        url: `http://127.0.0.1:${port}/hook`,
        events: ['TOP_CHANGED'],
        boards: [],
        secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
        createdAt: new Date(),
      },
      1,
    );
    if (!made) throw new Error('the webhook was not made');
    const at = new Date();
    const events: OutboxEvent[] = Array.from({ length: DELIVERIES }, (_, i) => ({
      type: 'TOP_CHANGED',
      boardId: 'bench',
      at,
      data: { boardId: 'bench', period: 'ALL_TIME', bucket: 'all', region: null, startsAt: null, endsAt: null, entries: [], size: i, asOf: at.toISOString() },
    }));
    for (let i = 0; i < events.length; i += 1_000) await enqueueWebhookEvents(scratch.database.sql, events.slice(i, i + 1_000));
    const started = performance.now();
    const attempts = await scratch.app.parts.deliverWebhooks();
    const seconds = (performance.now() - started) / 1000;
    console.log(JSON.stringify({ deliveries: DELIVERIES, attempts, received, seconds: Number(seconds.toFixed(2)), perSecond: Math.round(attempts / seconds) }));
  } finally {
    await scratch.remove();
    receiver.close();
  }
}

await main();
