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
  /** How long a client may take to send a whole HTTP request (headers and body); then 408 and the connection is closed. Default 10,000 ms. */
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
};

/** The limits given, each left out at its default. */
export function requestLimitsOf(given: RequestLimits = {}): Required<RequestLimits> {
  const defined = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
  return { ...DEFAULT_REQUEST_LIMITS, ...defined };
}
