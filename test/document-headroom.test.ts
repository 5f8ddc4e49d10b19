import { readFileSync } from 'node:fs';
import { type DocumentNode, type FormattedExecutionResult, Kind, OperationTypeNode, buildSchema, getOperationAST, parse } from 'graphql';
import { type Plugin, createYoga } from 'graphql-yoga';
import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { DEFAULT_REQUEST_LIMITS, MAX_BODY_BYTES } from '../src/http/request-limits.js';
import { MAX_METADATA_BYTES, MAX_TIE_BREAKS } from '../src/model/board.js';
import { MAX_BOARD_SCORE } from '../src/model/contract.js';
import { useDocumentLimits } from '../src/http/document-limits.js';
import { operationCost } from '../src/http/operation-cost.js';
import { MAX_FRIENDS } from '../src/model/contract.js';
import { MAX_BATCH, MAX_BINS, MAX_BUCKET_PAGE, MAX_PAGE } from '../src/model/contract.js';
import { MAX_WEBHOOK_BOARDS, MAX_WEBHOOK_URL_LENGTH, WEBHOOK_EVENTS } from '../src/model/webhooks.js';
import { schema } from '../src/schema/index.js';
import { BOTH_WAYS_DOCUMENTS, GENERATED_DOCUMENTS, LEAGUE_DOCUMENTS, TIE_BREAK_DOCUMENTS } from './helpers/generated-documents.js';
import { SERVER_KEY, type TestApp, startTestApp } from './helpers/test-app.js';

const auth = { authorization: `Bearer ${SERVER_KEY}` };

/**
 * Issue 11: how far under each limit on a document's shape and cost the largest legitimate
 * documents stay: the deepest a generated client writes for each operation (client preset and
 * Relay, `__typename` everywhere) and every operation of the typed client, each at the largest
 * sizes the contract allows. Measured by the service's own limits: each is set to 0 in turn, and
 * the refusal says what it found.
 */

const SHAPE_LIMITS = ['aliases', 'depth', 'tokens', 'directives', 'bytes'] as const;
type ShapeLimit = (typeof SHAPE_LIMITS)[number];

/** The limits the service runs with (document-limits.ts and request-limits.ts defaults). */
const SERVED: Record<ShapeLimit | 'cost', number> = {
  aliases: 20,
  depth: 8,
  tokens: 2_000,
  directives: 10,
  bytes: DEFAULT_REQUEST_LIMITS.maxDocumentBytes,
  cost: DEFAULT_REQUEST_LIMITS.maxOperationRows,
};

const UNLIMITED = { aliases: 1e9, depth: 1e9, tokens: 1e9, directives: 1e9, bytes: 1e9 };

/** A Yoga of the served schema with one limit at 0 and the others off, that validates and runs nothing. */
function validator(limit: ShapeLimit) {
  const stop = { data: null };
  const runNothing: Plugin = {
    onExecute: ({ setResultAndStopExecution }) => setResultAndStopExecution(stop),
    onSubscribe: ({ setResultAndStopExecution }) => setResultAndStopExecution(stop),
  };
  return createYoga({
    schema,
    parserAndValidationCache: false,
    plugins: [...useDocumentLimits({ ...UNLIMITED, [limit]: 0 }), runNothing],
  });
}
const VALIDATORS = Object.fromEntries(SHAPE_LIMITS.map((limit) => [limit, validator(limit)])) as Record<ShapeLimit, ReturnType<typeof validator>>;

interface Answer {
  errors?: { message: string; extensions?: { limit?: string; found?: number } }[];
}

/** What the service's limit `limit` finds in `query`: 0 when even a maximum of 0 lets it through. */
async function measured(limit: ShapeLimit, query: string): Promise<number> {
  const response = await VALIDATORS[limit].fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query }),
  });
  const { errors = [] } = (await response.json()) as Answer;
  const refusal = errors.find((error) => error.extensions?.limit === limit);
  // A document that does not validate is no legitimate document: the measure would say nothing.
  expect(errors.filter((error) => error !== refusal).map((error) => error.message)).toEqual([]);
  return refusal?.extensions?.found ?? 0;
}

