/* global document */
/**
 * The console's charts, drawn as plain SVG by DOM calls: nothing is fetched, no library is loaded,
 * so they work offline and under the page's policy (its own files only). Every text in a chart is
 * a text node (player ids and bucket labels are never parsed as markup), and its look comes from
 * classes styled in console.css (the policy allows no inline style attributes).
 *
 * Each chart is a <figure>: the SVG (role img, with a <title> and a <desc> summing it up), a
 * caption saying the same in words, and the data as a table in a <details>, for a screen reader and
 * for anyone who wants the figures. Each mark carries its figures in data-* attributes too.
 */
import { fmtNumber, h } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element; its children are elements or text (never markup). */
function s(tag, attrs = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'dataset') for (const [key, item] of Object.entries(value)) element.dataset[key] = String(item);
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof globalThis.Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** The drawing's size in SVG units (the element scales to its box, see .chart svg in console.css). */
const WIDTH = 640;
const HEIGHT = 260;
const MARGIN = { top: 22, right: 20, bottom: 44, left: 56 };
const PLOT = { left: MARGIN.left, right: WIDTH - MARGIN.right, top: MARGIN.top, bottom: HEIGHT - MARGIN.bottom };

/** Ids for the title and description each chart's SVG is labelled by; unique within the page. */
let charts = 0;

/**
 * Round tick values covering [min, max], about `count` of them: steps of 1, 2 or 5 times a power
 * of ten (whole numbers only with `integers`), the last at or past max. O(ticks).
 */
export function niceTicks(min, max, count = 5, { integers = false } = {}) {
  if (!(max > min)) return [min];
  const raw = (max - min) / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= raw) ?? 10 * power;
  if (integers) step = Math.max(1, Math.round(step));
  const ticks = [];
  for (let value = Math.ceil(min / step) * step; value <= max + step * 1e-9; value += step) ticks.push(Number(value.toPrecision(12)));
  // One more past max, so that the axis ends on a labelled tick.
  if (ticks.at(-1) < max) ticks.push(Number((ticks.at(-1) + step).toPrecision(12)));
  return ticks;
}

/** At most `count` indexes of `length` items, evenly spread, the first and the last always among them. */
function spreadIndexes(length, count) {
  if (length <= count) return [...Array(length).keys()];
  const picked = new Set();
  for (let i = 0; i < count; i++) picked.add(Math.round((i * (length - 1)) / (count - 1)));
  return [...picked];
}

/** Horizontal grid lines at `ticks`, each labelled on the left; `y` places a value. */
function yGrid(ticks, y) {
  return s(
    'g',
    { class: 'grid' },
    ticks.map((tick) => [
      s('line', { x1: PLOT.left, x2: PLOT.right, y1: y(tick), y2: y(tick) }),
      s('text', { x: PLOT.left - 8, y: y(tick), class: 'tick y', 'text-anchor': 'end', 'dominant-baseline': 'middle' }, fmtNumber(tick)),
    ]),
  );
}

/** The vertical axis's name, written upwards beside it. */
function yAxisName(name) {
  const middle = (PLOT.top + PLOT.bottom) / 2;
  return s('text', { class: 'axis-name', x: 14, y: middle, transform: `rotate(-90 14 ${middle})`, 'text-anchor': 'middle' }, name);
}

/** The figure around a chart: the SVG, a caption, and the data table folded away. */
function figure(kind, svg, summary, dataTable, dataset) {
  return h(
    'figure',
    { class: `chart ${kind}`, dataset },
    svg,
    h('figcaption', { class: 'muted small chart-summary' }, summary),
    h('details', { class: 'chart-data' }, h('summary', {}, 'Data table'), dataTable),
  );
}

