import { connect } from 'node:net';

/** One command as MONITOR lists it: its arguments (the command's name first) and the client that sent it (`ip:port`). */
export type OnCommand = (args: string[], source: string) => void;

/** A quoted argument of a MONITOR line, with Redis's escapes (\", \\, \n, \r, \t, \xNN). */
const ARG = /"((?:[^"\\]|\\.)*)"/g;

const unescape = (text: string) =>
  text.replace(/\\(x[0-9a-fA-F]{2}|.)/g, (_all, code: string) =>
    code.length === 3 ? String.fromCharCode(parseInt(code.slice(1), 16)) : (({ n: '\n', r: '\r', t: '\t' } as Record<string, string>)[code] ?? code),
  );

/**
 * Runs MONITOR on a plain socket of its own and hands each command Redis runs to `onCommand`,
 * from the moment the promise resolves (Redis answered +OK). A plain socket rather than ioredis's
 * `monitor()`, whose connection can take a MONITOR line for the reply of a command of its own
 * when lines stream in while it is still setting up ("Command queue state error" under load).
 */
export function watchCommands(port: number, onCommand: OnCommand, host = '127.0.0.1'): Promise<{ close(): void }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host });
    let buffered = '';
    let started = false;
    socket.setEncoding('latin1');
    socket.on('error', (error) => (started ? undefined : reject(error)));
    socket.on('connect', () => socket.write('MONITOR\r\n'));
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      let end: number;
      while ((end = buffered.indexOf('\r\n')) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (!started) {
          if (line !== '+OK') return reject(new Error(`MONITOR answered ${line}`));
          started = true;
          resolve({ close: () => socket.destroy() });
          continue;
        }
        const source = /\[\d+ ([^\]]+)\]/.exec(line)?.[1] ?? '';
        onCommand(
          [...line.matchAll(ARG)].map((match) => unescape(match[1]!)),
          source,
        );
      }
    });
  });
}