/** Rows the operation can return with these variables, as the cost limit counts them. */
function rows(source: string, operationName: string | undefined, variables: Record<string, unknown>): number {
  const document = parse(source);
  const cost = operationCost(schema, document, operationName, variables);
  if (!cost) throw new Error(`${operationName}: the variables do not coerce`);
  return cost.rows;
}

// Issue 59: every result with a value for each of a board's most tie-break columns.
const result = (i: number) => ({
  board: 'arena',
  playerId: `p${i}`,
  score: i,
  matchId: `m${i}`,
  region: 'EU',
  achievedAt: null,
  tieBreakValues: Array.from({ length: MAX_TIE_BREAKS }, () => i),
});
const bucket = { board: 'arena', period: 'ALL_TIME', bucket: null, region: 'EU' };

/** Each operation's variables at the largest sizes the contract allows. */
function largestVariables(operation: string): Record<string, unknown> {
  switch (operation) {
    case 'submitScore':
      return { input: result(0), withMetadata: true };
    case 'submitScores':
      return { inputs: Array.from({ length: MAX_BATCH }, (_, i) => result(i)), withMetadata: true };
    case 'top':
      return { ...bucket, limit: 1_000, rankStyle: 'DENSE', withMetadata: true };
    case 'topChanged':
      // At most the board's topSize, itself at most 100.
      return { ...bucket, limit: 100, rankStyle: 'DENSE', withMetadata: true };
    case 'standing':
    case 'friends':
      return { ...bucket, playerId: 'ana', rankStyle: 'DENSE', withMetadata: true };
    // Issue 60: with fill, a window of 2 × radius + 1 rows at the edges too.
    case 'around':
      return { ...bucket, playerId: 'ana', radius: 50, fill: true, rankStyle: 'DENSE', withMetadata: true };
    // A page forwards, backwards (last) or from a rank: 1,000 rows whichever (the documents hold one of them).
    case 'standings':
      return { ...bucket, first: 1_000, after: null, last: 1_000, before: null, fromRank: 1, rankStyle: 'DENSE', withMetadata: true };
    case 'seasonResults':
      return { board: 'arena', season: '1', first: 1_000, after: null, last: 1_000, before: null, fromRank: 1, rankStyle: 'DENSE', withMetadata: true };
    case 'board':
      // With a page of its periodBuckets (the typed client's PeriodBuckets).
      return { id: 'arena', board: 'arena', period: 'ALL_TIME', bucket: null, region: 'EU', first: MAX_BUCKET_PAGE, after: null };
    case 'history':
      return { board: 'arena', playerId: 'ana', period: 'DAILY', region: 'EU', first: MAX_BUCKET_PAGE, after: null, withMetadata: true };
    case 'scoreDistribution':
      return { ...bucket, bins: MAX_BINS };
    case 'boards':
      return { period: 'ALL_TIME', bucket: null, region: 'EU' };
    case 'player':
      return { id: 'ana' };
    case 'upsertPlayer':
      return { input: { id: 'ana', displayName: 'Ana', avatarUrl: null } };
    case 'setFriends':
      return { playerId: 'ana', friendIds: Array.from({ length: MAX_FRIENDS }, (_, i) => `f${i}`) };
    case 'createBoard':
    case 'updateBoard':
      return { input: { id: 'arena', title: 'Arena', maxScore: 1_000_000 } };
    // Issue 59: a game-server key scoped to boards.
    case 'createApiKey':
      return { name: 'laps', role: 'SERVER', boards: Array.from({ length: 20 }, (_, i) => `board-${i}`) };
    case 'startSeason':
      return { board: 'arena', name: 'One', startsAt: null, endsAt: null };
    case 'closeSeason':
      return { board: 'arena' };
    case 'rebuildBoard':
      return bucket;
    case 'flagPlayer':
      return { playerId: 'ana', reason: 'aimbot' };
    case 'unflagPlayer':
    case 'deletePlayer':
      return { playerId: 'ana' };
    // Issue 57: a cohort's entries are at most MAX_COHORT_SIZE whatever the variables.
    case 'league':
    case 'cohortChanged':
      return { board: 'arena', playerId: 'ana', bucket: null, withMetadata: true };
    case 'cohort':
      return { board: 'arena', tier: 'Gold', number: 1, bucket: null, withMetadata: true };
    case 'leagueTiers':
      return { board: 'arena', bucket: null };
    case 'attemptsUsed':
    case 'joinBoard':
      return { board: 'arena', playerId: 'ana' };
    // Issue 58: a closed list's awards and a webhook's deliveries, each a page of at most MAX_PAGE; a
    // webhook of every event and MAX_WEBHOOK_BOARDS boards; an overtaking's two standings.
    case 'awards':
      return { board: 'arena', period: 'DAILY', bucket: '2026-12-01', region: 'EU', first: MAX_PAGE, after: null, withMetadata: true };
    case 'webhooks':
      return {};
    case 'webhookDeliveries':
      return { webhook: 'wh', status: 'FAILED', first: MAX_PAGE, after: null };
    case 'createWebhook':
      return {
        input: {
          url: `https://hooks.example/${'x'.repeat(MAX_WEBHOOK_URL_LENGTH - 'https://hooks.example/'.length)}`,
          events: [...WEBHOOK_EVENTS],
          boards: Array.from({ length: MAX_WEBHOOK_BOARDS }, (_, i) => `board-${i}`),
        },
      };
    case 'deleteWebhook':
      return { id: 'wh' };
    case 'redeliverWebhook':
      return { delivery: 'msg_x' };
    case 'friendOvertook':
      return { board: 'arena', playerId: 'ana', withMetadata: true };
    // Issue 60: the admin's board deletion, entry removal and its audit (at most 200 a read).
    case 'deleteBoard':
      return { id: 'arena' };
    case 'removeEntry':
      return { board: 'arena', playerId: 'ana', reason: 'impossible lap' };
    case 'entryRemovals':
      return { board: 'arena', playerId: 'ana', first: 200 };
    default:
      throw new Error(`no variables for ${operation}`);
  }
}

