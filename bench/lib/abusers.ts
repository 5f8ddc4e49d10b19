/**
 * Abusive clients for the abuse scenarios: one that POSTs GraphQL and tells what the service did
 * with each request (answered it, or refused it and how), and one that holds raw TCP connections
 * open (sending nothing, or only a request's headers), re-opening those the service closes. Both
 * only ever connect to the service under test on loopback.
 */
import { connect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { GRAPHQL_HEADERS, type HttpClientOptions, graphqlPool } from './clients.js';

/** A request the service did not answer with data: `kind` names how (RATE_LIMITED, HTTP 503…), for counting. */
export class Refusal extends Error {
  constructor(
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }
}

/** Answers longer than this are answered reads (a refusal is a few hundred bytes); shorter ones are parsed to tell. */
const REFUSAL_MAX_BYTES = 256 * 1024;

type Answer = { data?: unknown; errors?: { extensions?: { code?: unknown } }[] };

/** What one GraphQL answer (or batch of answers) says: null when some operation got data, else the refusal. */
function refusalIn(status: number, text: string): Refusal | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return new Refusal(`HTTP ${status}`, `HTTP ${status}: ${text.slice(0, 300)}`);
  }
  const answers = (Array.isArray(parsed) ? parsed : [parsed]) as Answer[];
  if (status === 200 && answers.some((answer) => answer.data !== null && answer.data !== undefined)) return null;
  const code = answers.flatMap((answer) => answer.errors ?? []).find((error) => typeof error.extensions?.code === 'string')?.extensions?.code;
  return new Refusal(typeof code === 'string' ? code : `HTTP ${status} without a code`, `HTTP ${status}: ${text.slice(0, 300)}`);
}

export interface AbusiveHttp {
  /**
   * POSTs `body` (one operation or a JSON batch). Resolves when the service answered with data (a
   * partial answer, with errors beside the data, counts as answered); throws a {@link Refusal}
   * otherwise, or the connection's error.
   */
  post(body: string): Promise<void>;
  /** Bytes of answers received so far. */
  readonly bytesReceived: number;
  close(): Promise<void>;
}

/** An abusive HTTP GraphQL client of `connections` connections to `url`, reading answers of any size without keeping them. */
export function abusiveHttp(url: string, connections: number, options: HttpClientOptions): AbusiveHttp {
  const target = new URL(url);
  const pool = graphqlPool(target.origin, connections, options);
  let bytesReceived = 0;
  return {
    async post(body) {
      const response = await pool.request({ path: target.pathname, method: 'POST', headers: GRAPHQL_HEADERS, body });
      const kept: Buffer[] = [];
      let length = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        length += chunk.length;
        bytesReceived += chunk.length;
        if (length <= REFUSAL_MAX_BYTES) kept.push(chunk);
      }
      if (response.statusCode === 200 && length > REFUSAL_MAX_BYTES) return;
      const refusal = refusalIn(response.statusCode, Buffer.concat(kept).toString('utf8'));
      if (refusal) throw refusal;
    },
    get bytesReceived() {
      return bytesReceived;
    },
    close: () => pool.close(),
  };
}

/** What a {@link holdConnections} has seen, counted from its start. */
export interface HeldCounts {
  /** Connections established. */
  opened: number;
  /** Established connections the service closed. */
  closedByService: number;
  /** Connection attempts that failed, by error code. */
  failed: Record<string, number>;
  /** Answers the service wrote on held connections, by HTTP status (e.g. 503, 408). */
  answers: Record<string, number>;
}

export interface HeldConnections {
  /** Established and not yet closed. */
  readonly open: number;
  /** The most open at once. */
  readonly peak: number;
  /** A copy of the counts so far. */
  counts(): HeldCounts;
  /** Resolves once `count` are open, or when no more have opened for two seconds (the service refuses them), or after `maxSeconds`. */
  ramped(maxSeconds?: number): Promise<void>;
  /** Stops re-opening and closes every connection. */
  close(): void;
}

export interface HoldOptions {
  /** The service's port, on 127.0.0.1. */
  port: number;
  localAddress: string;
  /** Connections to keep open. */
  count: number;
  /** At most this many connection attempts a second, so re-opening what the service closes is bounded. */
  opensPerSecond: number;
  /** Written once on each connection when it opens (e.g. a request's headers); default nothing. */
  greeting?: string;
}

/** The counts between two {@link HeldConnections.counts} taken in turn (e.g. at a measured window's ends). */
export function countsBetween(before: HeldCounts, after: HeldCounts): HeldCounts {
  const minus = (a: Record<string, number>, b: Record<string, number>) =>
    Object.fromEntries(Object.entries(a).flatMap(([key, n]) => (n - (b[key] ?? 0) > 0 ? [[key, n - (b[key] ?? 0)]] : [])));
  return {
    opened: after.opened - before.opened,
    closedByService: after.closedByService - before.closedByService,
    failed: minus(after.failed, before.failed),
    answers: minus(after.answers, before.answers),
  };
}

/** Keeps `count` connections open to 127.0.0.1:`port`, re-opening each one the service closes (at most `opensPerSecond`). */
export function holdConnections(options: HoldOptions): HeldConnections {
  const sockets = new Set<Socket>();
  const counts: HeldCounts = { opened: 0, closedByService: 0, failed: {}, answers: {} };
  let connecting = 0;
  let open = 0;
  let peak = 0;
  let stopped = false;
  let allowance = 0;
  let last = performance.now();

  function openOne(): void {
    connecting++;
    let established = false;
    const socket = connect({ host: '127.0.0.1', port: options.port, localAddress: options.localAddress });
    sockets.add(socket);
    socket.once('connect', () => {
      connecting--;
      established = true;
      counts.opened++;
      open++;
      peak = Math.max(peak, open);
      if (options.greeting) socket.write(options.greeting);
    });
    socket.once('data', (chunk: Buffer) => {
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(chunk.toString('latin1', 0, 16))?.[1] ?? 'other bytes';
      counts.answers[status] = (counts.answers[status] ?? 0) + 1;
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (established) return;
      const code = error.code ?? 'error';
      counts.failed[code] = (counts.failed[code] ?? 0) + 1;
    });
    socket.once('close', () => {
      sockets.delete(socket);
      if (!established) connecting--;
      else {
        open--;
        if (!stopped) counts.closedByService++;
      }
    });
  }

  const timer = setInterval(() => {
    const now = performance.now();
    // A token bucket holding at most a tenth of a second of opens.
    allowance = Math.min(options.opensPerSecond / 10, allowance + ((now - last) / 1000) * options.opensPerSecond);
    last = now;
    while (!stopped && allowance >= 1 && open + connecting < options.count) {
      allowance--;
      openOne();
    }
  }, 10);

  return {
    get open() {
      return open;
    },
    get peak() {
      return peak;
    },
    counts: () => ({ ...counts, failed: { ...counts.failed }, answers: { ...counts.answers } }),
    async ramped(maxSeconds = 60) {
      const deadline = performance.now() + maxSeconds * 1000;
      let best = 0;
      let bestAt = performance.now();
      while (open < options.count && performance.now() < deadline && performance.now() - bestAt < 2_000) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        if (open > best) {
          best = open;
          bestAt = performance.now();
        }
      }
    },
    close() {
      stopped = true;
      clearInterval(timer);
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** This process's limit on open files (sockets count), from /proc/self/limits; undefined where that cannot be read. */
export function openFilesLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    return line === 'unlimited' ? Infinity : line === undefined ? undefined : Number(line);
  } catch {
    return undefined;
  }
}
