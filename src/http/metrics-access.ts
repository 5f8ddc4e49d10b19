import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Who may read `/metrics`: anyone when no token is set, else only a request carrying
 * `Authorization: Bearer <token>` (METRICS_TOKEN), since the metrics name every live board and
 * bucket. Compared as digests, in flat time. Answers false after writing a 401 for anyone else.
 */
export function createMetricsAccess(token: string | undefined): (req: IncomingMessage, res: ServerResponse) => boolean {
  if (!token) return () => true;
  const expected = digest(`Bearer ${token}`);
  return (req, res) => {
    const given = req.headers.authorization;
    if (given !== undefined && timingSafeEqual(digest(given), expected)) return true;
    res
      .writeHead(401, { 'content-type': 'text/plain', 'cache-control': 'no-store', 'www-authenticate': 'Bearer realm="metrics"' })
      .end('metrics need Authorization: Bearer <METRICS_TOKEN>\n');
    return false;
  };
}
