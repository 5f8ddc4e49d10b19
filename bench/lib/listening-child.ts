import { type ChildProcess, spawn } from 'node:child_process';

/**
 * Starts `node <args>` as a child process and waits until it prints `listening <port>` on its
 * standard output (a chunk may hold part of the line: the output is gathered until it does).
 * Rejects, with what it printed, when the child exits first: otherwise the wait would never end.
 */
export async function spawnListening(
  args: readonly string[],
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}: ${output}`)));
  });
  return { child, port };
}
