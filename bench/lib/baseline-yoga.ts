/**
 * The stock baselines, in a process of their own like the service: an out-of-the-box Yoga on
 * node:http answering `{ __typename }`, and on the same port a stock graphql-ws server
 * (graphql-transport-ws, `useServer({ schema })`) over the same schema. Whatever the service
 * costs beyond these is its own. And on `/bytes`, plain node:http reading each POST body whole and
 * answering the same bytes every time, without parsing either: the ceiling of any HTTP server in
 * Node on this machine with this load generator, so that a target above it is known to be out of
 * reach of the process model rather than of the code.
 *
 * Run as a script it listens on PORT (default 0) and prints `listening <port>`; import
 * {@link startBaselineYoga} to start it as a child process.
 */
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { useServer } from 'graphql-ws/use/ws';
import { createSchema, createYoga } from 'graphql-yoga';
import { WebSocketServer } from 'ws';
import { spawnListening } from './listening-child.js';

export interface BaselineProcess {
  url: string;
  /** Plain node:http answering {@link PLAIN_ANSWER} to every POST. */
  bytesUrl: string;
  wsUrl: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts the stock servers as a child process and waits until they listen. */
export async function startBaselineYoga(): Promise<BaselineProcess> {
  // As the service runs (npm start): production, so both skip graphql-js's development checks.
  const { child, port } = await spawnListening(['--import', 'tsx', fileURLToPath(import.meta.url)], 'the stock Yoga', {
    ...process.env,
    PORT: '0',
    NODE_ENV: 'production',
  });
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    bytesUrl: `http://127.0.0.1:${port}/bytes`,
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

/** What `/bytes` answers: the size of a standing with its player's name. */
const PLAIN_ANSWER = Buffer.from('{"data":{"standing":{"rank":123456,"score":98765,"percentile":87.6543,"player":{"displayName":"Player 123456"}}}}');

/** Reads the body whole (as any server must before it answers), then writes the fixed answer. */
function serveBytes(req: IncomingMessage, res: ServerResponse): void {
  req.on('data', () => {});
  req.once('end', () => res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': PLAIN_ANSWER.length }).end(PLAIN_ANSWER));
}

function serve(): void {
  const schema = createSchema({ typeDefs: 'type Query { hello: String }' });
  const yoga = createYoga({ schema });
  // As Yoga's docs do it: createServer(yoga); the wrapper only tells the linter the promise is Yoga's to handle.
  const server = createServer((req, res) => (req.url === '/bytes' ? serveBytes(req, res) : void yoga(req, res)));
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