interface Legitimate {
  name: string;
  query: string;
  operationName: string;
}

const typedClient: Legitimate[] = Object.values(
  JSON.parse(readFileSync(new URL('../client/persisted-documents.json', import.meta.url), 'utf8')) as Record<string, string>,
).map((query) => ({ name: `typed client ${/^\w+ (\w+)/.exec(query)![1]!}`, query, operationName: /^\w+ (\w+)/.exec(query)![1]! }));
const generated: Legitimate[] = [...GENERATED_DOCUMENTS, ...LEAGUE_DOCUMENTS, ...TIE_BREAK_DOCUMENTS, ...BOTH_WAYS_DOCUMENTS].map((document) => ({
  name: `generated ${document.operationName}`,
  ...document,
}));
const LEGITIMATE = [...generated, ...typedClient];

/** The contract operations a document calls: its root fields (one, or a screen's several: OpenBoard's top, standing and around). */
function rootFields(source: string, operationName: string): string[] {
  const document = parse(source);
  const operation = getOperationAST(document, operationName)!;
  const fields = new Set<string>();
  const visit = (selections: typeof operation.selectionSet.selections, document: DocumentNode) => {
    for (const selection of selections) {
      if (selection.kind === Kind.FIELD && selection.name.value !== '__typename') fields.add(selection.name.value);
      if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet.selections, document);
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = document.definitions.find((d) => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === selection.name.value);
        if (fragment?.kind === Kind.FRAGMENT_DEFINITION) visit(fragment.selectionSet.selections, document);
      }
    }
  };
  visit(operation.selectionSet.selections, document);
  expect(fields.size, operationName).toBeGreaterThan(0);
  return [...fields];
}

