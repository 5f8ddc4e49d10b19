/**
 * What one request, one operation and one connection may hold: the bounds that keep one client
 * (a heavy query, thousands of subscriptions, a socket that never reads, a body that trickles)
 * from slowing the others or pinning the process's memory. Each is a setting (src/config.ts).
 */
export interface RequestLimits {
  /** Bytes one GraphQL document (the query text) may have; more is refused before it is parsed. Default 100,000. */
  maxDocumentBytes?: number;
  /** The most rows one query or subscription may return (see http/operation-cost.ts). Default 5,000. */
  maxOperationRows?: number;
  /** topChanged subscriptions one client address may hold open in this process (WebSocket and server-sent events together). Default 1,000. */
  subscriptionsPerClient?: number;
  /** Subscriptions one WebSocket may hold open. Default 100. */
  subscriptionsPerSocket?: number;
  /** Queries and mutations one WebSocket may have running or waiting to be sent at once. Default 32. */
  operationsPerSocket?: number;
  /**
   * Bytes of answers a WebSocket may leave unsent (its client not reading them) before it is
   * closed. Past 64 KiB the socket's messages are no longer read until it drains. Default 4 MiB.
   */
  maxSocketBufferedBytes?: number;
  /**
   * How long a client may take to send a whole HTTP request (headers and body), and a new
   * connection its first request's headers; then 408 and the connection is closed. Default 10,000 ms.
   */
  requestTimeoutMs?: number;
  /** Connections (HTTP and WebSocket) the process holds at once; more are closed as they come. Default 10,000. */
  maxConnections?: number;
  /**
   * Bytes of HTTP request bodies the process holds at once: the declared Content-Length of every
   * request not answered yet. A request whose body would pass it is answered 503 (UNAVAILABLE,
   * Retry-After: 1) before a byte of it is read, so many large bodies sent at once (each within
   * MAX_BODY_BYTES) cannot take the process's memory. At least MAX_BODY_BYTES. Default 256 MiB.
   */
  maxBodyBytesInFlight?: number;
  /**
   * Bytes of maxBodyBytesInFlight the requests of one client address (see http/client-address.ts)
   * may hold at once; its request past them is answered 429 (RATE_LIMITED, Retry-After: 1) while
   * other clients' bodies are still read. Ten largest bodies (MAX_BODY_BYTES) at once is more than
   * any real client sends, and it takes eight addresses to fill the default maxBodyBytesInFlight.
   * At least MAX_BODY_BYTES. Default 32 MiB.
   */
  maxBodyBytesInFlightPerClient?: number;
  /**
   * Connections (HTTP and WebSocket) one peer address may hold open at once; more are closed as
   * they come. Counted by the socket's peer, as no header has arrived when a connection opens:
   * behind a proxy that peer is the proxy, so the proxies of TRUSTED_PROXIES are not counted (the
   * proxy is the one to cap its clients' connections). Sized for a carrier-grade NAT: a few hundred
   * players behind one address, each with a WebSocket and a browser's few HTTP connections, fit,
   * and one address takes at most a tenth of the default maxConnections. Default 1,000.
   */
  maxConnectionsPerClient?: number;
  /**
   * How long a connection may stay open with no request in flight after its last answer (Node's
   * server.keepAliveTimeout, announced to clients in `Keep-Alive: timeout=`); bytes that start no
   * request (blank lines) do not keep it open. Before its first request, a connection has
   * requestTimeoutMs. Behind a load balancer that reuses idle connections for longer (AWS ALB: 60 s),
   * set it above the balancer's idle timeout. Default 5,000 ms (Node's).
   */
  keepAliveTimeoutMs?: number;
}

/**
 * The largest HTTP request body, and WebSocket message, accepted (413, or the socket closed with
 * 1009, past it). It holds the largest legitimate request with room: submitScores of 1,000
 * results with every id at its longest and 1 KiB of metadata each, about 2.1 MB
 * (test/document-headroom.test.ts measures it).
 */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export const DEFAULT_REQUEST_LIMITS: Required<RequestLimits> = {
  maxDocumentBytes: 100_000,
  maxOperationRows: 5_000,
  subscriptionsPerClient: 1_000,
  subscriptionsPerSocket: 100,
  operationsPerSocket: 32,
  maxSocketBufferedBytes: 4 * 1024 * 1024,
  requestTimeoutMs: 10_000,
  maxConnections: 10_000,
  maxBodyBytesInFlight: 256 * 1024 * 1024,
  maxBodyBytesInFlightPerClient: 32 * 1024 * 1024,
  maxConnectionsPerClient: 1_000,
  keepAliveTimeoutMs: 5_000,
};

/** The limits given, each left out at its default. */
export function requestLimitsOf(given: RequestLimits = {}): Required<RequestLimits> {
  const defined = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
  return { ...DEFAULT_REQUEST_LIMITS, ...defined };
}
