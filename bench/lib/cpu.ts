/**
 * CPU use over a measured window, from /proc (Linux): the machine's busy cores, this process (the
 * load generator), the processes named by pid, and every PostgreSQL process together. On a
 * two-core machine shared by everything, it says who had the cores. Elsewhere it reports nothing.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** utime + stime of a process, in seconds; undefined when it is gone. */
export function processSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces; the fields after it are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return undefined;
  }
}

/** Every process whose command is `name`, summed (PostgreSQL runs one process per connection). */
function namedSeconds(name: string): number {
  let total = 0;
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) total += processSeconds(Number(entry)) ?? 0;
      } catch {
        // Gone meanwhile.
      }
    }
  } catch {
    // No /proc.
  }
  return total;
}

/** Busy and total time of the whole machine, in seconds of CPU. */
function machineSeconds(): { busy: number; total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const values = line.trim().split(/\s+/).slice(1).map(Number);
    const total = values.reduce((a, b) => a + b, 0);
    const idle = (values[3] ?? 0) + (values[4] ?? 0);
    return { busy: (total - idle) / clockTicks(), total: total / clockTicks() };
  } catch {
    return undefined;
  }
}

export interface CpuSample {
  at: number;
  self: number;
  pids: Record<string, number | undefined>;
  pidSeconds: Record<string, number | undefined>;
  postgres: number;
  machine: { busy: number; total: number } | undefined;
}

/** Processes watched in every sample, e.g. { redis: pid }; set once by the runner. */
export const alwaysWatched: Record<string, number | undefined> = {};

export function sampleCpu(watch: Record<string, number | undefined> = {}): CpuSample {
  const pids = { ...alwaysWatched, ...watch };
  const usage = process.cpuUsage();
  return {
    at: performance.now(),
    self: (usage.user + usage.system) / 1e6,
    pids,
    pidSeconds: Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, pid === undefined ? undefined : processSeconds(pid)])),
    postgres: namedSeconds('postgres'),
    machine: machineSeconds(),
  };
}

/** Cores used since `start`, by name: machine, loadgen, postgres, each watched pid, and other (the rest of machine). */
export function cpuSince(start: CpuSample): Record<string, number> {
  const end = sampleCpu(start.pids);
  const wall = (end.at - start.at) / 1000;
  const round = (value: number) => Math.round(value * 100) / 100;
  const out: Record<string, number> = {};
  if (start.machine && end.machine) {
    const cores = (end.machine.total - start.machine.total) / wall;
    out.machine = round(((end.machine.busy - start.machine.busy) / (end.machine.total - start.machine.total)) * cores);
  }
  out.loadgen = round((end.self - start.self) / wall);
  for (const [name, before] of Object.entries(start.pidSeconds)) {
    const after = end.pidSeconds[name];
    if (before !== undefined && after !== undefined) out[name] = round((after - before) / wall);
  }
  // A PostgreSQL backend that exits meanwhile takes its time with it: at least 0.
  out.postgres = round(Math.max(0, end.postgres - start.postgres) / wall);
  // Whatever else had the cores meanwhile (another job on a shared machine shows here).
  if (out.machine !== undefined) {
    const known = Object.entries(out).reduce((sum, [name, cores]) => (name === 'machine' ? sum : sum + cores), 0);
    out.other = round(Math.max(0, out.machine - known));
  }
  return out;
}

/**
 * Waits until the machine is quiet: under `threshold` cores busy over a 2-second sample, with this
 * process idle. On a machine shared with other jobs (a test run, another benchmark) a measurement
 * would otherwise count their load as the service's slowness. Answers whether it got quiet within
 * `maxWaitMs`; the caller goes on either way and says so.
 */
export async function waitForQuiet({ threshold = 0.3, maxWaitMs = 10 * 60_000, say = (line: string) => console.log(line) } = {}): Promise<boolean> {
  const until = Date.now() + maxWaitMs;
  let said = false;
  for (;;) {
    const before = machineSeconds();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const after = machineSeconds();
    if (!before || !after) return true;
    const cores = os.cpus().length;
    const busy = ((after.busy - before.busy) / (after.total - before.total)) * cores;
    if (busy < threshold) return true;
    if (Date.now() > until) {
      say(`the machine is still busy (${busy.toFixed(2)} cores used by others); measuring anyway`);
      return false;
    }
    if (!said) {
      say(`waiting for the machine to be quiet (${busy.toFixed(2)} cores busy elsewhere)…`);
      said = true;
    }
  }
}