describe('the largest legitimate documents against each limit', () => {
  type Row = Legitimate & { operation: string; fields: string[] } & Record<ShapeLimit | 'cost', number>;
  let table: Row[];
  beforeAll(async () => {
    table = await Promise.all(
      LEGITIMATE.map(async (document) => {
        const fields = rootFields(document.query, document.operationName);
        const shape: Record<string, number> = Object.fromEntries(
          await Promise.all(SHAPE_LIMITS.map(async (limit) => [limit, await measured(limit, document.query)] as const)),
        );
        // The cost limit charges queries and subscriptions; a mutation is bounded by its inputs (read-limit.ts).
        const charged = getOperationAST(parse(document.query), document.operationName)!.operation !== OperationTypeNode.MUTATION;
        // Root fields of one document share their variables (board, playerId...): each field's largest.
        const variables = Object.assign({}, ...fields.map(largestVariables)) as Record<string, unknown>;
        const cost = charged ? rows(document.query, document.operationName, variables) : 0;
        return { ...document, operation: fields.join(' + '), fields, ...shape, cost } as Row;
      }),
    );
  });

  it('measures a refusal where there should be one (the measure can fail)', async () => {
    expect(await measured('aliases', '{ a: boards { id } b: boards { id } }')).toBe(2);
    expect(await measured('depth', '{ boards { id } }')).toBe(2);
    expect(await measured('directives', '{ boards @skip(if: false) { id } }')).toBe(1);
    expect(await measured('tokens', '{ boards { id } }')).toBe(6);
    expect(await measured('bytes', '{ boards { id } }')).toBe(17);
    expect(rows('{ top(board: "a", limit: 7) { entries { rank player { id } } } }', undefined, {})).toBe(15);
  });

  for (const limit of [...SHAPE_LIMITS, 'cost'] as const) {
    it(`every one stays under the ${limit} limit (${SERVED[limit].toLocaleString('en-US')})`, () => {
      for (const row of table) expect(row[limit], `${row.name}: ${limit}`).toBeLessThanOrEqual(SERVED[limit]);
      const largest = table.reduce((a, b) => (b[limit] > a[limit] ? b : a));
      // The figure the closing note gives for this limit.
      console.info(
        `${limit}: the largest is ${largest.name} (${largest.operation}) at ${largest[limit].toLocaleString('en-US')} of ${SERVED[limit].toLocaleString('en-US')}, ` +
          `${Math.round((100 * largest[limit]) / SERVED[limit])}% of the limit`,
      );
    });
  }

  it('covers every operation of the contract', () => {
    const contract = buildSchema(readFileSync(new URL('../contract/api.graphql', import.meta.url), 'utf8'));
    const operations = [contract.getQueryType(), contract.getMutationType(), contract.getSubscriptionType()].flatMap((type) =>
      Object.keys(type?.getFields() ?? {}),
    );
    const measuredOperations = new Set(table.flatMap((row) => row.fields));
    expect(operations.filter((operation) => !measuredOperations.has(operation))).toEqual([]);
  });
});

