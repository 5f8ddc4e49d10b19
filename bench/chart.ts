/**
 * Draws the latest result of every scenario into bench/results/chart.svg (plain SVG text): one
 * panel per scenario, a bar per measured line (the service in blue, its baselines in grey) with
 * the figure, its unit and its p99, and the targets met or missed beneath. The cluster run's
 * reports (one per scenario and shard count) are drawn one panel per scenario: its latest run's
 * cluster rows for every shard count beside the single node's. Writes the same results as
 * Markdown tables into bench/results/latest.md.
 *
 *     npx tsx bench/chart.ts
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { RESULTS_DIR, type Report } from './lib/report.js';

type Line = Report & { date: string; machine: { cpu: string; cores: number; node: string } };

const ORDER = ['submit', 'submit-batch', 'standing', 'around', 'top', 'friends', 'peak', 'rebuild', 'memory', 'sql-rank', 'cluster'];

/**
 * The cluster run's panels: per scenario, the reports of its latest run (one per shard count)
 * merged, fewest shards first; the single node's rows, in every report of a run, once.
 */
function clusterPanels(runs: Line[]): Line[] {
  const byScenario = new Map<string, Line[]>();
  for (const run of runs) {
    const scenario = String(run.params.scenario);
    byScenario.set(scenario, [...(byScenario.get(scenario) ?? []), run]);
  }
  return [...byScenario].map(([scenario, lines]) => {
    const latest = lines.at(-1)!;
    const ofRun = lines.filter((line) => line.params.run === latest.params.run).sort((a, b) => Number(a.params.shards) - Number(b.params.shards));
    const service = ofRun.flatMap((line) => line.rows.filter((row) => !row.name.startsWith('single node:')));
    const single = ofRun[0]!.rows.filter((row) => row.name.startsWith('single node:'));
    const { shards: _shards, ...params } = latest.params;
    return {
      ...latest,
      scenario: `cluster · ${scenario}`,
      params: { ...params, shards: ofRun.map((line) => line.params.shards) },
      rows: [...service, ...single],
      // Each report's ratios name their shard count (bench/scenarios/cluster.ts), so they merge as they are.
      ratios: Object.assign({}, ...ofRun.map((line) => line.ratios ?? {})) as Record<string, number>,
      notes: latest.notes ?? [],
    };
  });
}

