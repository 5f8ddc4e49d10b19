import { type ChildProcess, spawn } from 'node:child_process';

/** One JSON log line of the service (pino), as written on stdout. */
export interface LogLine {
  msg?: string;
  pid?: number;
  level?: number;
  [field: string]: unknown;
}

export interface ServiceProcess {
  child: ChildProcess;
  /** Everything written on stdout and stderr so far. */
  output(): string;
  /** Every JSON log line so far, from the process and (WORKERS > 1) its workers. */
  lines(): LogLine[];
  /** The URL of the first "listening" line; rejects when the process exits first. */
  listening: Promise<string>;
  /** The process's exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** The first log line, already written or still to come, that `match` accepts. */
  logged(match: (line: LogLine) => boolean): Promise<LogLine>;
}

/**
 * The real service as a process, `node --import tsx src/main.ts` with `env` on top of this one's
 * (with WORKERS > 1 its workers are forked from it and write to the same stdout).
 */
export function startService(env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let pending = '';
  const lines: LogLine[] = [];
  const waiters = new Set<{ match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }>();
  // 'close', not 'exit': a process's last lines may still be in the pipe when it exits, and a
  // test reads them once it has.
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));

  const onLine = (text: string) => {
    if (!text.startsWith('{')) return;
    let line: LogLine;
    try {
      line = JSON.parse(text) as LogLine;
    } catch {
      return;
    }
    lines.push(line);
    for (const waiter of waiters) {
      if (!waiter.match(line)) continue;
      waiters.delete(waiter);
      waiter.resolve(line);
    }
  };
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    pending += chunk.toString();
    const complete = pending.split('\n');
    pending = complete.pop() ?? '';
    for (const text of complete) onLine(text);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });

  const logged = (match: (line: LogLine) => boolean) =>
    new Promise<LogLine>((resolve, reject) => {
      const found = lines.find(match);
      if (found) return resolve(found);
      waiters.add({ match, resolve });
      void exited.then((code) => reject(new Error(`exited with ${code} before the awaited log line: ${output}`)));
    });

  const listening = new Promise<string>((resolve, reject) => {
    const onData = () => {
      const match = /"url":"(http:[^"]+)","msg":"listening"/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`exited with ${code}: ${output}`)));
  });
  // Awaited by the caller, or not at all when the process is expected to fail.
  listening.catch(() => undefined);
  return { child, output: () => output, lines: () => [...lines], listening, exited, logged };
}
