/**
 * Overtaking's cost to the write path (issue 58): submissions a second with every player listed
 * as a friend by `--followers` others (1,000 by default) and an overtaken fan-out (a webhook
 * wanting FRIEND_OVERTAKEN, answered by a local receiver, and a friendOvertook subscriber on the
 * board's channel), against the same run with neither (then nothing is detected at all: no
 * friend list is read). Interleaved rounds (ABBA), each a closed loop of `--connections` clients
 * sending submitScore for random players, each result a little better than the player's last, so
 * most results pass some of the player's followers. The issue's figure: the fan-out within 10%.
 * Run by hand, never by npm test:
 *
 *     npx tsx bench/overtaken.ts [--players 2000] [--followers 1000] [--rounds 4] [--seconds 6] [--warmup 2] [--connections 16] [--no-quiet-wait]
 *
 * Its stores are its own (bench/lib/scratch-app.ts), removed after. The service runs in this
 * process beside the load (as the memory benches do): the two runs share that, so their ratio
 * holds, not their absolute figures.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { httpGraphql, graphqlBody } from './lib/clients.js';
import { type Measurement, closedLoop, quietGate } from './lib/load.js';
import { median } from './lib/median.js';
import { scratchApp } from './lib/scratch-app.js';
import { subscriberFor } from '../src/pubsub/top-feed.js';

const { values } = parseArgs({
  options: {
    players: { type: 'string', default: '2000' },
    followers: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '16' },
    'no-quiet-wait': { type: 'boolean', default: false },
  },
});

const PLAYERS = Number(values.players);
const FOLLOWERS = Math.min(Number(values.followers), PLAYERS - 1);
const BOARD = 'overtaken';
const SERVER_KEY = 's'.repeat(24);
const SUBMIT = graphqlBody('mutation($i: SubmitScoreInput!){ submitScore(input: $i){ duplicate } }');

async function main(): Promise<void> {
  quietGate.enabled = !values['no-quiet-wait'];
  // The receiver: answers every delivery 204 at once, counting them.
  let delivered = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      delivered++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const scratch = await scratchApp('bench-overtaken', { webhooks: { allowPrivate: true } });
  const { url } = await scratch.app.start();
  const { sql } = scratch.database;
  const listener = subscriberFor(scratch.redis);
  try {
    const created = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${'a'.repeat(24)}` },
      body: JSON.stringify({
        query: `mutation { createBoard(input: { id: "${BOARD}", title: "overtaken", maxScore: 1000000000, periods: [ALL_TIME, DAILY] }) { id } }`,
      }),
    });
    if (!(await created.text()).includes(BOARD)) throw new Error('createBoard failed');
    // Player i is listed by the FOLLOWERS players after it (mod PLAYERS): everyone has as many followers.
    await sql`
      insert into friendships (player_id, friend_id)
      select 'p' || ((i + k) % ${PLAYERS}), 'p' || i
      from generate_series(0, ${PLAYERS - 1}) as i, generate_series(1, ${FOLLOWERS}) as k
      on conflict do nothing`;
    await sql`analyze friendships`;
    console.log(`seed: ${PLAYERS} players, ${FOLLOWERS} followers each`);

    const scores = new Array<number>(PLAYERS).fill(0);
    const client = httpGraphql(`${url}/graphql`, Number(values.connections), { authorization: `Bearer ${SERVER_KEY}` });
    let match = 0;
    const submit = async () => {
      const p = Math.floor(Math.random() * PLAYERS);
      scores[p]! += 1 + Math.floor(Math.random() * 100);
      await client.post(SUBMIT({ i: { board: BOARD, playerId: `p${p}`, score: scores[p], matchId: `m${++match}` } }));
    };
    // Every player ranked before the first round, so results pass followers from the start.
    for (let p = 0; p < PLAYERS; p += 500) await Promise.all(Array.from({ length: Math.min(500, PLAYERS - p) }, () => submit()));

    const fanOut = async (on: boolean) => {
      await sql`delete from webhooks`;
      if (listener.status === 'ready') await listener.sunsubscribe();
      if (!on) return;
      await sql`insert into webhooks (id, url, events, boards, secret) values ('wh_bench', ${receiverUrl}, '{FRIEND_OVERTAKEN}', '{}', 'whsec_YmVuY2g=')`;
      if (listener.status === 'wait') await listener.connect();
      await listener.ssubscribe(scratch.app.parts.masterIndex.overtakenChannel(BOARD));
      // The process's knowledge of subscribers and webhooks is renewed within seconds.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    };

    const runs: Record<'fan-out' | 'none', Measurement[]> = { 'fan-out': [], none: [] };
    const told = () => sql<{ n: number }[]>`select count(*)::int as n from webhook_events where type = 'FRIEND_OVERTAKEN'`.then(([row]) => row!.n);
    for (let r = 0; r < Number(values.rounds); r++) {
      for (const name of r % 2 === 0 ? (['fan-out', 'none'] as const) : (['none', 'fan-out'] as const)) {
        await fanOut(name === 'fan-out');
        const eventsBefore = await told();
        const m = await closedLoop({
          concurrency: Number(values.connections),
          warmupSeconds: Number(values.warmup),
          seconds: Number(values.seconds),
          operation: submit,
        });
        runs[name].push(m);
        console.log(
          `>> overtaken: round ${r + 1}, ${name}: ${m.throughput.toFixed(0)} submissions/s, p99 ${m.p99.toFixed(2)} ms, errors ${m.errors}${m.firstError ? ` (${m.firstError})` : ''}; FRIEND_OVERTAKEN events ${(await told()) - eventsBefore}, deliveries so far ${delivered}`,
        );
      }
    }
    const fan = median(runs['fan-out'].map((m) => m.throughput));
    const none = median(runs.none.map((m) => m.throughput));
    console.log(`overtaken: median ${fan.toFixed(0)} submissions/s with the fan-out, ${none.toFixed(0)} without: ${((100 * (fan - none)) / none).toFixed(1)}%`);
    await client.close();
  } finally {
    listener.disconnect();
    await scratch.remove();
    receiver.close();
  }
}

await main();
