/* global document, fetch, location, URL, setTimeout, clearInterval */
/**
 * The session: the admin key, held in this module's closure and nowhere else (never a cookie,
 * localStorage or sessionStorage, never in the URL), and the HTTP calls and the socket that carry it.
 */
import { createClient } from './graphql-ws/client.js';

/** The signed-in session: the admin key, the socket opened with it, the health poll. Null when signed out. */
let session = null;

/** Told when the signed-in key stops being accepted (console.js signs out). */
let keyRejected = () => {};

/** A GraphQL answer with errors: the first error's message, and its extensions.code. */
export class GraphQLFailure extends Error {
  constructor(errors) {
    super(errors.map((error) => error.message).join('; '));
    this.code = errors[0]?.extensions?.code ?? null;
  }
}

/** Runs one operation over HTTP POST with the session's key. Signs out when the key stops working. */
export async function gql(query, variables = {}, key = session?.key) {
  const response = await fetch(new URL('/graphql', location.href), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query, variables }),
    credentials: 'omit',
    cache: 'no-store',
  });
  const body = await response.json().catch(() => ({ errors: [{ message: `HTTP ${response.status}` }] }));
  if (body.errors?.length) {
    const failure = new GraphQLFailure(body.errors);
    if (session && key === session.key && failure.code === 'UNAUTHENTICATED') keyRejected('The admin key is no longer accepted (revoked?). Sign in again.');
    throw failure;
  }
  return body.data;
}

/**
 * Downloads a file the service answers at `path` (an export) with the session's key: a link cannot
 * carry the key's header, and the key never goes in a URL, so it is fetched here and handed to the
 * browser as a blob, saved under the name the answer gives (Content-Disposition) or `fallbackName`.
 * The whole file is held in the tab until it is saved; a bucket too big for that is exported with
 * the CLI. Throws, saying what the service answered, when it is refused; signs out on a 401.
 */
export async function download(path, fallbackName) {
  const key = session?.key;
  const response = await fetch(new URL(path, location.href), {
    headers: { authorization: `Bearer ${key}` },
    credentials: 'omit',
    cache: 'no-store',
  });
  if (!response.ok) {
    // The route says why as JSON ({ error: { message } }); anything else is shown as it came.
    const body = await response.text().catch(() => '');
    let said = body.trim().slice(0, 300);
    try {
      said = JSON.parse(body).error?.message ?? said;
    } catch {
      // Not JSON: the text as it came.
    }
    if (session && key === session.key && response.status === 401) keyRejected('The admin key is no longer accepted (revoked?). Sign in again.');
    throw new Error(`Export refused (HTTP ${response.status})${said ? `: ${said}` : ''}`);
  }
  const blob = await response.blob();
  const named = /filename="?([^";]+)"?/i.exec(response.headers.get('content-disposition') ?? '')?.[1];
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = named ?? fallbackName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has taken the file once the click's download started; the blob is let go a little later.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return { name: link.download, bytes: blob.size };
}

/** The socket for topChanged, opened on first use, carrying the key in its connection parameters. */
export function socket() {
  if (!session.socket) {
    const url = new URL('/graphql', location.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const key = session.key;
    session.socket = createClient({
      url: url.href,
      connectionParams: () => ({ authorization: `Bearer ${key}` }),
      retryAttempts: Infinity,
      shouldRetry: () => true,
      retryWait: (retries) => new Promise((resolve) => setTimeout(resolve, Math.min(10_000, 500 * 2 ** retries))),
      keepAlive: 10_000,
    });
  }
  return session.socket;
}

/** Whether someone is signed in. */
export const signedIn = () => session !== null;

/** Signs in with `key` (checked already); `healthTimer` is stopped at sign-out. */
export function beginSession(key, healthTimer) {
  session = { key, socket: null, healthTimer };
}

/** Ends the session: its socket closed, its timer stopped, its key forgotten. */
export function endSession() {
  if (session?.socket) void session.socket.dispose();
  clearInterval(session?.healthTimer);
  session = null;
}

/** Sets who is told when the signed-in key stops being accepted. */
export function whenKeyRejected(handler) {
  keyRejected = handler;
}