function latestResults(): Line[] {
  if (!existsSync(RESULTS_DIR)) return [];
  const lines: Line[] = [];
  for (const file of readdirSync(RESULTS_DIR).filter((name) => name.endsWith('.jsonl'))) {
    // A profiled run is slowed by the profiler: the latest run without one is the figure. A peak
    // run at another scale than the design's is a panel of its own.
    const runs = readFileSync(`${RESULTS_DIR}${file}`, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Line);
    if (file === 'cluster.jsonl') {
      lines.push(...clusterPanels(runs));
      continue;
    }
    const latest = new Map<string, Line>();
    for (const run of runs) {
      const scale = typeof run.params.scale === 'number' && run.params.scale !== 1 ? ` at ${run.params.scale}× the rates` : '';
      const panel = `${run.scenario}${scale}`;
      if (run.params.profiled === true && latest.has(panel)) continue;
      latest.set(panel, { ...run, scenario: panel });
    }
    lines.push(...latest.values());
  }
  const rank = (panel: string) => {
    const scenario = panel.split(' ')[0]!;
    return ORDER.includes(scenario) ? ORDER.indexOf(scenario) : ORDER.length;
  };
  return lines.sort((a, b) => rank(a.scenario) - rank(b.scenario));
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const number = (value: number) => value.toLocaleString('en-US', { maximumFractionDigits: value < 10 ? 2 : value < 100 ? 1 : 0 });

const WIDTH = 980;
const LABEL = 380;
const BAR_AREA = 360;
const BAR = 16;
const GAP = 6;

function panel(result: Line, top: number): { svg: string; height: number } {
  const values = result.rows.map((row) => row.value).filter((value) => value > 0);
  const max = Math.max(...values, 1);
  const min = Math.min(...values, max);
  // Figures that span orders of magnitude (PostgreSQL counts beside ZREVRANK) go on a log scale.
  const log = max / min > 50;
  const length = (value: number) =>
    value <= 0 ? 0 : log ? (BAR_AREA * Math.log10(1 + (9 * value) / min)) / Math.log10(1 + (9 * max) / min) : (BAR_AREA * value) / max;
  const parts: string[] = [];
  let y = top + 22;
  parts.push(
    `<text x="10" y="${top + 14}" class="title">${escape(result.scenario)}</text>` +
      `<text x="${WIDTH - 10}" y="${top + 14}" class="meta" text-anchor="end">${escape(`${result.date.slice(0, 16).replace('T', ' ')} UTC${log ? ' · log scale' : ''}`)}</text>`,
  );
  for (const row of result.rows) {
    const label = row.name.length > 58 ? `${row.name.slice(0, 57)}…` : row.name;
    const held = row.extra && 'held' in row.extra ? (row.extra.held ? ' · held' : ' · NOT held') : '';
    const latency = row.p99 === undefined ? '' : row.requests === 0 ? ' · no answers' : ` · p99 ${number(row.p99)} ms`;
    const figure = `${number(row.value)} ${row.unit ?? 'req/s'}${latency}${held}`;
    parts.push(
      `<text x="10" y="${y + 12}" class="label">${escape(label)}</text>` +
        `<rect x="${LABEL}" y="${y}" width="${length(row.value).toFixed(1)}" height="${BAR}" class="${row.role}"/>` +
        `<text x="${LABEL + length(row.value) + 6}" y="${y + 12}" class="value">${escape(figure)}</text>`,
    );
    y += BAR + GAP;
  }
  for (const target of result.targets ?? []) {
    parts.push(
      `<text x="10" y="${y + 12}" class="${target.met ? 'met' : 'missed'}">${target.met ? '✓' : '✗'} ${escape(`${target.description}: ${target.measured}`)}</text>`,
    );
    y += 18;
  }
  return { svg: parts.join('\n'), height: y - top + 12 };
}

export function renderChart(results: Line[]): string {
  const panels: string[] = [];
  let top = 40;
  for (const result of results) {
    const { svg, height } = panel(result, top);
    panels.push(svg, `<line x1="10" x2="${WIDTH - 10}" y1="${top + height - 4}" y2="${top + height - 4}" class="rule"/>`);
    top += height;
  }
  const machine = results[0]?.machine;
  const heading = machine ? `Leaderboard benchmarks · ${machine.cores} × ${machine.cpu} · Node ${machine.node}` : 'Leaderboard benchmarks: no results yet';
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${top + 10}" viewBox="0 0 ${WIDTH} ${top + 10}" font-family="Helvetica, Arial, sans-serif">
<style>
  .heading { font-size: 16px; font-weight: bold; }
  .title { font-size: 14px; font-weight: bold; }
  .meta, .value { font-size: 11px; fill: #444; }
  .label { font-size: 12px; }
  .service { fill: #2f6fdf; }
  .baseline { fill: #a8a8a8; }
  .met { font-size: 12px; fill: #1a7f37; }
  .missed { font-size: 12px; fill: #c62828; }
  .rule { stroke: #ddd; }
</style>
<rect width="100%" height="100%" fill="white"/>
<text x="10" y="24" class="heading">${escape(heading)}</text>
${panels.join('\n')}
</svg>
`;
}

const cell = (value: number | undefined, answered = true) => (value === undefined ? '' : answered ? number(value) : '—');

/** The same results as Markdown tables, for bench/RESULTS.md. */
export function renderMarkdown(results: Line[]): string {
  const out: string[] = [];
  for (const result of results) {
    out.push(`### ${result.scenario}`, '', `${result.date.slice(0, 16).replace('T', ' ')} UTC · \`${JSON.stringify(result.params)}\``, '');
    out.push('| measured | value | unit | p50 ms | p95 ms | p99 ms | max ms | errors | cpu (cores) |', '|---|---:|---|---:|---:|---:|---:|---:|---|');
    for (const row of result.rows) {
      const held = row.extra && 'held' in row.extra ? (row.extra.held ? ' (held)' : ' (not held)') : '';
      const perUnit = row.extra?.redisCpuUsPerUnit;
      // The cluster run's Redis CPU per request (or result): what its paper estimate starts from.
      const redisCost = typeof perUnit === 'number' ? `; **Redis ${number(perUnit)} µs per ${row.unit === 'results/s' ? 'result' : 'request'}**` : '';
      const cpu = `${
        row.cpu
          ? Object.entries(row.cpu)
              .map(([name, cores]) => `${name} ${cores}`)
              .join(', ')
          : ''
      }${redisCost}`;
      out.push(
        `| ${row.role === 'baseline' ? '↳ ' : ''}${row.name}${row.quiet === false ? ' (!)' : ''} | ${number(row.value)}${held} | ${row.unit ?? 'req/s'} | ${cell(row.p50, row.requests !== 0)} | ${cell(row.p95, row.requests !== 0)} | ${cell(row.p99, row.requests !== 0)} | ${cell(row.max, row.requests !== 0)} | ${row.errors ?? ''} | ${cpu} |`,
      );
    }
    out.push('');
    for (const [name, ratio] of Object.entries(result.ratios ?? {})) out.push(`- ratio ${name}: **${ratio}×**`);
    for (const target of result.targets ?? []) out.push(`- target ${target.met ? '**met**' : '**missed**'}: ${target.description}: ${target.measured}`);
    out.push('');
  }
  return out.join('\n');
}

const results = latestResults();
writeFileSync(`${RESULTS_DIR}chart.svg`, renderChart(results));
writeFileSync(`${RESULTS_DIR}latest.md`, renderMarkdown(results));
console.log(`wrote ${RESULTS_DIR}chart.svg and latest.md from ${results.length} scenario${results.length === 1 ? '' : 's'}`);
