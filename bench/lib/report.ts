/**
 * The report of one scenario: a table on stdout, and one JSON line appended to
 * bench/results/<scenario>.jsonl with the date, the machine, the parameters, every figure beside
 * its baselines, and the targets with whether each was met. bench/chart.ts draws from those lines.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { cpus, platform, release, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Measurement } from './load.js';
import type { CostPerRequest } from './store-calls.js';

export const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

/** One line of the table: the service or a baseline, measured in the same run. */
export interface Row extends Partial<Measurement> {
  /** What was measured, e.g. "service standing (HTTP)". */
  name: string;
  /** 'service' rows are the thing measured; the others are what it is compared with. */
  role: 'service' | 'baseline';
  /** The figure's unit: requests a second unless the scenario says otherwise. */
  unit?: string;
  /** The headline figure in that unit (throughput unless said otherwise). */
  value: number;
  /** Anything else worth keeping (the open loop's rate held, bytes per member…). */
  extra?: Record<string, unknown>;
}

export interface Target {
  description: string;
  /** What was measured against it, as text. */
  measured: string;
  met: boolean;
}

export interface Report {
  scenario: string;
  params: Record<string, unknown>;
  rows: Row[];
  /** service / baseline ratios worth printing, e.g. { 'standing HTTP / stock Yoga': 2.1 }. */
  ratios?: Record<string, number>;
  targets?: Target[];
  notes?: string[];
}

export function machine() {
  const list = cpus();
  return {
    cpu: list[0]?.model ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    os: `${platform()} ${release()}`,
  };
}

const fmt = (value: number | undefined, digits = 0) =>
  value === undefined || Number.isNaN(value) ? '' : value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const msOf = (value: number | undefined) => (value === undefined ? '' : value < 10 ? fmt(value, 2) : fmt(value, 1));

function table(header: string[], lines: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => (line[i] ?? '').length)));
  const render = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [render(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(render)].join('\n');
}

/** Prints the table and appends the JSON line. */
/** A row's cost from the service's own counters: "0.13 Redis commands, … a request (its /metrics); 132.3 KB allocated a request (its heap)". */
function costLine(cost: CostPerRequest): string {
  const gc = cost.gcPauseUs === undefined ? '' : ` and ${fmt(cost.gcPauseUs)} µs of garbage-collection pauses`;
  const counted = `${fmt(cost.redisCommands, 2)} Redis commands, ${fmt(cost.postgresTransactions, 4)} PostgreSQL transactions, ${fmt(cost.serviceCpuUs)} µs of service CPU${gc} a request (its /metrics)`;
  return cost.allocatedKb === undefined ? counted : `${counted}; ${fmt(cost.allocatedKb, 1)} KB allocated a request (its heap)`;
}

export function publish(report: Report): void {
  const lines = report.rows.map((row) => {
    // No answer in the window: there is no latency to show.
    const ms = (value: number | undefined) => (row.requests === 0 ? '—' : msOf(value));
    return [
      `${row.role === 'baseline' ? '  ' : ''}${row.name}${row.quiet === false ? ' (!)' : ''}`,
      fmt(row.value, row.value < 100 ? 1 : 0),
      row.unit ?? 'req/s',
      ms(row.p50),
      ms(row.p95),
      ms(row.p99),
      ms(row.max),
      row.errors === undefined ? '' : String(row.errors),
      row.cpu
        ? Object.entries(row.cpu)
            .map(([name, cores]) => `${name} ${cores}`)
            .join(' ')
        : '',
    ];
  });
  console.log(`\n== ${report.scenario} ${JSON.stringify(report.params)}`);
  console.log(table(['measured', 'value', 'unit', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'errors', 'cpu (cores)'], lines));
  for (const row of report.rows) {
    if (row.firstError) console.log(`  first error of ${row.name}: ${row.firstError}`);
  }
  for (const row of report.rows) {
    const serverCores = row.cpu?.server;
    const cpuUs = serverCores !== undefined && row.throughput ? `${fmt((serverCores * 1e6) / row.throughput)} µs of server CPU a request (/proc)` : undefined;
    const cost = row.cost && costLine(row.cost);
    if (cost || cpuUs) console.log(`cost of ${row.name}: ${[cost, cpuUs].filter(Boolean).join('; ')}`);
  }
  if (report.rows.some((row) => row.quiet === false))
    console.log('(!) other jobs kept the machine busy before this measurement: see "other" in its cpu column');
  for (const [name, ratio] of Object.entries(report.ratios ?? {})) console.log(`ratio ${name}: ${fmt(ratio, 2)}×`);
  for (const target of report.targets ?? []) console.log(`target ${target.met ? 'MET   ' : 'MISSED'} ${target.description}: ${target.measured}`);
  for (const note of report.notes ?? []) console.log(`note: ${note}`);

  mkdirSync(RESULTS_DIR, { recursive: true });
  const line = { date: new Date().toISOString(), machine: machine(), ...report };
  appendFileSync(`${RESULTS_DIR}${report.scenario}.jsonl`, `${JSON.stringify(line)}\n`);
}

/** A measurement as a table row. */
export function row(name: string, role: Row['role'], measurement: Measurement, unitsPerRequest = 1, unit?: string): Row {
  return {
    name,
    role,
    ...measurement,
    value: measurement.throughput * unitsPerRequest,
    ...(unit ? { unit } : {}),
  };
}
