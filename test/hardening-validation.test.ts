import { readFileSync } from 'node:fs';
import { type ClientOptions, createClient } from 'graphql-ws';
import { ValidationContext, getIntrospectionQuery } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { useDocumentLimits } from '../src/http/document-limits.js';
import { useIntrospection } from '../src/http/graphiql.js';
import { schema } from '../src/schema/index.js';
import { GENERATED_DOCUMENTS } from './helpers/generated-documents.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * Issue 53, item 7: validation CPU is budgeted. A document is refused for its shape before
 * graphql-js validates it (its OverlappingFieldsCanBeMergedRule compares copies of a field in
 * pairs: 490 copies of `boards { id }` cost hundreds of milliseconds); a refused document sent again
 * is answered from memory; and each client's validation time is charged to it, so a flood of new
 * documents from one address is refused RATE_LIMITED while other addresses are served.
 *
 * Whether graphql-js validated a document is seen from graphql-js itself: every validation makes a
 * ValidationContext, and its rules ask it for each selection set's parent type.
 */

interface Answer {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string; limit?: string; maximum?: number; found?: number } }[] | undefined;
}

/** The ValidationContexts graphql-js made while `run` ran: one per document it validated. */
async function validationsDuring<T>(run: () => Promise<T>): Promise<{ result: T; validations: number }> {
  const spy = vi.spyOn(ValidationContext.prototype, 'getParentType');
  try {
    const result = await run();
    return { result, validations: new Set(spy.mock.contexts).size };
  } finally {
    spy.mockRestore();
  }
}

let sent = 0;
/** A text no cache has seen: the same document, with a comment of its own. */
const fresh = (document: string) => `# ${process.pid}-${Date.now()}-${(sent += 1)}\n${document}`;

async function post(
  t: TestApp,
  query: string,
  { accept = 'application/json', client, operationName }: { accept?: string; client?: string; operationName?: string | undefined } = {},
): Promise<Answer> {
  const response = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, ...(client ? { 'x-forwarded-for': client } : {}) },
    body: JSON.stringify({ query, operationName }),
  });
  const text = await response.text();
  expect(response.status, text).toBeLessThan(500);
  return JSON.parse(text) as Answer;
}

/** A graphql-ws client, its handshake forwarded for `client`. */
function socketFor(t: TestApp, client = '203.0.113.200') {
  const forwarded = class extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers: { 'x-forwarded-for': client } });
    }
  };
  return createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: forwarded, retryAttempts: 0 } satisfies ClientOptions);
}

/** One operation over graphql-ws: its result, or its errors. */
function overSocket(socket: ReturnType<typeof createClient>, query: string): Promise<Answer> {
  return new Promise((resolve) => {
    socket.subscribe(
      { query },
      {
        next: (result) => resolve(result as Answer),
        error: (error) => resolve({ errors: Array.isArray(error) ? (error as Answer['errors']) : [{ message: String(error) }] }),
        complete: () => {},
      },
    );
  });
}

const TRUSTED = ['127.0.0.1', '::1'];

const REPEATED_490 = `{ ${'boards { id } '.repeat(490)}}`;
/** What `{ boards { id } }` answers on a fresh database: the board every one has. */
const BOARDS = { data: { boards: [{ id: 'global' }] } };

