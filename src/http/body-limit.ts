import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClientAddressOf } from './client-address.js';

export interface BodyLimitsOptions {
  /** The largest body one request may have, in bytes (MAX_BODY_BYTES). */
  maxBytes: number;
  /** The bytes of bodies every request not answered yet may declare together (RequestLimits.maxBodyBytesInFlight). */
  maxBytesInFlight: number;
  /** The share of them one client's requests may declare together (RequestLimits.maxBodyBytesInFlightPerClient). */
  maxBytesInFlightPerClient: number;
  /** Who a request is from (see http/client-address.ts). */
  clientOf: ClientAddressOf;
}

/**
 * The bounds on request bodies, judged from Content-Length alone before anything reads a byte:
 * Node's parser never delivers more body than Content-Length declares, so the declared length is
 * a hard bound and no byte needs counting.
 *
 * - A body over `maxBytes` is refused 413; one without a declared length (chunked) 411, which JSON
 *   clients never send; a length that is not a number of bytes 400.
 * - The bodies of the requests not answered yet may declare `maxBytesInFlight` together: a request
 *   past it is answered 503 (UNAVAILABLE, Retry-After: 1), so many large bodies sent at once (each
 *   within `maxBytes`) cannot take the process's memory.
 * - One client's may declare `maxBytesInFlightPerClient` of it: its request past that is answered
 *   429 (RATE_LIMITED, Retry-After: 1), so one client declaring large bodies and sending none
 *   (each held until the request timeout) cannot take the whole budget from the others.
 *
 * A request's length is taken until its response closes (answered, or its connection gone first).
 * A GET's, HEAD's or OPTIONS' body is never read (a query is in the URL), so it is left out
 * whatever it declares. Answers true when it answered the request. O(1).
 *
 * Why not Yoga's maxRequestBodySize: it pipes every body through a size-limiting stream, which
 * costs a measurable share of each request's CPU on Node 20.
 */
export function createBodyLimits({
  maxBytes,
  maxBytesInFlight,
  maxBytesInFlightPerClient,
  clientOf,
}: BodyLimitsOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  let taken = 0;
  // Only clients with a body in flight have an entry, so it holds no more than the requests do.
  const takenBy = new Map<string, number>();
  return (req, res) => {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return false;
    const declared = req.headers['content-length'];
    if (declared === undefined) {
      if (req.headers['transfer-encoding'] === undefined) return false; // no body at all
      return refuse(res, 411, 'A request body needs a Content-Length.');
    }
    const length = Number(declared);
    if (!Number.isSafeInteger(length) || length < 0) return refuse(res, 400, 'Content-Length is not a number of bytes.');
    if (length > maxBytes) return refuse(res, 413, `Request bodies are limited to ${maxBytes} bytes.`);
    if (length === 0) return false;
    const client = clientOf(req);
    const clientTaken = takenBy.get(client) ?? 0;
    if (clientTaken + length > maxBytesInFlightPerClient) {
      res.setHeader('retry-after', '1');
      return refuse(res, 429, 'This client is sending as many request bodies at once as one client may; retry in a second.', 'RATE_LIMITED');
    }
    if (taken + length > maxBytesInFlight) {
      res.setHeader('retry-after', '1');
      return refuse(res, 503, 'The service is reading as many request bodies as it holds at once; retry in a second.', 'UNAVAILABLE');
    }
    taken += length;
    takenBy.set(client, clientTaken + length);
    res.once('close', () => {
      taken -= length;
      const left = takenBy.get(client)! - length;
      if (left === 0) takenBy.delete(client);
      else takenBy.set(client, left);
    });
    return false;
  };
}

function refuse(res: ServerResponse, status: number, message: string, code = 'BAD_USER_INPUT'): true {
  const body = JSON.stringify({ errors: [{ message, extensions: { code } }] });
  res.writeHead(status, { 'content-type': 'application/json', connection: 'close' }).end(body);
  return true;
}
