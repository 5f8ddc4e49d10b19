import { readFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';

/** Linux's default first ephemeral port, when /proc does not tell. */
const DEFAULT_EPHEMERAL_LOW = 32_768;

/** The first port of the kernel's ephemeral range: where it picks the local port of every outgoing connection. */
async function ephemeralLow(): Promise<number> {
  try {
    const [low] = (await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')).trim().split(/\s+/).map(Number);
    return low || DEFAULT_EPHEMERAL_LOW;
  } catch {
    return DEFAULT_EPHEMERAL_LOW;
  }
}

/** Whether a port of 127.0.0.1 can be bound now. */
function bindable(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A port of 127.0.0.1 nothing listens on, for a server the test starts later (a redis-server, the
 * service) or a store that must be unreachable. Drawn at random below the ephemeral range. Why not
 * `listen(0)`: that port is ephemeral, and between its release and the server's bind any of the
 * many connections the parallel test files open may take it as its local port, and the server
 * then fails to start ("exited (1)"). Below the range only another listener can take it.
 */
export async function freePort(): Promise<number> {
  const low = await ephemeralLow();
  const floor = Math.max(1_024, Math.min(10_000, low - 1_000));
  // No room below the range (a kernel set to start it low): a port the kernel picks, as before.
  if (low - floor < 1_000) return anyFreePort();
  for (;;) {
    const port = floor + Math.floor(Math.random() * (low - floor));
    if (await bindable(port)) return port;
  }
}

/** A port the kernel picks: bound, then released. */
async function anyFreePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
