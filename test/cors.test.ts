import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * CORS_ORIGINS: by default any page may call the API, never with credentials (keys travel in the
 * Authorization header); with a list, only those origins. The same on the fast path (POST JSON),
 * through Yoga (GET, other content types) and for preflights.
 */

const QUERY = '{ top(board: "global") { size } }';
const cors = (response: Response) => ({
  origin: response.headers.get('access-control-allow-origin'),
  credentials: response.headers.get('access-control-allow-credentials'),
});

/** The same query three ways: the fast path, Yoga's POST (another content type), and GET. */
function threeWays(t: TestApp, origin: string) {
  return Promise.all([
    fetch(`${t.url}/graphql`, { method: 'POST', headers: { origin, 'content-type': 'application/json' }, body: JSON.stringify({ query: QUERY }) }),
    fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/graphql+json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: QUERY }),
    }),
    fetch(`${t.url}/graphql?query=${encodeURIComponent(QUERY)}`, { headers: { origin } }),
  ]);
}

const preflight = (t: TestApp, origin: string) =>
  fetch(`${t.url}/graphql`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
  });

describe('CORS by default', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });

  it('lets any origin read, without credentials, on every path', async () => {
    for (const response of await threeWays(t, 'https://evil.example')) {
      expect(response.status).toBeLessThan(300);
      expect(cors(response)).toEqual({ origin: '*', credentials: null });
    }
  });

  it('answers a preflight with the methods and the headers a page asked for, without credentials', async () => {
    const answer = await preflight(t, 'https://game.example');
    expect(answer.status).toBe(204);
    expect(cors(answer)).toEqual({ origin: '*', credentials: null });
    expect(answer.headers.get('access-control-allow-methods')).toBe('GET, POST, OPTIONS');
    expect(answer.headers.get('access-control-allow-headers')).toBe('authorization, content-type');
  });
});

describe('CORS_ORIGINS with a list', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ http: { corsOrigins: loadConfig({ CORS_ORIGINS: 'https://game.example, http://localhost:5173' }).CORS_ORIGINS } });
  });

  it('names a listed origin, and gives an unlisted one no CORS headers, on every path', async () => {
    for (const response of await threeWays(t, 'http://localhost:5173')) {
      expect(cors(response)).toEqual({ origin: 'http://localhost:5173', credentials: null });
      expect(response.headers.get('vary')).toMatch(/Origin/);
    }
    for (const response of await threeWays(t, 'https://evil.example')) expect(cors(response)).toEqual({ origin: null, credentials: null });
    expect(cors(await preflight(t, 'https://game.example'))).toEqual({ origin: 'https://game.example', credentials: null });
    expect(cors(await preflight(t, 'https://evil.example'))).toEqual({ origin: null, credentials: null });
  });

  it('is parsed from the environment, refusing anything but origins', () => {
    expect(loadConfig({}).CORS_ORIGINS).toBe('*');
    expect(loadConfig({ CORS_ORIGINS: '*' }).CORS_ORIGINS).toBe('*');
    for (const bad of ['game.example', 'https://game.example/', 'https://game.example/path', 'ftp://game.example']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad }), bad).toThrow(/CORS_ORIGINS/);
    }
  });
});