describe('validation, budgeted', () => {
  let t: TestApp;
  let socket: ReturnType<typeof createClient>;
  beforeAll(async () => {
    // No budgets (the test app's default); the requests come from 127.0.0.1, a trusted proxy here:
    // X-Forwarded-For names each client.
    t = await startTestApp({ http: { trustedProxies: TRUSTED } });
    socket = socketFor(t);
  });
  afterAll(async () => {
    await socket?.dispose();
  });

  const transports: [string, (query: string) => Promise<Answer>][] = [
    ['POST application/json (the fast path)', (query) => post(t, query, { client: '198.51.100.1' })],
    ["POST graphql-response+json (Yoga's path)", (query) => post(t, query, { accept: 'application/graphql-response+json', client: '198.51.100.2' })],
    ['graphql-ws', (query) => overSocket(socket, query)],
  ];

  for (const [name, ask] of transports) {
    it(`refuses { boards { id } } ×490 by name before graphql-js validates it, over ${name}`, async () => {
      const refused = await validationsDuring(() => ask(fresh(REPEATED_490)));
      expect(refused.result.errors).toHaveLength(1);
      const [error] = refused.result.errors!;
      expect(error?.message).toBe('The operation selects boards 490 times at one place; the limit is 20 (470 over).');
      expect(error?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', limit: 'repeatedFields', maximum: 20, found: 490 });
      expect(refused.validations).toBe(0);
      // The measure sees a validation where there is one: a new document within the limits.
      const served = await validationsDuring(() => ask(fresh(`{ ${'boards { id } '.repeat(3)}}`)));
      expect(served.result).toEqual(BOARDS);
      expect(served.validations).toBe(1);
    });
  }

  it('checks every limit on a document’s shape before validation, copies nested in copies included', async () => {
    const nest = (field: string, times: number, inner: string) => Array(times).fill(`${field} { ${inner} }`).join(' ');
    const OVER: [string, string, string, number][] = [
      ['aliases', `{ ${Array.from({ length: 30 }, (_, i) => `a${i}: boards { id }`).join(' ')} }`, 'aliases', 30],
      ['depth', '{ a { b { c { d { e { f { g { h { i } } } } } } } } }', 'depth', 9],
      ['directives', `{ boards { ${Array(11).fill('id @include(if: true)').join(' ')} } }`, 'directives', 11],
      // A fragment spread ten times in one spread ten times in...: 10,000 fields written out from a few hundred bytes.
      [
        'fields',
        `{ ...A } fragment A on Query { ${'...B '.repeat(10)}} fragment B on Query { ${'...C '.repeat(10)}} fragment C on Query { ${'...D '.repeat(10)}} fragment D on Query { ${'__typename '.repeat(10)}}`,
        'fields',
        10_000,
      ],
      // Twenty operations of a hundred fields each: every operation's walk is bounded by one count.
      [
        'fields, over every operation',
        `${Array.from({ length: 20 }, (_, i) => `query Q${i} { ...A }`).join(' ')} fragment A on Query { ${'...B '.repeat(10)}} fragment B on Query { ${'__typename '.repeat(10)}}`,
        'fields',
        2_000,
      ],
      // Four copies in four copies in...: no selection set repeats a field more than four times, yet the
      // rule compares 256 copies of `id` pair by pair.
      ['copies nested in copies', `{ ${nest('top(board: "x")', 4, nest('entries', 4, nest('player', 4, 'id id id id')))} }`, 'repeatedFields', 256],
    ];
    for (const [what, document, limit, found] of OVER) {
      // One of several operations is run by its name.
      const operationName = document.startsWith('query Q0') ? 'Q0' : undefined;
      const { result, validations } = await validationsDuring(() => post(t, fresh(document), { client: '198.51.100.3', operationName }));
      expect(result.errors?.[0]?.extensions, `${what}: ${JSON.stringify(result.errors)}`).toMatchObject({ code: 'BAD_USER_INPUT', limit, found });
      expect(validations, what).toBe(0);
    }
  });

  it('validates a document sent again only once, refused or not, however long it is', async () => {
    // Longer than Yoga's parse cache keeps (16 kB): only the validations remembered answer it again.
    const padding = `\n# ${'x'.repeat(20_000)}`;
    for (const [name, ask] of transports) {
      for (const [document, answer] of [
        ['{ boards { id nothing } }', { message: 'Cannot query field "nothing" on type "Board".', locations: [{ line: 2, column: 15 }] }],
        ['{ boards { id } }', BOARDS],
      ] as const) {
        const long = fresh(`${document}${padding}`);
        const first = await validationsDuring(() => ask(long));
        if ('data' in answer) expect(first.result, `${name}: ${document}`).toEqual(answer);
        else expect(first.result.errors, `${name}: ${document}`).toEqual([expect.objectContaining(answer)]);
        expect(first.validations, `${name}: ${document}`).toBe(1);
        const again = await validationsDuring(() => ask(long));
        expect(again.result, `${name}: ${document}`).toEqual(first.result);
        expect(again.validations, `${name}: ${document}`).toBe(0);
      }
    }
  });
});

describe('validation, charged to its client', () => {
  const FLOOD = 40;
  let budgeted: TestApp;
  beforeAll(async () => {
    // 5 ms of validation a second for each client address, and no other budget.
    budgeted = await startTestApp({
      rateLimits: { readsPerSecond: 0, submissionsPerSecond: 0, readRowsPerSecond: 0, authFailuresPerSecond: 0, validationMsPerSecond: 5 },
      http: { trustedProxies: TRUSTED },
    });
  });

  it('refuses a client sending new documents faster than its validation budget, RATE_LIMITED, and serves another', async () => {
    const flooder = '198.51.100.66';
    // At least a millisecond each, so at most five of a 5 ms budget in any one second: sent at
    // once, so that the flood spans a few seconds at most however loaded the machine is.
    const flood = await validationsDuring(() =>
      Promise.all(Array.from({ length: FLOOD }, () => post(budgeted, fresh('{ boards { id nothing } }'), { client: flooder }))),
    );
    const codes = flood.result.map((answer) => answer.errors?.[0]?.extensions?.code);
    const limited = codes.filter((code) => code === 'RATE_LIMITED').length;
    expect(limited, JSON.stringify(codes)).toBeGreaterThanOrEqual(FLOOD / 4);
    // The refused ones were never validated: one validation for each answer that names the field.
    expect(flood.validations).toBe(FLOOD - limited);
    expect(flood.result.find((answer) => answer.errors?.[0]?.extensions?.code === 'RATE_LIMITED')?.errors?.[0]?.message).toMatch(
      /^Too many new documents to validate from this client; retry in \d+ ms\.$/,
    );
    // Another address, at the same moment: served.
    const other = await validationsDuring(() => post(budgeted, fresh('{ boards { id } }'), { client: '198.51.100.67' }));
    expect(other.result).toEqual(BOARDS);
    expect(other.validations).toBe(1);
    // And over graphql-ws, whose handshake names the client.
    const flooding = socketFor(budgeted, '198.51.100.68');
    try {
      const overWs = await Promise.all(Array.from({ length: FLOOD }, () => overSocket(flooding, fresh('{ boards { id nothing } }'))));
      expect(overWs.filter((answer) => answer.errors?.[0]?.extensions?.code === 'RATE_LIMITED').length).toBeGreaterThanOrEqual(FLOOD / 4);
    } finally {
      await flooding.dispose();
    }
  });
});

describe('the validations remembered', () => {
  it('are kept by the rules that gave them too: introspection off in one app, on in another', async () => {
    const limits = useDocumentLimits();
    const ask = async (yoga: ReturnType<typeof createYoga>) =>
      (await (
        await yoga.fetch('http://yoga/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ __schema { queryType { name } } }' }),
        })
      ).json()) as Answer;
    // One schema, so that only the rules tell the two apart.
    const shared = createSchema({ typeDefs: 'type Query { hello: String }' });
    const off = createYoga({ schema: shared, parserAndValidationCache: false, plugins: [...limits, useIntrospection(false)] });
    const on = createYoga({ schema: shared, parserAndValidationCache: false, plugins: [...limits] });
    expect((await ask(off)).errors?.[0]?.message).toMatch(/introspection/i);
    expect(await ask(on)).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
  });
});