describe('the largest legitimate request body', () => {
  let t: TestApp;
  let ws: Client;
  beforeAll(async () => {
    t = await startTestApp();
    ws = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: auth });
    const board = { id: LONGEST_BOARD, title: 'Arena', maxScore: MAX_BOARD_SCORE, regions: [LONGEST_REGION], tieBreaks: WIDEST_COLUMNS };
    expect((await t.admin('mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }', { input: board })).errors).toBeUndefined();
  });
  afterAll(async () => {
    await ws?.dispose();
    await t?.close();
  });

  // Every string at its longest, in the widest UTF-8 a UTF-16 unit takes (3 bytes), as the schema
  // bounds them (schema/validation.ts; metadata at MAX_METADATA_BYTES as compact JSON).
  const LONGEST_BOARD = 'B'.repeat(64);
  const LONGEST_REGION = 'R'.repeat(32);
  // Issue 59: MAX_TIE_BREAKS columns whose values take the most characters beside a score at
  // MAX_BOARD_SCORE (39 bits) within the 53 bits createBoard allows: 15, 15, 15 and 3 (4+4+4+2 bits).
  const WIDEST_COLUMNS = [15, 15, 15, 3].map((max, i) => ({ name: `c${i}`, order: 'HIGH_FIRST', max }));
  const WIDEST_VALUES = WIDEST_COLUMNS.map((column) => column.max);
  const widest = (i: number) => `${'玩'.repeat(127)}${String.fromCharCode(0x4e00 + i)}`;
  const metadata = (() => {
    const filler = { note: '' };
    filler.note = 'x'.repeat(MAX_METADATA_BYTES - Buffer.byteLength(JSON.stringify(filler)));
    return filler;
  })();
  const inputs = (round: number) =>
    Array.from({ length: MAX_BATCH }, (_, i) => ({
      board: LONGEST_BOARD,
      playerId: widest(i),
      score: MAX_BOARD_SCORE - i - round,
      matchId: `${widest(round)}`,
      region: LONGEST_REGION,
      achievedAt: '2026-12-01T20:01:02.345Z',
      metadata,
      tieBreakValues: WIDEST_VALUES,
    }));
  const relay = GENERATED_DOCUMENTS.find((document) => document.operationName === 'SubmitScoresRelay')!;
  const body = (round: number) => JSON.stringify({ query: relay.query, operationName: relay.operationName, variables: { inputs: inputs(round) } });

  it(`submitScores of ${MAX_BATCH} results, every field at its largest, fits the body limit`, () => {
    expect(Buffer.byteLength(JSON.stringify(metadata))).toBe(MAX_METADATA_BYTES);
    expect(WIDEST_VALUES).toHaveLength(MAX_TIE_BREAKS);
    const bytes = Buffer.byteLength(body(0));
    console.info(
      `body: the largest is generated SubmitScoresRelay at ${bytes.toLocaleString('en-US')} of ${MAX_BODY_BYTES.toLocaleString('en-US')}, ${Math.round((100 * bytes) / MAX_BODY_BYTES)}% of the limit`,
    );
    expect(bytes).toBeLessThanOrEqual(MAX_BODY_BYTES);
  });

  it('is accepted over HTTP POST and over graphql-ws, every result recorded', async () => {
    const response = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: body(1) });
    const overHttp = (await response.json()) as { data?: { submitScores: { duplicate: boolean }[] }; errors?: unknown };
    expect(overHttp.errors).toBeUndefined();
    expect(overHttp.data!.submitScores.filter((payload) => !payload.duplicate)).toHaveLength(MAX_BATCH);
    type Submitted = FormattedExecutionResult<{ submitScores: { duplicate: boolean }[] }>;
    const overWs = await new Promise<Submitted>((resolve, reject) => {
      const request = JSON.parse(body(2)) as { query: string; operationName: string; variables: Record<string, unknown> };
      ws.subscribe<Submitted['data']>(request, { next: (value) => resolve(value as Submitted), error: reject, complete: () => {} });
    });
    expect(overWs.errors).toBeUndefined();
    expect(overWs.data!.submitScores.filter((payload) => !payload.duplicate)).toHaveLength(MAX_BATCH);
    const size = await t.gql<{ top: { size: number; entries: { tieBreakValues: number[] }[] } }>(
      `{ top(board: "${LONGEST_BOARD}", limit: 1) { size entries { tieBreakValues } } }`,
    );
    expect(size.data!.top.size).toBe(MAX_BATCH);
    expect(size.data!.top.entries).toEqual([{ tieBreakValues: WIDEST_VALUES }]);
  });
});
