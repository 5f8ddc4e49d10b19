/**
 * One client slowing everyone (issue 53, items 5–10): for each way one client was found to slow
 * every other, a scenario that runs the service with its own default limits and measures a
 * well-behaved probe client (a player's standing with the name, 40 times a second, from
 * 127.0.0.1) alone and then beside the abusive client (from 127.0.0.2), in one service process.
 * The target is the probe's p99 beside the abuse under 50 ms, with no errors.
 *
 * - abuse-cost-walk (5): a document whose cost walk fails (a nullable variable with a default,
 *   sent as null into a non-null argument) beside 19 aliased `standings(first: 1000)` with names.
 * - abuse-introspection (6): twenty aliased `__schema` walks in one operation, in batches of ten.
 * - abuse-validation (7): distinct ~5 KB documents, `boards { id }` 490 times with a unique comment.
 * - abuse-body-hold (8): 86 connections each declaring a MAX_BODY_BYTES POST body and sending none.
 * - abuse-idle-connections (9): up to 10,000 connections that send nothing (fewer when this
 *   process may not open that many files); the probe connects anew for each request, as a client
 *   arriving does, since the harm is to new connections.
 * - abuse-scalar-reads (10): twenty aliased `board { size }` per operation, at a high rate.
 *
 * The request-sending abusers keep a schedule but never more in flight than their connections
 * (a request due while all are busy is not sent, and counted); the connection holders re-open what
 * the service closes, at a bounded rate. Everything connects only to the service, on loopback.
 */
import { MAX_BODY_BYTES } from '../../src/http/request-limits.js';
import { type AbusiveHttp, type HeldConnections, type HeldCounts, abusiveHttp, countsBetween, holdConnections, openFilesLimit } from '../lib/abusers.js';
import { graphqlBody, httpGraphql } from '../lib/clients.js';
import { BENCH_TARGET, randomPlayer } from '../lib/env.js';
import type { OpenMeasurement, Stream } from '../lib/load.js';
import type { Report, Row } from '../lib/report.js';
import { SERVICE_DEFAULT_LIMITS, type ServiceProcess } from '../lib/service.js';
import { type Abuse, type Beside, openRow, probeAloneThenBeside, probeTarget } from './beside.js';
import { type RunOptions, withService } from './common.js';

export const ABUSE_CASES = [
  'abuse-cost-walk',
  'abuse-introspection',
  'abuse-validation',
  'abuse-body-hold',
  'abuse-idle-connections',
  'abuse-scalar-reads',
] as const;
export type AbuseCase = (typeof ABUSE_CASES)[number];

const PROBE = 'query Standing($board: ID!, $player: ID!) { standing(board: $board, playerId: $player) { rank score percentile player { displayName } } }';
const PROBE_RATE = 40;
const ABUSER_ADDRESS = '127.0.0.2';

/** An abusive client as a scenario uses it: what it does beside the probe, its row, and what it got, in words. */
interface CaseAbuse {
  /** The abusive client in a few words, for the rows and the target. */
  what: string;
  abuse: Abuse;
  row(beside: Beside): Row;
  summary(beside: Beside): string;
  params: Record<string, unknown>;
}

interface CaseSpec {
  /** The item of issue 53. */
  item: number;
  /** False: the probe opens a new connection for each request. Default true. */
  probeKeepAlive?: boolean;
  abuser(service: ServiceProcess): CaseAbuse;
}

const kinds = (counts: Record<string, number> | undefined) =>
  Object.entries(counts ?? {})
    .map(([kind, n]) => `${kind} ×${n}`)
    .join(', ') || 'none';

