/**
 * The stock baselines, in a process of their own like the service: an out-of-the-box Yoga on
 * node:http answering `{ __typename }`, and on the same port a stock graphql-ws server
 * (graphql-transport-ws, `useServer({ schema })`) over the same schema. Whatever the service
 * costs beyond these is its own.
 *
 * Run as a script it listens on PORT (default 0) and prints `listening <port>`; import
 * {@link startBaselineYoga} to start it as a child process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { useServer } from 'graphql-ws/use/ws';
import { createSchema, createYoga } from 'graphql-yoga';
import { WebSocketServer } from 'ws';

export interface BaselineProcess {
  url: string;
  wsUrl: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts the stock servers as a child process and waits until they listen. */
export async function startBaselineYoga(): Promise<BaselineProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the stock Yoga exited with ${code}: ${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    wsUrl: `ws://127.0.0.1:${port}/graphql`,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

function serve(): void {
  const schema = createSchema({ typeDefs: 'type Query { hello: String }' });
  const yoga = createYoga({ schema });
  // As Yoga's docs do it: createServer(yoga); the wrapper only tells the linter the promise is Yoga's to handle.
  const server = createServer((req, res) => void yoga(req, res));
  const wsServer = new WebSocketServer({ server, path: yoga.graphqlEndpoint });
  useServer({ schema }, wsServer);
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
  });
  process.once('SIGTERM', () => {
    for (const client of wsServer.clients) client.terminate();
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) serve();