describe('the new limits against what real clients send', () => {
  /** What the limit finds in a document: a Yoga whose limit is 0, so that it says. */
  async function found(limit: 'fields' | 'repeatedFields', query: string): Promise<number> {
    const yoga = createYoga({ schema, parserAndValidationCache: false, plugins: [...useDocumentLimits({ [limit]: 0 })] });
    const response = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    const { errors = [] } = (await response.json()) as Answer;
    return errors.find((error) => error.extensions?.limit === limit)?.extensions?.found ?? 0;
  }

  it('leave room for every generated document, the typed client, and GraphiQL’s introspection', async () => {
    const typed = Object.values(JSON.parse(readFileSync(new URL('../client/persisted-documents.json', import.meta.url), 'utf8')) as Record<string, string>);
    const introspection = getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
      oneOf: true,
    });
    const documents = [...GENERATED_DOCUMENTS.map((document) => document.query), ...typed, introspection];
    for (const [limit, served] of [
      ['fields', 1_000],
      ['repeatedFields', 20],
    ] as const) {
      const measured = await Promise.all(documents.map((document) => found(limit, document)));
      // Each measure finds something (every document selects a field), and the largest stays far under.
      expect(Math.min(...measured), limit).toBeGreaterThan(0);
      expect(Math.max(...measured), limit).toBeLessThanOrEqual(served / 4);
    }
  });
});
