/** Interleaved rounds (`--rounds N`): stock Yoga and the service measured in turn, and what the rounds say. */
import type { Measurement } from '../lib/load.js';
import { median } from '../lib/median.js';
import type { Target } from '../lib/report.js';
import type { ServiceProcess } from '../lib/service.js';
import { type RunOptions, closedHttp, closedWs, measureStockYoga, ratio, withStock } from './common.js';

/** One round of {@link interleavedReads}: each side's measurement, taken one right after another. */
export interface ReadRound {
  /** Stock Yoga's `{ __typename }` over HTTP. */
  stock: Measurement;
  /** The service over HTTP. */
  service: Measurement;
  /** The service over graphql-ws, when the round measures it. */
  ws?: Measurement;
}

/** Each side of an interleaved round: seconds of load before it is measured, and seconds measured. */
const ROUND_WARMUP_SECONDS = 1;
const ROUND_SECONDS = 4;

/**
 * `run.rounds` rounds of stock Yoga's `{ __typename }` and the service over HTTP (and, given `ws`,
 * over graphql-ws), every process up throughout, each side measured for ROUND_SECONDS after
 * ROUND_WARMUP_SECONDS of load, in ABBA order: stock Yoga first in even rounds, last in odd ones.
 * Why: a shared VM's speed drifts over minutes (bench/RESULTS.md, the fourteenth machine: the same
 * reads took 99 and 173 µs of CPU in runs minutes apart), and a scenario's own phases measure the
 * service and stock Yoga up to a minute apart. A round's sides are seconds apart, so a drift moves
 * them all, and the alternating order cancels a steady one.
 */
export async function interleavedReads(
  run: RunOptions,
  service: ServiceProcess,
  body: () => string,
  ws?: { query: string; variables: () => Record<string, unknown> },
): Promise<ReadRound[]> {
  const side = { ...run, seconds: ROUND_SECONDS, warmup: ROUND_WARMUP_SECONDS };
  return withStock(async (stock) => {
    const sides: [keyof ReadRound, () => Promise<Measurement>][] = [
      ['stock', () => measureStockYoga(stock, side)],
      ['service', () => closedHttp(service.url, side, body, service.pid)],
    ];
    if (ws) sides.push(['ws', () => closedWs(service.wsUrl, side, ws.query, ws.variables, service.pid)]);
    const rounds: ReadRound[] = [];
    for (let round = 0; round < run.rounds; round++) {
      const measured: Partial<ReadRound> = {};
      for (const [name, measure] of round % 2 === 0 ? sides : [...sides].reverse()) measured[name] = await measure();
      rounds.push(measured as ReadRound);
    }
    return rounds;
  });
}

/** What a run's rounds say, for its report: each transport's median against its target, the medians, and a note a transport. */
export interface RoundsSummary {
  /** The median's target line, for each transport with a target and rounds. */
  targets: { http?: Target; ws?: Target };
  ratios: Record<string, number>;
  notes: string[];
}

/** Sums up `rounds` of `scenario` against its HTTP and graphql-ws targets (each × stock Yoga over HTTP; undefined: none). */
export function summariseRounds(scenario: string, rounds: readonly ReadRound[], goals: { http?: number | undefined; ws?: number | undefined }): RoundsSummary {
  const summary: RoundsSummary = { targets: {}, ratios: {}, notes: [] };
  if (rounds.length === 0) return summary;
  const range = (values: number[]) => `${Math.min(...values).toLocaleString('en-US')}–${Math.max(...values).toLocaleString('en-US')}`;
  // Each side's rates round by round, and its server's CPU a request (from /proc).
  const span = (side: keyof ReadRound) => {
    const measured = rounds.flatMap((round) => round[side] ?? []);
    const rates = measured.map((m) => Math.round(m.throughput));
    const cpu = measured.map((m) => Math.round((1e6 * (m.cpu?.server ?? NaN)) / m.throughput));
    return `${range(rates)} req/s at ${range(cpu)} µs of its CPU a request`;
  };
  const listed = (ratios: number[]) => ratios.map((r) => `${r}×`).join(', ');
  const transports = [
    { key: 'http', side: 'service', name: 'HTTP', against: 'stock Yoga {__typename}', goal: goals.http },
    { key: 'ws', side: 'ws', name: 'graphql-ws', against: 'stock Yoga {__typename} (HTTP)', goal: goals.ws },
  ] as const;
  for (const { key, side, name, against, goal } of transports) {
    // Each round's ratio to its own stock Yoga side, and their median.
    const ratios = rounds.flatMap((round) => (round[side] ? [ratio(round[side].throughput, round.stock.throughput)] : []));
    if (ratios.length === 0) continue;
    const middle = Math.round(median(ratios) * 100) / 100;
    if (goal !== undefined)
      summary.targets[key] = {
        description: `${scenario} over ${name} ≥ ${goal}× ${against}, the median of ${ratios.length} interleaved rounds`,
        measured: `${middle}×`,
        met: middle >= goal,
      };
    summary.ratios[`service ${name} / stock Yoga HTTP, median of interleaved rounds`] = middle;
    summary.notes.push(
      key === 'http'
        ? `interleaved (${rounds.length} rounds, ${ROUND_SECONDS} s a side, stock Yoga and the service in turn, ABBA): service HTTP / stock Yoga ${listed(ratios)}; median ${middle}× (service ${span('service')}; stock Yoga ${span('stock')})`
        : `interleaved: service graphql-ws / stock Yoga HTTP ${listed(ratios)}; median ${middle}× (service over graphql-ws ${span('ws')})`,
    );
  }
  return summary;
}
