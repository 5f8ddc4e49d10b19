import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';

/**
 * A TCP proxy between the app and a store, so a test can cut the store off (and bring it back)
 * without touching the machine's shared PostgreSQL or Redis. Every connection made to `port` is
 * forwarded to the target, byte for byte.
 */
export interface TcpProxy {
  host: string;
  port: number;
  /** Closes every open connection (both ends) and refuses new ones (nothing listens) until restore(). */
  cut(): void;
  /** Holds every chunk this many milliseconds in each direction, in order, until restore(). */
  delay(ms: number): void;
  /**
   * As a store that hangs rather than refuses: connections stay open and new ones are accepted, but
   * nothing is forwarded either way until resume(), which delivers everything held, in order.
   */
  pause(): void;
  resume(): void;
  /** Listens again on the same port and forwards, without delay. */
  restore(): Promise<void>;
  /**
   * Forwards the next chunk from the app that `matches`, then cuts (as cut()) before any answer
   * comes back: the store got the request, the app never gets its reply. Answers when it happened.
   */
  cutAfter(matches: (chunk: Buffer) => boolean): Promise<void>;
  /** Connections open now. */
  open(): number;
  close(): Promise<void>;
}

/** Listens on a free port of 127.0.0.1 and forwards to `target`. */
export async function startTcpProxy(target: { host?: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let refusing = false;
  let delayMs = 0;
  let paused: Promise<void> | null = null;
  let unpause = () => {};
  let trap: { matches: (chunk: Buffer) => boolean; sprung: () => void } | undefined;

  const kill = (pair: { client: Socket; upstream: Socket }) => {
    pairs.delete(pair);
    pair.client.destroy();
    pair.upstream.destroy();
  };
  // As a store that goes down: open connections are closed, new ones refused (nothing listens).
  // Not reset (RST): postgres.js 3.4 then now and then leaves a query waiting for a connection
  // until the store is back, which a store going down does not cause.
  const cut = () => {
    refusing = true;
    if (server.listening) server.close();
    for (const pair of [...pairs]) kill(pair);
  };

  /** Writes `chunk` to `to`, after the current delay, never ahead of an earlier chunk. */
  function forwarder(to: Socket) {
    let last = Promise.resolve();
    return (chunk: Buffer) => {
      const wait = delayMs;
      if (paused) {
        const held = paused;
        last = last.then(() => held).then(() => void (to.destroyed || to.write(chunk)));
        return;
      }
      if (wait === 0) {
        last = last.then(() => void (to.destroyed || to.write(chunk)));
        return;
      }
      last = last.then(() => new Promise((resolve) => setTimeout(resolve, wait))).then(() => void (to.destroyed || to.write(chunk)));
    };
  }

  const server: Server = createServer((client) => {
    if (refusing) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect({ host: target.host ?? '127.0.0.1', port: target.port });
    const pair = { client, upstream };
    pairs.add(pair);
    const toUpstream = forwarder(upstream);
    const toClient = forwarder(client);
    client.on('data', (chunk: Buffer) => {
      if (trap?.matches(chunk)) {
        const { sprung } = trap;
        trap = undefined;
        // Through to the store at once; the connection dies before any reply is forwarded.
        upstream.write(chunk, () => {
          setTimeout(() => {
            cut();
            sprung();
          }, 20);
        });
        client.pause();
        upstream.pause();
        return;
      }
      toUpstream(chunk);
    });
    upstream.on('data', toClient);
    const end = () => {
      if (pairs.delete(pair)) {
        client.destroy();
        upstream.destroy();
      }
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    host: '127.0.0.1',
    port,
    cut,
    delay(ms) {
      delayMs = ms;
    },
    pause() {
      if (paused) return;
      paused = new Promise<void>((resolve) => (unpause = resolve));
    },
    resume() {
      paused = null;
      unpause();
    },
    async restore() {
      delayMs = 0;
      paused = null;
      unpause();
      if (!refusing) return;
      refusing = false;
      if (!server.listening) await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
    cutAfter(matches) {
      return new Promise<void>((sprung) => {
        trap = { matches, sprung };
      });
    },
    open: () => pairs.size,
    async close() {
      refusing = true;
      for (const pair of [...pairs]) kill(pair);
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
