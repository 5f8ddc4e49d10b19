/**
 * Tie-break columns' cost (issue 59): the `standing` read and `submit-batch` on boards with two
 * tie-break columns beside the same scenarios on a plain board, in one run, in interleaved rounds
 * (the boards' order turned each round). Two kinds of two-column board: a narrow one, whose score and
 * columns leave the time its bits in the packed double (stars 0..3 and moves 0..1,000), and a wide
 * one, whose columns take so many bits that the time lives in the member (laps 0..100 and a race
 * time 0..3,600,000 ms: 20 + 7 + 22 bits). The issue's figure: each within 15% of the plain board.
 * Run by hand, never by npm test:
 *
 *     npx tsx bench/tie-breaks.ts [--players 20000] [--rounds 4] [--seconds 6] [--warmup 2] [--connections 16] [--match 10] [--no-quiet-wait]
 *
 * Its stores are its own (bench/lib/scratch-app.ts), removed after. The service runs in this
 * process beside the load (as the memory benches do): the boards share that, so their ratios hold,
 * not their absolute figures; the CPU per request counts the load's share too, the same for each.
 */
import { parseArgs } from 'node:util';
import { graphqlBody, httpGraphql } from './lib/clients.js';
import { type Measurement, closedLoop, quietGate } from './lib/load.js';
import { median } from './lib/median.js';
import { scratchApp } from './lib/scratch-app.js';

const { values } = parseArgs({
  options: {
    players: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '16' },
    match: { type: 'string', default: '10' },
    'no-quiet-wait': { type: 'boolean', default: false },
  },
});

const PLAYERS = Number(values.players);
const MATCH = Number(values.match);
const ADMIN = { authorization: `Bearer ${'a'.repeat(24)}` };
const SERVER = { authorization: `Bearer ${'s'.repeat(24)}` };

/** The boards compared: their createBoard input's extra fields, and each result's tie-break values. */
const BOARDS = {
  plain: { create: '', values: (): number[] | undefined => undefined },
  narrow: {
    create: 'tieBreaks: [{ name: "stars", order: HIGH_FIRST, max: 3 }, { name: "moves", order: LOW_FIRST, max: 1000 }]',
    values: () => [Math.floor(Math.random() * 4), Math.floor(Math.random() * 1001)],
  },
  wide: {
    create: 'tieBreaks: [{ name: "laps", order: HIGH_FIRST, max: 100 }, { name: "time", order: LOW_FIRST, max: 3600000 }]',
    values: () => [Math.floor(Math.random() * 101), Math.floor(Math.random() * 3_600_001)],
  },
} as const;
type BoardName = keyof typeof BOARDS;

const STANDING = graphqlBody('query($b: ID!, $p: ID!){ standing(board: $b, playerId: $p){ rank score tieBreakValues } }');
const SUBMIT_BATCH = graphqlBody('mutation($i: [SubmitScoreInput!]!){ submitScores(inputs: $i){ duplicate } }');

async function main(): Promise<void> {
  quietGate.enabled = !values['no-quiet-wait'];
  // The per-client limits off: one load client stands for many game servers and clients.
  const scratch = await scratchApp('bench-tie-breaks', { rateLimits: { submissionsPerSecond: 0, readsPerSecond: 0, readRowsPerSecond: 0 } });
  const { url } = await scratch.app.start();
  const graphqlUrl = `${url}/graphql`;
  const connections = Number(values.connections);
  const server = httpGraphql(graphqlUrl, connections, SERVER);
  let match = 0;
  const result = (board: BoardName, p: number) => {
    const tieBreakValues = BOARDS[board].values();
    return { board, playerId: `p${p}`, score: Math.floor(Math.random() * 1_000_000), matchId: `m${++match}`, ...(tieBreakValues && { tieBreakValues }) };
  };
  try {
    for (const [board, { create }] of Object.entries(BOARDS)) {
      const created = await fetch(graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...ADMIN },
        body: JSON.stringify({
          query: `mutation { createBoard(input: { id: "${board}", title: "${board}", maxScore: 1000000, periods: [ALL_TIME, DAILY] ${create} }) { id } }`,
        }),
      });
      const text = await created.text();
      if (!text.includes(`"${board}"`)) throw new Error(`createBoard ${board} failed: ${text}`);
      // Every player ranked before the first round, in batches of 500.
      for (let p = 0; p < PLAYERS; p += 500) {
        const inputs = Array.from({ length: Math.min(500, PLAYERS - p) }, (_, i) => result(board as BoardName, p + i));
        await server.post(SUBMIT_BATCH({ i: inputs }));
      }
    }
    console.log(`seed: ${PLAYERS} players on each of ${Object.keys(BOARDS).join(', ')}`);

    const scenarios = {
      standing: (board: BoardName) => () => server.post(STANDING({ b: board, p: `p${Math.floor(Math.random() * PLAYERS)}` })),
      'submit-batch': (board: BoardName) => () =>
        server.post(SUBMIT_BATCH({ i: Array.from({ length: MATCH }, () => result(board, Math.floor(Math.random() * PLAYERS))) })),
    };
    const names = Object.keys(BOARDS) as BoardName[];
    for (const [scenario, operation] of Object.entries(scenarios)) {
      const runs = Object.fromEntries(names.map((name) => [name, [] as Measurement[]])) as Record<BoardName, Measurement[]>;
      for (let r = 0; r < Number(values.rounds); r++) {
        // Each round turns the boards' order, so drift over the run falls on each alike.
        const order = names.map((_, i) => names[(i + r) % names.length]!);
        for (const board of order) {
          const m = await closedLoop({
            concurrency: connections,
            warmupSeconds: Number(values.warmup),
            seconds: Number(values.seconds),
            costOf: graphqlUrl,
            operation: operation(board),
          });
          runs[board].push(m);
          console.log(
            `>> ${scenario}: round ${r + 1}, ${board}: ${m.throughput.toFixed(0)} requests/s, p99 ${m.p99.toFixed(2)} ms, cpu ${m.cost?.serviceCpuUs ?? '?'} µs, redis ${m.cost?.redisCommands ?? '?'}, postgres ${m.cost?.postgresTransactions ?? '?'} a request, errors ${m.errors}${m.firstError ? ` (${m.firstError})` : ''}`,
          );
        }
      }
      const plain = runs.plain;
      const figure = (ms: Measurement[]) => ({
        throughput: median(ms.map((m) => m.throughput)),
        cpuUs: median(ms.map((m) => m.cost?.serviceCpuUs ?? NaN)),
        redis: median(ms.map((m) => m.cost?.redisCommands ?? NaN)),
        postgres: median(ms.map((m) => m.cost?.postgresTransactions ?? NaN)),
      });
      const base = figure(plain);
      for (const board of names) {
        const f = figure(runs[board]);
        const pct = (a: number, b: number) => `${a >= b ? '+' : ''}${((100 * (a - b)) / b).toFixed(1)}%`;
        console.log(
          `${scenario} ${board}: median ${f.throughput.toFixed(0)} requests/s (${pct(f.throughput, base.throughput)}), ${f.cpuUs.toFixed(0)} µs CPU (${pct(f.cpuUs, base.cpuUs)}), redis ${f.redis}, postgres ${f.postgres} a request`,
        );
      }
    }
  } finally {
    await server.close();
    await scratch.remove();
  }
}

await main();