/** An abusive client POSTing `body()` at `rate` a second on at most `connections` connections. */
function requestAbuser(
  service: ServiceProcess,
  what: string,
  { rate, connections, body }: { rate: number; connections: number; body: () => string },
): CaseAbuse {
  let client: AbusiveHttp | undefined;
  let bytesAtOpen = 0;
  let bytesInWindow = 0;
  const abuser = (beside: Beside): OpenMeasurement => beside.streams.abuser!;
  return {
    what,
    abuse: {
      streams: [{ name: 'abuser', rate, maxInFlight: connections, operation: () => client!.post(body()) }],
      start: async () => {
        client = abusiveHttp(service.url, connections, { localAddress: ABUSER_ADDRESS });
      },
      stop: async () => client?.close(),
      window: {
        opened: () => (bytesAtOpen = client!.bytesReceived),
        closed: () => (bytesInWindow = client!.bytesReceived - bytesAtOpen),
      },
    },
    row: (beside) => {
      const row = openRow(`abusive client: ${what}`, 'service', abuser(beside));
      return { ...row, extra: { ...row.extra, skipped: abuser(beside).skipped, bytesInWindow } };
    },
    summary: (beside) => {
      const m = abuser(beside);
      return `${m.requests} answered, ${m.errors} refused (${kinds(m.errorKinds)}), ${m.skipped} due but not sent (its ${connections} connections busy), ${(bytesInWindow / 2 ** 20).toFixed(1)} MiB of answers`;
    },
    params: { abuserRate: rate, abuserConnections: connections },
  };
}

/** An abusive client holding `count` connections open from its address, re-opening what the service closes. */
function connectionHolder(
  service: ServiceProcess,
  what: string,
  options: { count: number; opensPerSecond: number; greeting?: (port: number) => string },
): CaseAbuse {
  const port = Number(new URL(service.url).port);
  let held: HeldConnections | undefined;
  let atOpen: HeldCounts | undefined;
  let inWindow: HeldCounts = { opened: 0, closedByService: 0, failed: {}, answers: {} };
  let openAtOpen = 0;
  let openAtEnd = 0;
  return {
    what,
    abuse: {
      start: async () => {
        held = holdConnections({
          port,
          localAddress: ABUSER_ADDRESS,
          count: options.count,
          opensPerSecond: options.opensPerSecond,
          ...(options.greeting ? { greeting: options.greeting(port) } : {}),
        });
        await held.ramped();
      },
      stop: async () => held?.close(),
      window: {
        opened: () => {
          atOpen = held!.counts();
          openAtOpen = held!.open;
        },
        closed: () => {
          inWindow = countsBetween(atOpen!, held!.counts());
          openAtEnd = held!.open;
        },
      },
    },
    row: () => ({
      name: `abusive client: ${what}`,
      role: 'service',
      unit: 'held open',
      value: openAtEnd,
      extra: { openAtOpen, openAtEnd, peak: held?.peak, ...inWindow },
    }),
    summary: () =>
      `${openAtOpen} held open when the window opened, ${openAtEnd} when it closed (peak ${held?.peak ?? 0} of ${options.count}); in the window ${inWindow.opened} opened, ` +
      `${inWindow.closedByService} closed by the service, answers on them: ${kinds(inWindow.answers)}; failed connects: ${kinds(inWindow.failed)}`,
    params: { abuserConnections: options.count, abuserOpensPerSecond: options.opensPerSecond },
  };
}

/** A Standing page of 1,000 with names, as a selection. */
const PAGE = 'edges { node { rank score player { displayName } } }';
/**
 * $player is nullable with a default, so it may stand where ID! is; sent as null, it fails that
 * field's arguments, and with them the cost walk. The field is nullable, so the pages beside it
 * are still answered.
 */
const COST_WALK = `query CostWalk($board: ID!, $player: ID = "p1") {
  me: standing(board: $board, playerId: $player) { rank }
${Array.from({ length: 19 }, (_, i) => `  s${i + 1}: standings(board: $board, first: 1000) { ${PAGE} }`).join('\n')}
}`;
const SCHEMA_WALKS = `query Introspect { ${Array.from({ length: 20 }, (_, i) => `s${i}: __schema { types { name fields { name type { name } } } }`).join(' ')} }`;
/** 490 copies of one field: valid, and the overlapping-fields rule compares every pair. */
const REPEATED_BOARDS = Array.from({ length: 490 }, () => 'boards{id}').join(' ');
const SIZES = `query Sizes($b: ID!) { ${Array.from({ length: 20 }, (_, i) => `b${i}: board(id: $b) { size }`).join(' ')} }`;
/** Below this process's open-file limit by this much: the probe, the stores and the process's own files. */
const FILES_HEADROOM = 1_000;