/** The SVG itself, labelled by its title and description. */
function frame(title, summary) {
  const id = `chart-${++charts}`;
  return s(
    'svg',
    { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', 'aria-labelledby': `${id}-title ${id}-desc`, preserveAspectRatio: 'xMidYMid meet' },
    s('title', { id: `${id}-title` }, title),
    s('desc', { id: `${id}-desc` }, summary),
  );
}

function dataTableOf(label, headers, rows) {
  return h(
    'table',
    { 'aria-label': label, class: 'chart-table' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        headers.map((header) => h('th', { class: header.startsWith('#') ? 'num' : undefined }, header.replace(/^#/, ''))),
      ),
    ),
    h('tbody', {}, rows),
  );
}

/**
 * A player's rank over buckets: a line through one point per bucket, oldest on the left, with the
 * rank axis upside down so that rank 1 is at the top. `points` come oldest first, each
 * `{ label, rank, size, startsAt, href }` (startsAt an ISO instant or null; href a link to the
 * bucket, or null). When every point has a start, they are placed by time, so a bucket the player
 * missed shows as a gap; otherwise one step apart.
 * O(points).
 */
export function rankChart({ title, points, unit = 'bucket' }) {
  const best = points.reduce((top, point) => (top === null || point.rank < top.rank ? point : top), null);
  const last = points.at(-1);
  const summary =
    points.length === 0
      ? `No ${unit} to chart.`
      : `Rank over ${points.length} closed ${unit}${points.length === 1 ? '' : 's'} from ${points[0].label} to ${last.label}: ` +
        `best ${best.rank} (${best.label}), latest ${last.rank} of ${fmtNumber(last.size)} (${last.label}).`;
  const svg = frame(title, summary);
  if (points.length > 0) {
    const lowest = Math.max(2, ...points.map((point) => point.rank));
    const ticks = niceTicks(1, lowest, 5, { integers: true });
    const bottomRank = Math.max(lowest, ticks.at(-1));
    // Rank 1 at the top, the lowest rank charted at the bottom.
    const y = (rank) => PLOT.top + ((rank - 1) / (bottomRank - 1)) * (PLOT.bottom - PLOT.top);
    const times = points.map((point) => (point.startsAt ? Date.parse(point.startsAt) : NaN));
    const byTime = times.every((time) => Number.isFinite(time)) && times[0] !== times.at(-1);
    const inset = 12;
    const x = (i) =>
      points.length === 1
        ? (PLOT.left + PLOT.right) / 2
        : byTime
          ? PLOT.left + inset + ((times[i] - times[0]) / (times.at(-1) - times[0])) * (PLOT.right - PLOT.left - 2 * inset)
          : PLOT.left + inset + (i / (points.length - 1)) * (PLOT.right - PLOT.left - 2 * inset);

    const grid = yGrid([1, ...ticks.filter((tick) => tick > 1)], y);
    const xLabels = s('g', { class: 'x-labels' });
    for (const i of spreadIndexes(points.length, 6)) {
      xLabels.append(s('text', { x: x(i), y: PLOT.bottom + 18, class: 'tick x', 'text-anchor': 'middle' }, points[i].label));
    }
    const line = s('polyline', { class: 'line', fill: 'none', points: points.map((point, i) => `${x(i).toFixed(1)},${y(point.rank).toFixed(1)}`).join(' ') });
    const marks = s('g', { class: 'points' });
    const showValues = points.length <= 16;
    points.forEach((point, i) => {
      const dot = s(
        'circle',
        { class: 'point', cx: x(i).toFixed(1), cy: y(point.rank).toFixed(1), r: 4, dataset: { bucket: point.label, rank: point.rank, size: point.size } },
        s('title', {}, `${point.label}: rank ${fmtNumber(point.rank)} of ${fmtNumber(point.size)}`),
      );
      marks.append(point.href ? s('a', { href: point.href }, dot) : dot);
      if (showValues) marks.append(s('text', { x: x(i), y: y(point.rank) - 9, class: 'value', 'text-anchor': 'middle' }, fmtNumber(point.rank)));
    });
    svg.append(grid, s('line', { class: 'axis', x1: PLOT.left, x2: PLOT.left, y1: PLOT.top, y2: PLOT.bottom }), yAxisName('rank'), xLabels, line, marks);
  }
  const rows = points.map((point) =>
    h(
      'tr',
      { dataset: { bucket: point.label } },
      h('td', {}, point.href ? h('a', { href: point.href }, point.label) : point.label),
      h('td', { class: 'num rank' }, point.rank),
      h('td', { class: 'num' }, fmtNumber(point.size)),
    ),
  );
  return figure('rank-chart', svg, summary, dataTableOf(`${title}: data`, ['Bucket', '#Rank', '#Players'], rows), { points: points.length });
}

/**
 * A bucket's score histogram: one bar per bin (`bins` as scoreDistribution answers them, lowest
 * first: `{ from, to, players }`), its height the players it holds. O(bins).
 */
export function histogram({ title, bins }) {
  const players = bins.reduce((sum, bin) => sum + bin.players, 0);
  const fullest = bins.reduce((top, bin) => (top === null || bin.players > top.players ? bin : top), null);
  const range = (bin) => `${fmtNumber(bin.from)} – ${fmtNumber(bin.to)}`;
  const summary =
    bins.length === 0 || players === 0
      ? 'Nobody is ranked in this bucket.'
      : `${fmtNumber(players)} player${players === 1 ? '' : 's'} in ${bins.length} bin${bins.length === 1 ? '' : 's'} of scores from ` +
        `${fmtNumber(bins[0].from)} to ${fmtNumber(bins.at(-1).to)}; the fullest, ${range(fullest)}, holds ${fmtNumber(fullest.players)}.`;
  const svg = frame(title, summary);
  if (bins.length > 0) {
    const ticks = niceTicks(0, Math.max(1, fullest.players), 4, { integers: true });
    const top = Math.max(1, fullest.players, ticks.at(-1));
    const y = (count) => PLOT.bottom - (count / top) * (PLOT.bottom - PLOT.top);
    const slot = (PLOT.right - PLOT.left) / bins.length;
    const gap = Math.min(2, slot * 0.15);
    const grid = yGrid(ticks, y);
    const bars = s('g', { class: 'bars' });
    bins.forEach((bin, i) => {
      bars.append(
        s(
          'rect',
          {
            class: 'bar',
            x: (PLOT.left + i * slot + gap / 2).toFixed(2),
            y: y(bin.players).toFixed(2),
            width: Math.max(0.5, slot - gap).toFixed(2),
            height: (PLOT.bottom - y(bin.players)).toFixed(2),
            dataset: { from: bin.from, to: bin.to, players: bin.players },
          },
          s('title', {}, `${range(bin)}: ${fmtNumber(bin.players)} player${bin.players === 1 ? '' : 's'}`),
        ),
      );
      if (bins.length <= 24 && bin.players > 0)
        bars.append(s('text', { class: 'value', x: PLOT.left + (i + 0.5) * slot, y: y(bin.players) - 5, 'text-anchor': 'middle' }, fmtNumber(bin.players)));
    });
    // A few of the bins' edges as labels, the first and the last among them.
    const edges = [...bins.map((bin) => bin.from), bins.at(-1).to];
    const xLabels = s('g', { class: 'x-labels' });
    for (const i of spreadIndexes(edges.length, 6)) {
      xLabels.append(s('text', { x: PLOT.left + i * slot, y: PLOT.bottom + 18, class: 'tick x', 'text-anchor': 'middle' }, fmtNumber(edges[i])));
    }
    svg.append(
      grid,
      s('line', { class: 'axis', x1: PLOT.left, x2: PLOT.right, y1: PLOT.bottom, y2: PLOT.bottom }),
      yAxisName('players'),
      s('text', { class: 'axis-name', x: (PLOT.left + PLOT.right) / 2, y: HEIGHT - 6, 'text-anchor': 'middle' }, 'score'),
      bars,
      xLabels,
    );
  }
  const rows = bins.map((bin) =>
    h(
      'tr',
      { dataset: { from: bin.from, to: bin.to } },
      h('td', { class: 'num' }, fmtNumber(bin.from)),
      h('td', { class: 'num' }, fmtNumber(bin.to)),
      h('td', { class: 'num players' }, bin.players),
    ),
  );
  return figure('histogram', svg, summary, dataTableOf(`${title}: data`, ['#From', '#To', '#Players'], rows), { bins: bins.length, players });
}
