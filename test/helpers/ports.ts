import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';

/** Linux's default ephemeral range, when /proc does not tell. */
const DEFAULT_EPHEMERAL = { low: 32_768, high: 60_999 };

/** The kernel's ephemeral port range: where it picks the local port of every outgoing connection. */
async function ephemeralRange(): Promise<{ low: number; high: number }> {
  try {
    const [low, high] = (await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')).trim().split(/\s+/).map(Number);
    return low && high ? { low, high } : DEFAULT_EPHEMERAL;
  } catch {
    return DEFAULT_EPHEMERAL;
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
  const { low } = await ephemeralRange();
  const floor = Math.min(10_000, low - 1_000);
  for (;;) {
    const port = floor + Math.floor(Math.random() * (low - floor));
    if (await bindable(port)) return port;
  }
}
