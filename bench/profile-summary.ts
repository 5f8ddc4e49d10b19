/**
 * Where a process's time went: reads a V8 .cpuprofile (node --cpu-prof) and prints the functions
 * with the most self time, and the same time grouped by where the code lives (the service's src/,
 * each package, Node's internals, the garbage collector, idle).
 *
 *     npx tsx bench/profile-summary.ts <file.cpuprofile> [top]
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * The main thread's .cpuprofile among those in `dir` written after `since` (epoch ms), or
 * undefined. A process started with `--import tsx` writes one profile per thread (its module
 * loader runs on a thread of its own, idle once loaded), so the busiest one is taken: the one with
 * the most time not idle.
 */
export function newestProfile(dir: string, since = 0): string | undefined {
  let busiest: { file: string; busy: number } | undefined;
  try {
    for (const name of readdirSync(dir)) {
      if (!name.endsWith('.cpuprofile') || statSync(join(dir, name)).mtimeMs < since) continue;
      const busy = busyMicroseconds(JSON.parse(readFileSync(join(dir, name), 'utf8')) as CpuProfile);
      if (!busiest || busy > busiest.busy) busiest = { file: join(dir, name), busy };
    }
  } catch {
    return undefined;
  }
  return busiest?.file;
}

/** Sampled time outside the (idle) pseudo-frame. */
function busyMicroseconds(profile: CpuProfile): number {
  const idle = new Set(profile.nodes.filter((node) => node.callFrame.functionName === '(idle)').map((node) => node.id));
  return profile.samples.reduce((sum, id, i) => (idle.has(id) ? sum : sum + (profile.timeDeltas[i] ?? 0)), 0);
}

/** Where a frame's code lives: src/<file>, a package, node internals, or a V8 pseudo-frame. */
function areaOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return 'node internals';
  const src = /\/(src\/.+)$/.exec(url);
  if (src) return src[1]!;
  return url;
}

/** The summary as text: the top functions by self time and the time by area, in ms and %. */
export function summarizeProfile(file: string, top = 25): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  let total = 0;
  const functions = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    total += us;
    const area = areaOf(url, functionName);
    const name = `${functionName || '(anonymous)'}  ${area}${url ? `:${lineNumber + 1}` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
    areas.set(area, (areas.get(area) ?? 0) + us);
  }
  const busy = total - (areas.get('(idle)') ?? 0);
  const lines = (map: Map<string, number>, count: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, us]) => `${(us / 1000).toFixed(0).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`);
  return [
    `profile: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s not idle`,
    `top ${top} functions by self time (% of all samples):`,
    ...lines(functions, top),
    'self time by where the code lives:',
    ...lines(areas, 20),
  ].join('\n');
}

/** A report note with the summary of the profile a run just wrote, if any. */
export function profileNote(dir: string, since: number, phase?: string): string[] {
  const file = newestProfile(dir, since);
  return file ? [`CPU profile of the service${phase ? ` (${phase})` : ''}: ${file}\n${summarizeProfile(file, 20)}`] : [];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: npx tsx bench/profile-summary.ts <file.cpuprofile> [top]');
    process.exit(2);
  }
  console.log(summarizeProfile(file, Number(process.argv[3] ?? 25)));
}
