import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Refuses a request body over `maxBytes` before anything reads it, from its Content-Length alone:
 * Node's parser never delivers more body than Content-Length declares, so the declared length is
 * a hard bound and no byte needs counting. A body without a declared length (chunked) is refused
 * with 411, which JSON clients never send. Answers true when it answered the request.
 *
 * Why not Yoga's maxRequestBodySize: it pipes every body through a size-limiting stream, which
 * costs a measurable share of each request's CPU on Node 20.
 */
export function refuseOversizedBody(req: IncomingMessage, res: ServerResponse, maxBytes: number): boolean {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return false;
  const declared = req.headers['content-length'];
  if (declared === undefined) {
    if (req.headers['transfer-encoding'] === undefined) return false; // no body at all
    return refuse(res, 411, 'A request body needs a Content-Length.');
  }
  const length = Number(declared);
  if (!Number.isSafeInteger(length) || length < 0) return refuse(res, 400, 'Content-Length is not a number of bytes.');
  if (length > maxBytes) return refuse(res, 413, `Request bodies are limited to ${maxBytes} bytes.`);
  return false;
}

/** What every request body being read or answered takes of the process's memory, bounded (RequestLimits.maxBodyBytesInFlight). */
export interface BodyBudget {
  /**
   * Takes the request's declared body length from the budget until its answer is done (or its
   * connection closes), or answers it 503 when the budget cannot hold it now. Answers true when it
   * answered the request. O(1).
   */
  refuseOverBudget(req: IncomingMessage, res: ServerResponse): boolean;
  /** Bytes taken now. */
  inFlight(): number;
}

export function createBodyBudget(maxBytes: number): BodyBudget {
  let taken = 0;
  return {
    refuseOverBudget(req, res) {
      // Called after refuseOversizedBody, which checked the declared length of every body the service
      // reads; a GET's is never read (its query is in the URL), so it is left out whatever it declares.
      if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return false;
      const length = Number(req.headers['content-length'] ?? 0);
      if (!Number.isSafeInteger(length) || length <= 0) return false;
      if (taken + length > maxBytes) {
        res.setHeader('retry-after', '1');
        return refuse(res, 503, 'The service is reading as many request bodies as it holds at once; retry in a second.', 'UNAVAILABLE');
      }
      taken += length;
      // 'close' comes once for every response: answered, or its connection gone first.
      res.once('close', () => (taken -= length));
      return false;
    },
    inFlight: () => taken,
  };
}

function refuse(res: ServerResponse, status: number, message: string, code = 'BAD_USER_INPUT'): true {
  const body = JSON.stringify({ errors: [{ message, extensions: { code } }] });
  res.writeHead(status, { 'content-type': 'application/json', connection: 'close' }).end(body);
  return true;
}
