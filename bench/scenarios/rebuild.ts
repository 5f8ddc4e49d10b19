/**
 * The rebuild scenario: bench/rebuild.ts run as it is (its own database and keys, 1,000,000
 * members by default), its lines read back into a report: the rebuild job's members a second
 * beside the same rows streamed from PostgreSQL alone and a raw pipelined bulk ZADD of the same
 * members.
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

export async function runRebuild(members = PLAYERS): Promise<Report> {
  if (quietGate.enabled) await waitForQuiet({ maxWaitMs: quietGate.maxWaitMs });
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, String(members)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      process.stdout.write(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      process.stderr.write(chunk);
    });
    child.once('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`bench/rebuild.ts exited with ${code}`))));
  });
  const rebuild = figure(output, 'rebuild');
  if (!rebuild) throw new Error('bench/rebuild.ts printed no "rebuild:" line');
  const stream = figure(output, 'stream');
  const raw = figure(output, 'raw ZADD');
  const unit = 'members/s';
  const rows: Row[] = [{ name: 'rebuild job (PostgreSQL → fresh key → RENAME)', role: 'service', value: rebuild.perSecond, unit, extra: rebuild }];
  if (stream) rows.push({ name: 'PostgreSQL stream alone (cursor)', role: 'baseline', value: stream.perSecond, unit, extra: stream });
  if (raw) rows.push({ name: 'raw pipelined bulk ZADD of the same members', role: 'baseline', value: raw.perSecond, unit, extra: raw });
  return {
    scenario: 'rebuild',
    params: { members },
    rows,
    ratios: {
      ...(raw ? { 'rebuild / raw ZADD': Math.round((rebuild.perSecond / raw.perSecond) * 100) / 100 } : {}),
      ...(stream ? { 'rebuild / PostgreSQL stream': Math.round((rebuild.perSecond / stream.perSecond) * 100) / 100 } : {}),
    },
    targets: [
      {
        description: 'rebuild ≥ 250,000 members/s',
        measured: `${rebuild.perSecond.toLocaleString('en-US')} members/s`,
        met: rebuild.perSecond >= 250_000,
      },
    ],
    notes: ['measured by bench/rebuild.ts in a database and key prefix of its own, removed afterwards'],
  };
}
