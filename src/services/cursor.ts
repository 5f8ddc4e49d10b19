import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Member } from '../ranking/index.js';
import { badInput } from '../errors.js';

/**
 * Opaque page cursors. A cursor names a position by the entry's key (its packed score and player
 * id), never by an offset, and is bound to one list (its scope, e.g. the board bucket). It is signed
 * so that a forged or edited cursor is refused rather than followed.
 *
 * Format: base64url(JSON [scope, packed, playerId]) "." base64url(HMAC-SHA256(secret, payload))[0..22]
 */
export interface CursorCodec {
  /** The cursor of a position in the list `scope`. */
  encode(scope: string, position: Member): string;
  /** The position a cursor names in `scope`; BAD_USER_INPUT when it is malformed, forged, or of another list. */
  decode(scope: string, cursor: string): Member;
}

const MAC_CHARS = 22; // 128 bits of the HMAC
/** What a signature this codec made looks like: base64url, MAC_CHARS of it (so as many bytes as characters). */
const SIGNATURE = new RegExp(`^[A-Za-z0-9_-]{${MAC_CHARS}}$`);

/**
 * A codec signing with `secret`, or with what `secret()` answers when it is used (a secret the
 * process loads at start, see buildApp's start() in src/app.ts).
 */
export function createCursorCodec(secret: string | (() => string)): CursorCodec {
  const key = typeof secret === 'string' ? () => secret : secret;
  const mac = (payload: string) => createHmac('sha256', key()).update(payload).digest('base64url').slice(0, MAC_CHARS);
  const refuse = () => badInput('The cursor is not one this service issued for this list; start again without it (no `after` or `before`).');
  return {
    encode(scope, { packed, playerId }) {
      const payload = Buffer.from(JSON.stringify([scope, packed, playerId])).toString('base64url');
      return `${payload}.${mac(payload)}`;
    },
    decode(scope, cursor) {
      const [payload, signature, ...rest] = cursor.split('.');
      if (!payload || !signature || rest.length > 0 || !SIGNATURE.test(signature)) throw refuse();
      if (!timingSafeEqual(Buffer.from(mac(payload)), Buffer.from(signature))) throw refuse();
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw refuse();
      }
      if (!Array.isArray(parsed) || parsed.length !== 3) throw refuse();
      const [cursorScope, packed, playerId] = parsed as unknown[];
      if (cursorScope !== scope || typeof packed !== 'number' || !Number.isSafeInteger(packed) || typeof playerId !== 'string') throw refuse();
      return { packed, playerId };
    },
  };
}

/**
 * The PageInfo of a page of a list read forwards only (first/after): its end cursors from its
 * edges; rows come before it when it starts after a cursor (Relay lets a forward-only list answer
 * so, rather than look back).
 */
export function forwardPageInfo(edges: readonly { cursor: string }[], hasNextPage: boolean, after: string | null | undefined) {
  return pageInfoOf(edges, hasNextPage, after != null);
}

/** A page's PageInfo: its end cursors from its edges, and whether rows come after its last edge and before its first. */
export function pageInfoOf(edges: readonly { cursor: string }[], hasNextPage: boolean, hasPreviousPage: boolean) {
  return { hasNextPage, endCursor: edges.at(-1)?.cursor ?? null, hasPreviousPage, startCursor: edges[0]?.cursor ?? null };
}
