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
  /**
   * As a store that hangs rather than refuses: connections stay open and new ones are accepted, but
   * nothing is forwarded either way until resume(), which delivers everything held, in order.
   */
  pause(): void;
  resume(): void;
  /** Listens again on the same port and forwards, nothing held. */
  restore(): Promise<void>;
  /**
   * Forwards the next chunk from the app that `matches`, then cuts (as cut()) when the store's
   * answer comes, before it is forwarded: the store handled the request, the app never gets its
   * reply. Answers when it happened.
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

  /** Writes `chunk` to `to` (once resumed, while paused), never ahead of an earlier chunk. */
  function forwarder(to: Socket) {
    let last = Promise.resolve();
    return (chunk: Buffer) => {
      const held = paused;
      last = (held ? last.then(() => held) : last).then(() => void (to.destroyed || to.write(chunk)));
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
    let sprung: (() => void) | undefined;
    client.on('data', (chunk: Buffer) => {
      if (trap?.matches(chunk)) {
        sprung = trap.sprung;
        trap = undefined;
        // Through to the store at once; nothing more from the app, and the store's answer cuts the connection.
        upstream.write(chunk);
        client.pause();
        return;
      }
      toUpstream(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!sprung) return toClient(chunk);
      // The store answered the trapped request: it was handled, and the app never hears of it.
      cut();
      sprung();
    });
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
    pause() {
      if (paused) return;
      paused = new Promise<void>((resolve) => (unpause = resolve));
    },
    resume() {
      paused = null;
      unpause();
    },
    async restore() {
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