const CASES: Record<AbuseCase, CaseSpec> = {
  'abuse-cost-walk': {
    item: 5,
    abuser: (service) => {
      const body = graphqlBody(COST_WALK)({ board: BENCH_TARGET.boardId, player: null });
      return requestAbuser(service, 'a failing cost walk beside 19 standings(first: 1000) with names', { rate: 50, connections: 8, body: () => body });
    },
  },
  'abuse-introspection': {
    item: 6,
    abuser: (service) => {
      const one = graphqlBody(SCHEMA_WALKS)();
      const batch = `[${Array.from({ length: 10 }, () => one).join(',')}]`;
      return requestAbuser(service, 'batches of ten operations of twenty aliased __schema walks', { rate: 10, connections: 4, body: () => batch });
    },
  },
  'abuse-validation': {
    item: 7,
    abuser: (service) => {
      let sent = 0;
      const run = Date.now().toString(36);
      return requestAbuser(service, 'distinct ~5 KB documents of boards { id } ×490', {
        rate: 20,
        connections: 8,
        body: () => graphqlBody(`# ${run} ${++sent}\n{ ${REPEATED_BOARDS} }`)(),
      });
    },
  },
  'abuse-body-hold': {
    item: 8,
    abuser: (service) =>
      connectionHolder(service, '86 connections declaring a 3 MiB body and sending none', {
        count: 86,
        opensPerSecond: 200,
        greeting: (port) => `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${MAX_BODY_BYTES}\r\n\r\n`,
      }),
  },
  'abuse-idle-connections': {
    item: 9,
    probeKeepAlive: false,
    abuser: (service) => {
      const limit = openFilesLimit() ?? 1024;
      const count = Math.max(1, Math.min(10_000, limit - FILES_HEADROOM));
      const holder = connectionHolder(service, `${count.toLocaleString('en-US')} idle connections that send nothing`, { count, opensPerSecond: 1_000 });
      return { ...holder, params: { ...holder.params, openFilesLimit: limit } };
    },
  },
  'abuse-scalar-reads': {
    item: 10,
    abuser: (service) => {
      const body = graphqlBody(SIZES)({ b: BENCH_TARGET.boardId });
      return requestAbuser(service, 'twenty aliased board { size } per operation at 400/s', { rate: 400, connections: 16, body: () => body });
    },
  },
};

export async function runAbuseCase(scenario: AbuseCase, run: RunOptions): Promise<Report> {
  const spec = CASES[scenario];
  const keepAlive = spec.probeKeepAlive ?? true;
  const { beside, abuser } = await withService({ runtime: run.runtime, env: SERVICE_DEFAULT_LIMITS }, async (service) => {
    const probe = httpGraphql(service.url, 4, {}, { keepAlive });
    const probeBody = graphqlBody(PROBE);
    const probeStream: Stream = {
      name: 'probe',
      rate: PROBE_RATE,
      operation: () => probe.post(probeBody({ board: BENCH_TARGET.boardId, player: randomPlayer(BENCH_TARGET.players) })),
    };
    const caseAbuse = spec.abuser(service);
    try {
      return { beside: await probeAloneThenBeside(run, service.pid, probeStream, caseAbuse.abuse), abuser: caseAbuse };
    } finally {
      await probe.close();
    }
  });
  const probeName = `probe standing with the name at ${PROBE_RATE}/s${keepAlive ? '' : ', a new connection each'}`;
  return {
    scenario,
    params: {
      item: spec.item,
      seconds: run.seconds,
      warmup: run.warmup,
      runtime: run.runtime,
      probeRate: PROBE_RATE,
      probeKeepAlive: keepAlive,
      ...abuser.params,
    },
    rows: [
      openRow(`${probeName} beside the abusive client`, 'service', beside.probe),
      abuser.row(beside),
      openRow(`${probeName} alone (baseline, same process)`, 'baseline', beside.alone),
    ],
    targets: [probeTarget(beside.alone, beside.probe, abuser.what)],
    notes: [
      `abusive client in the measured window: ${abuser.summary(beside)}`,
      `the service with its default limits; the abusive client connects from ${ABUSER_ADDRESS}, the probe from 127.0.0.1; the probe on an open loop, errors = answers with errors or none`,
    ],
  };
}
