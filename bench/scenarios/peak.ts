/**
 * The design's peak, open loop: 5,800 submissions a second (game servers send a match's results
 * together: submitScores of `match` results over HTTP), 5,800 my-rank reads a second (standing)
 * and 1,750 board opens a second (top, my standing and around me in one request), the reads over
 * graphql-ws as game clients send them. Requests go out on schedule whatever the answers do, and
 * latency is measured from when each was due. Beside it, the same schedule against the stock
 * servers (`{ __typename }` over HTTP and over graphql-ws): what the transports alone cost here.
 */
import { randomBytes } from 'node:crypto';
import { graphqlBody, httpGraphql, wsGraphql } from '../lib/clients.js';
import { BENCH_SERVER_KEY, BOARD_ID, randomPlayer } from '../lib/env.js';
import { type OpenMeasurement, type Stream, openLoop } from '../lib/load.js';
import { type Report, type Row, type Target, row } from '../lib/report.js';
import { type RunOptions, TYPENAME, withService, withStock } from './common.js';
import { matchInputs } from './writes.js';

/** The design's rates, per second. */
export const PEAK = { submissions: 5_800, standing: 5_800, boardOpens: 1_750 };

const SUBMIT_BATCH =
  'mutation SubmitBatch($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate improved standings { period standing { rank } } } }';
const STANDING = 'query MyRank($board: ID!, $playerId: ID!) { standing(board: $board, playerId: $playerId) { rank score percentile } }';
const BOARD_OPEN = `query BoardOpen($board: ID!, $playerId: ID!) {
  top(board: $board, limit: 10) { size entries { rank score player { id displayName } } }
  me: standing(board: $board, playerId: $playerId) { rank score percentile }
  around(board: $board, playerId: $playerId, radius: 5) { rank score player { id displayName } }
}`;

interface Endpoints {
  url: string;
  wsUrl: string;
  pid: number;
}

async function measure(endpoints: Endpoints, run: RunOptions, stock: boolean): Promise<Record<string, OpenMeasurement>> {
  const http = httpGraphql(endpoints.url, run.connections, { authorization: `Bearer ${BENCH_SERVER_KEY}` });
  const ws = await wsGraphql(endpoints.wsUrl, run.connections);
  const runId = randomBytes(4).toString('hex');
  const submit = graphqlBody(stock ? TYPENAME : SUBMIT_BATCH);
  let match = 0;
  let socket = 0;
  const onSocket = (query: string, variables?: Record<string, unknown>) => ws.run(socket++, query, variables);
  const streams: Stream[] = [
    {
      name: 'submissions',
      rate: (PEAK.submissions * run.scale) / run.match,
      operation: () => http.post(stock ? submit() : submit({ inputs: matchInputs(runId, match++, run.match) })),
    },
    {
      name: 'standing',
      rate: PEAK.standing * run.scale,
      operation: () => (stock ? onSocket(TYPENAME) : onSocket(STANDING, { board: BOARD_ID, playerId: randomPlayer() })),
    },
    {
      name: 'board opens',
      rate: PEAK.boardOpens * run.scale,
      operation: () => (stock ? onSocket(TYPENAME) : onSocket(BOARD_OPEN, { board: BOARD_ID, playerId: randomPlayer() })),
    },
  ];
  try {
    return await openLoop({ streams, warmupSeconds: run.warmup, seconds: run.seconds, watchPids: { server: endpoints.pid } });
  } finally {
    await http.close();
    await ws.close();
  }
}

function openRow(name: string, role: Row['role'], m: OpenMeasurement, unitsPerRequest = 1, unit = 'req/s'): Row {
  return {
    ...row(name, role, m, unitsPerRequest, unit),
    value: m.achievedRate * unitsPerRequest,
    extra: {
      targetRate: m.targetRate * unitsPerRequest,
      achievedRate: m.achievedRate * unitsPerRequest,
      held: m.held,
      backlogAtEnd: m.backlogAtEnd,
      maxSendLagMs: Math.round(m.maxSendLagMs),
    },
  };
}

export async function runPeak(run: RunOptions): Promise<Report> {
  const service = await withService({ runtime: run.runtime }, (s) => measure(s, run, false));
  const stock = await withStock((s) => measure({ url: s.url, wsUrl: s.wsUrl, pid: s.pid }, run, true));

  const rows: Row[] = [
    openRow(`service submissions (submitScores ×${run.match}, HTTP)`, 'service', service.submissions!, run.match, 'results/s'),
    openRow('service my rank (standing, graphql-ws)', 'service', service.standing!),
    openRow('service board opens (top+standing+around, graphql-ws)', 'service', service['board opens']!),
    openRow('stock Yoga {__typename} at the submissions schedule (HTTP)', 'baseline', stock.submissions!),
    openRow('stock graphql-ws {__typename} at the my-rank schedule', 'baseline', stock.standing!),
    openRow('stock graphql-ws {__typename} at the board-open schedule', 'baseline', stock['board opens']!),
  ];
  const targets: Target[] = (
    [
      ['submissions', service.submissions!, run.match],
      ['my rank', service.standing!, 1],
      ['board opens', service['board opens']!, 1],
    ] as const
  ).flatMap(([name, m, units]) => [
    {
      description: `peak ${name} held at ${Math.round(m.targetRate * units).toLocaleString('en-US')}/s`,
      measured: `${Math.round(m.achievedRate * units).toLocaleString('en-US')}/s answered, ${m.errors} errors, ${m.backlogAtEnd} waiting at the end`,
      met: m.held,
    },
    { description: `peak ${name} p99 < 50 ms`, measured: m.requests === 0 ? 'no answers' : `${m.p99.toFixed(1)} ms`, met: m.p99 < 50 && m.held },
  ]);
  return {
    scenario: 'peak',
    params: { seconds: run.seconds, warmup: run.warmup, connections: run.connections, match: run.match, scale: run.scale, runtime: run.runtime },
    rows,
    targets,
    notes: [
      'open loop: latency counted from when each request was due; held = answers at ≥ 99% of the rate, no errors, under 1 s of requests waiting at the end',
      `reads spread over ${run.connections} graphql-ws sockets; submissions over ${run.connections} HTTP connections`,
    ],
  };
}
