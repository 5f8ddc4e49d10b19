/**
 * The rebuild scenario: bench/rebuild.ts run as it is (its own database and keys, 1,000,000
 * members by default) for buckets kept as board-score rows (ALL_TIME, globally and in a region)
 * and derived from the score log (a BEST board's month, globally and in a region, and a season;
 * its week and day are derived as its month is), its lines read back into a report: each
 * rebuild's members a second beside the same rows streamed from PostgreSQL alone and a raw
 * pipelined bulk ZADD of the same members, and issue 14's target for each (at least 250,000
 * members a second, or at least 0.9× the raw ZADD).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitForQuiet } from '../lib/cpu.js';
import { PLAYERS } from '../lib/env.js';
import { quietGate } from '../lib/load.js';
import type { Report, Row } from '../lib/report.js';

const SCRIPT = fileURLToPath(new URL('../rebuild.ts', import.meta.url));

/** "rebuild:  1,000,000 members in 3.20 s = 312,500 members/s" and its siblings. */
function figure(output: string, label: string): { count: number; seconds: number; perSecond: number } | undefined {
  const match = new RegExp(`${label}:\\s+([\\d,]+) (?:members|rows)[^\\d]*?([\\d.]+) s = ([\\d,]+)`).exec(output);
  if (!match) return undefined;
  const number = (text: string) => Number(text.replaceAll(',', ''));
  return { count: number(match[1]!), seconds: Number(match[2]), perSecond: number(match[3]!) };
}

/** The buckets rebuilt, as bench/rebuild.ts names them (period, then region): kept as rows, and derived from the log. */
const BUCKETS = [['ALL_TIME'], ['ALL_TIME', 'EU'], ['MONTHLY'], ['MONTHLY', 'EU'], ['SEASON']] as const;
type BenchBucket = (typeof BUCKETS)[number];
/** How a bucket is named in the report, e.g. "MONTHLY EU". */
const bucketName = (bucket: BenchBucket) => bucket.join(' ');

/** bench/rebuild.ts's output for one bucket. */
function runScript(members: number, bucket: BenchBucket): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, String(members), '3', ...bucket], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    const echo = (to: NodeJS.WriteStream) => (chunk: Buffer) => {
      text += chunk.toString();
      to.write(chunk);
    };
    child.stdout.on('data', echo(process.stdout));
    child.stderr.on('data', echo(process.stderr));
    child.once('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`bench/rebuild.ts (${bucketName(bucket)}) exited with ${code}`))));
  });
}

export async function runRebuild(members = PLAYERS): Promise<Report> {
  const rows: Row[] = [];
  const ratios: Report['ratios'] = {};
  const targets: Report['targets'] = [];
  const unit = 'members/s';
  const round = (ratio: number) => Math.round(ratio * 100) / 100;
  for (const bucket of BUCKETS) {
    const name = bucketName(bucket);
    if (quietGate.enabled) await waitForQuiet({ maxWaitMs: quietGate.maxWaitMs });
    const output = await runScript(members, bucket);
    const rebuild = figure(output, 'rebuild');
    if (!rebuild) throw new Error(`bench/rebuild.ts (${name}) printed no "rebuild:" line`);
    const stream = figure(output, 'stream');
    const raw = figure(output, 'raw ZADD');
    rows.push({ name: `rebuild job, ${name} (PostgreSQL → fresh key → RENAME)`, role: 'service', value: rebuild.perSecond, unit, extra: rebuild });
    if (stream) rows.push({ name: `${name}: PostgreSQL stream alone (cursor)`, role: 'baseline', value: stream.perSecond, unit, extra: stream });
    if (raw) rows.push({ name: `${name}: raw pipelined bulk ZADD of the same members`, role: 'baseline', value: raw.perSecond, unit, extra: raw });
    const toRaw = raw ? round(rebuild.perSecond / raw.perSecond) : undefined;
    if (toRaw !== undefined) ratios[`${name} rebuild / raw ZADD`] = toRaw;
    if (stream) ratios[`${name} rebuild / PostgreSQL stream`] = round(rebuild.perSecond / stream.perSecond);
    targets.push({
      description: `rebuild of ${name} ≥ 250,000 members/s, or ≥ 0.9× raw ZADD`,
      measured: `${rebuild.perSecond.toLocaleString('en-US')} members/s${toRaw === undefined ? '' : `, ${toRaw}× raw ZADD`}`,
      met: rebuild.perSecond >= 250_000 || (toRaw ?? 0) >= 0.9,
    });
  }
  return {
    scenario: 'rebuild',
    params: { members, buckets: BUCKETS.map(bucketName) },
    rows,
    ratios,
    targets,
    notes: ['measured by bench/rebuild.ts in a database and key prefix of its own for each bucket, removed afterwards; median of 3 rounds'],
  };
}
