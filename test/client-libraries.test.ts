import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client/core';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { Client as UrqlClient, cacheExchange, fetchExchange, subscriptionExchange } from '@urql/core';
import { readFileSync } from 'node:fs';
import {
  type DocumentNode,
  type FormattedExecutionResult,
  Kind,
  type OperationDefinitionNode,
  OperationTypeNode,
  buildSchema,
  getOperationAST,
  parse,
} from 'graphql';
import { type Client as WsClient, createClient as createWsClient } from 'graphql-ws';
import { firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import * as ops from '../client/src/index.js';
import { DAY_MS, closeBuckets } from './helpers/closed-days.js';
import { movableClock } from './helpers/clock.js';
import { BOTH_WAYS_DOCUMENTS, GENERATED_DOCUMENTS, LEAGUE_DOCUMENTS, TIE_BREAK_DOCUMENTS } from './helpers/generated-documents.js';
import { type LeagueRules, type SentResult, leagueRound } from './helpers/league-oracle.js';
import { type SentScore, aroundRows, backwardPages, boardRows, pageAt, previousRanks } from './helpers/both-ways-oracle.js';
import { withoutFragments, withoutTypenames } from './helpers/plain-document.js';
import { type TieBreakColumn, type TieBreakResult, tieBreakStandings } from './helpers/tie-break-oracle.js';
import { ADMIN_KEY, type TestApp, startTestApp } from './helpers/test-app.js';
import { observations } from './helpers/metrics.js';
import { settle, until } from './helpers/wait.js';
import { notCompiledBecause } from '../src/http/graphql-jit.js';

/**
 * Every operation of the contract, sent as real clients send it: by the typed client this
 * repository ships (client/), by Apollo Client's core (which adds __typename to every selection)
 * and by urql, each over HTTP POST, GET and graphql-ws, against the real service on real stores.
 * Each answers exactly what the same operation written without fragments answers (the oracle,
 * sent as plain JSON POST). So do the deepest documents generated clients make (Relay's and the
 * client preset's, test/helpers/generated-documents.ts) sent by each library.
 */

// A fixed clock, so that timestamps (startsAt, asOf, achievedAt left out) are the same for every sender.
const NOW = new Date('2037-11-29T12:00:00.000Z');
const at = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000).toISOString();
const BOARD = 'Arena-EU';
/**
 * Issue 56: a board whose day two days before NOW is closed (seeded while the app's clock stood in
 * it, then closed: its reads served from its frozen standings), read as studios read it: the
 * bucket written as its label, region EU on Europe/Berlin's calendar, unicode player ids, a player
 * who never got a profile.
 */
const CLOSED_BOARD = 'Daily-EU';
const CLOSED_DAY = new Date(NOW.getTime() - 2 * DAY_MS);
const CLOSED_LABEL = CLOSED_DAY.toISOString().slice(0, 10);
const closedResults = [
  { playerId: '玩家一', score: 800, region: 'EU', minutes: 50, metadata: { car: 'R8' } },
  { playerId: 'Jürgen', score: 600, region: 'EU', minutes: 40 },
  { playerId: 'ada', score: 600, region: null, minutes: 30 },
  { playerId: 'ohne-Profil-é', score: 300, region: 'EU', minutes: 20 },
  { playerId: 'bob', score: 100, region: null, minutes: 10 },
].map((r, i) => ({
  board: CLOSED_BOARD,
  playerId: r.playerId,
  score: r.score,
  region: r.region,
  matchId: `closed-${i}`,
  achievedAt: new Date(CLOSED_DAY.getTime() - r.minutes * 60_000).toISOString(),
  ...('metadata' in r ? { metadata: r.metadata } : {}),
}));

/**
 * Issue 57: a league board (a mixed-case id, unicode tier names, COMPETITION ranks) whose open
 * daily round seven players entered in this order, on regions EU and na, one with no profile
 * (ohne-Profil-é): the last tier's first cohort filled to five, the next opened for the rest.
 * And a tournament: two may join (ada and bob have), one result each a day (ada has used hers).
 */
const LEAGUE_BOARD = 'Liga-EU';
const LEAGUE: LeagueRules = { tiers: ['Gold', 'Silber', '青銅'], cohortSize: 5, promote: 1, demote: 1, rankStyle: 'COMPETITION' };
const leagueSent: (SentResult & { region: string })[] = [
  ['玩家一', 900, 'EU'],
  ['ohne-Profil-é', 300, 'EU'],
  ['Jürgen', 700, 'na'],
  ['ada', 700, 'EU'],
  ['bob', 100, 'EU'],
  ['cyd', 50, 'na'],
  ['EU', 400, 'EU'],
  ['ada', 800, 'EU'],
].map(([playerId, score, region], i) => ({ playerId: playerId as string, score: score as number, region: region as string, achievedAt: new Date(at(60 - i)) }));
const TOURNAMENT = 'Cup-Tour';
/**
 * Issue 58: the closed day's prize bands (ORDINAL: Jürgen, ahead of ada on 600 by reaching it
 * first, is in both bands, ada in the top 50 % only), and a board of the ALL_TIME list alone, so a
 * pass is told once: ohne-Profil-é lists Jürgen as a friend and is ahead of him.
 */
const CLOSED_BANDS = [
  { name: 'Sieger', fromRank: 1, toRank: 2 },
  { name: 'Top 50 %', topPercent: 50 },
];
const PASS_BOARD = 'Pass-EU';

/**
 * Issue 59: a board whose equal scores are decided by stars (most first), then moves (fewest
 * first), then the earlier result, then player id bytes descending; minScore 10. Sent one at a time
 * in this order: Jürgen and ada equal on every column (Jürgen earlier), bob and 'Bob' equal in the
 * same millisecond (bob, the larger id bytes, first), 玩家一 bettering a column only.
 */
const TIE_BOARD = 'Laps-EU';
const TIE_COLUMNS: TieBreakColumn[] = [
  { name: 'stars', order: 'HIGH_FIRST', max: 3 },
  { name: 'Züge', order: 'LOW_FIRST', max: 999 },
];
const tieSent: TieBreakResult[] = (
  [
    ['玩家一', 700, 2, 10, 50],
    ['Jürgen', 700, 3, 20, 45],
    ['ada', 700, 3, 20, 40],
    ['bob', 500, 1, 0, 35],
    ['Bob', 500, 1, 0, 35],
    ['cyd', 900, 0, 999, 30],
    ['玩家一', 700, 3, 19, 25],
    ['ohne-Profil-é', 100, 3, 0, 20],
  ] as const
).map(([playerId, score, stars, moves, minutes]) => ({ playerId, score, tieBreakValues: [stars, moves], achievedAt: new Date(at(minutes)) }));
const tieBucket = { board: TIE_BOARD, period: 'ALL_TIME', bucket: null, region: null };
/** A result to the tie-break board with these values (left out when undefined). */
const tied = (playerId: string, score: number, values: number[] | undefined, matchId: string) => ({
  board: TIE_BOARD,
  playerId,
  score,
  matchId,
  ...(values === undefined ? {} : { tieBreakValues: values }),
});

/**
 * Issue 60: the same results on a board of one shard and one of eight: pages backwards and from a
 * rank, around with fill. Ties on 700 and 500 split by the time reached (a millisecond apart, which
 * a maxScore below 2^13 keeps), a player without a profile, ids differing only in case.
 */
const PAGE_BOARDS = ['Pages-1', 'Pages-8'] as const;
const pagesSent: SentScore[] = (
  [
    ['玩家一', 900],
    ['Jürgen', 700],
    ['ada', 700],
    ['ohne-Profil-é', 500],
    ['bob', 300],
    ['Bob', 700],
    ['cyd', 100],
    ['EU', 500],
  ] as const
).map(([playerId, score], i) => ({ playerId, score, matchId: 'pages', achievedAt: NOW.getTime() - 3_600_000 + i }));
const pagesBucket = (board: string) => ({ board, period: 'ALL_TIME', bucket: null, region: null });

/** What a sender answered: its data, and each error's extensions.code and extensions.reason (issue 57's refusals give one). */
type Answer = { data: unknown; codes: (string | undefined)[]; reasons?: (string | undefined)[]; retryAfterMs?: unknown[] };
type Variables = Record<string, unknown>;

/** One way of sending: a client library over one transport. */
interface Sender {
  name: string;
  send(document: DocumentNode, variables: Variables): Promise<Answer>;
  /** The first view of a subscription. */
  first(document: DocumentNode, variables: Variables): Promise<Answer>;
  close(): Promise<void>;
  /** Every request body or URL it sent, to check what it added. */
  sent: string[];
}

const kindOf = (document: DocumentNode) => document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!.operation;
const answerOf = (result: { data?: unknown; errors?: readonly { extensions?: Record<string, unknown> | undefined }[] | undefined }): Answer => {
  // Issue 59: RATE_LIMITED's extensions.retryAfterMs, where an error has one: a whole number of ms (its value is the clock's).
  const retryAfter = (result.errors ?? []).flatMap((error) => (error.extensions && 'retryAfterMs' in error.extensions ? [error.extensions.retryAfterMs] : []));
  return {
    data: withoutTypenames(result.data ?? null),
    codes: (result.errors ?? []).map((error) => error.extensions?.code as string | undefined),
    reasons: (result.errors ?? []).map((error) => error.extensions?.reason as string | undefined),
    ...(retryAfter.length > 0 ? { retryAfterMs: retryAfter.map((ms) => (Number.isInteger(ms) && (ms as number) > 0 ? 'whole ms' : ms)) } : {}),
  };
};

/**
 * An answer with every `asOf` checked and set aside: a view's asOf is when the top cache or the top
 * feed read it (on the system's clock), so two senders a second apart may be served views read
 * at different moments. Everything else must be equal.
 */
function viewOf(answer: Answer): Answer {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (!value || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, v]) => {
        if (key !== 'asOf') return [key, strip(v)];
        expect(Number.isNaN(Date.parse(v as string)), 'asOf').toBe(false);
        return [key, 'a date-time'];
      }),
    );
  };
  return { ...answer, data: strip(answer.data) };
}

/** fetch that records what it sends. */
function recordingFetch(sent: string[]): typeof fetch {
  return (input, init) => {
    sent.push(`${init?.method ?? 'GET'} ${String(input instanceof Request ? input.url : input)} ${typeof init?.body === 'string' ? init.body : ''}`);
    return fetch(input, init);
  };
}

/** The headers of a sender with `key`: none for an anonymous one (null). */
const authorizationOf = (key: string | null): Record<string, string> => (key === null ? {} : { authorization: `Bearer ${key}` });

function wsClient(url: string, sent: string[], key: string | null = ADMIN_KEY): WsClient {
  return createWsClient({
    url: url.replace('http', 'ws') + '/graphql',
    webSocketImpl: class extends WebSocket {
      override send(data: string, ...rest: unknown[]) {
        sent.push(`WS ${data}`);
        // @ts-expect-error ws's overloads
        super.send(data, ...rest);
      }
    },
    connectionParams: authorizationOf(key),
    retryAttempts: 0,
  });
}

function typedClient(url: string, transport: ops.Transport, key: string | null = ADMIN_KEY): Sender {
  const sent: string[] = [];
  const client = ops.createLeaderboardClient({
    url: `${url}/graphql`,
    ...(key === null ? {} : { apiKey: key }),
    transport,
    fetch: recordingFetch(sent),
    webSocketImpl: WebSocket,
  });
  const capture = async (run: () => Promise<unknown>): Promise<Answer> => {
    try {
      return { data: withoutTypenames(await run()), codes: [], reasons: [] };
    } catch (error) {
      if (error instanceof ops.LeaderboardError) return { ...answerOf({ errors: error.errors }), data: null };
      throw error;
    }
  };
  return {
    name: `typed client over ${transport}`,
    sent,
    send: (document, variables) => capture(() => client.request(document, variables)),
    first: (document, variables) =>
      capture(async () => {
        const views = client.subscribe<unknown, Variables>(document, variables, transport === 'ws' ? 'ws' : 'sse');
        const view: IteratorResult<unknown> = await views.next();
        await views.return?.();
        return view.value as unknown;
      }),
    close: () => client.close(),
  };
}

function apollo(url: string, transport: ops.Transport, key: string | null = ADMIN_KEY): Sender {
  const sent: string[] = [];
  const ws = wsClient(url, sent, key);
  const http = new HttpLink({
    uri: `${url}/graphql`,
    headers: authorizationOf(key),
    useGETForQueries: transport === 'get',
    fetch: recordingFetch(sent),
  });
  const wsLink = new GraphQLWsLink(ws);
  // Subscriptions over graphql-ws whatever the transport of queries and mutations, as Apollo's docs split them.
  const link = transport === 'ws' ? wsLink : ApolloLink.split((op) => kindOf(op.query) === OperationTypeNode.SUBSCRIPTION, wsLink, http);
  const client = new ApolloClient({ link, cache: new InMemoryCache() });
  return {
    name: `Apollo Client over ${transport}`,
    sent,
    async send(document, variables) {
      const result =
        kindOf(document) === OperationTypeNode.MUTATION
          ? await client.mutate({ mutation: document, variables, fetchPolicy: 'no-cache', errorPolicy: 'all' })
          : await client.query({ query: document, variables, fetchPolicy: 'no-cache', errorPolicy: 'all' });
      const errors = result.error && 'errors' in result.error ? (result.error.errors as { extensions?: Record<string, unknown> }[]) : [];
      if (result.error && errors.length === 0) throw new Error('Apollo answered no GraphQL errors', { cause: result.error });
      return answerOf({ data: result.data ?? null, errors });
    },
    async first(document, variables) {
      const result = await firstValueFrom(client.subscribe({ query: document, variables, fetchPolicy: 'no-cache' }));
      const errors = result.error && 'errors' in result.error ? (result.error.errors as { extensions?: Record<string, unknown> }[]) : [];
      if (result.error && errors.length === 0) throw new Error('Apollo answered no GraphQL errors', { cause: result.error });
      return answerOf({ data: result.data ?? null, errors });
    },
    async close() {
      client.stop();
      await ws.dispose();
    },
  };
}

function urql(url: string, transport: ops.Transport, key: string | null = ADMIN_KEY): Sender {
  const sent: string[] = [];
  const ws = wsClient(url, sent, key);
  const forwardSubscription = (request: { query?: string | undefined; variables?: unknown; operationName?: string | undefined }) => ({
    subscribe: (sink: { next(value: FormattedExecutionResult): void; error(error: unknown): void; complete(): void }) => ({
      unsubscribe: ws.subscribe(
        { query: request.query!, variables: request.variables as Variables, ...(request.operationName ? { operationName: request.operationName } : {}) },
        sink,
      ),
    }),
  });
  const client = new UrqlClient({
    url: `${url}/graphql`,
    fetch: recordingFetch(sent),
    fetchOptions: { headers: authorizationOf(key) },
    preferGetMethod: transport === 'get' ? 'force' : false,
    exchanges: [
      cacheExchange,
      ...(transport === 'ws' ? [] : [fetchExchange]),
      subscriptionExchange({ forwardSubscription, enableAllOperations: transport === 'ws' }),
    ],
  });
  const fromUrql = (result: { data?: unknown; error?: { graphQLErrors: { extensions?: Record<string, unknown> }[]; networkError?: Error } }) => {
    if (result.error?.networkError) throw result.error.networkError;
    return answerOf({ data: result.data ?? null, errors: result.error?.graphQLErrors ?? [] });
  };
  return {
    name: `urql over ${transport}`,
    sent,
    async send(document, variables) {
      const run =
        kindOf(document) === OperationTypeNode.MUTATION
          ? client.mutation(document, variables)
          : client.query(document, variables, { requestPolicy: 'network-only' });
      return fromUrql(await run.toPromise());
    },
    first: (document, variables) =>
      new Promise((resolve, reject) => {
        const subscription = client.subscription(document, variables).subscribe((result) => {
          queueMicrotask(() => subscription.unsubscribe());
          try {
            resolve(fromUrql(result));
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        });
      }),
    close: async () => ws.dispose(),
  };
}

/** The oracle: the document without fragments, as plain JSON over POST (queries and mutations) or graphql-ws (subscriptions). */
function plain(url: string): Sender & { ws: WsClient } {
  const sent: string[] = [];
  const ws = wsClient(url, sent);
  return {
    name: 'plain',
    sent,
    ws,
    async send(document, variables) {
      const response = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}` },
        body: JSON.stringify({ query: withoutFragments(document), variables }),
      });
      return answerOf((await response.json()) as FormattedExecutionResult);
    },
    async first(document, variables) {
      for await (const result of ws.iterate({ query: withoutFragments(document), variables })) return answerOf(result);
      throw new Error('no view');
    },
    close: async () => ws.dispose(),
  };
}

const bucket = { board: BOARD, period: 'ALL_TIME', bucket: null, region: null };
/** The closed day, by its label: globally and in EU. */
const closed = { board: CLOSED_BOARD, period: 'DAILY', bucket: CLOSED_LABEL, region: null };
const closedEu = { ...closed, region: 'EU' };
const regional = { board: BOARD, period: 'DAILY', bucket: null, region: 'EU' };
/** A board created DENSE, holding the same results: the only kind that serves DENSE ranks. */
const DENSE_BOARD = 'Arena-Dense';
const dense = { board: DENSE_BOARD, period: 'ALL_TIME', bucket: null, region: null };
// Entry metadata on most results: objects as games send them (nested, unicode); one sends none.
const results = [
  { playerId: '玩家一', score: 900, minutes: 50, metadata: { car: 'R8', replay: 'rp-玩家一', laps: [61.2, 60.9] } },
  { playerId: 'Jürgen', score: 700, minutes: 40, metadata: { deck: { hero: 'Jürgen', cards: ['fire', 'ice'] } } },
  { playerId: 'ada', score: 700, minutes: 30, metadata: null },
  { playerId: 'bob', score: 500, minutes: 20, metadata: { emoji: '👩‍💻' } },
  { playerId: 'cheater', score: 999, minutes: 10, metadata: { car: 'hack' } },
  { playerId: 'cyd', score: 100, minutes: 5 },
].map((r, i) => ({
  board: BOARD,
  playerId: r.playerId,
  score: r.score,
  matchId: `match-${i}`,
  region: 'EU',
  achievedAt: at(r.minutes),
  ...('metadata' in r ? { metadata: r.metadata } : {}),
}));

/**
 * Each operation of the contract with the variables it is sent with; every one answers the same
 * whoever sends it and however often (reads, and writes replayed: a replayed result answers
 * duplicate: true with the standings as they are now).
 */
const CASES: { operation: string; document: DocumentNode; variables: Variables }[] = [
  { operation: 'submitScore', document: ops.SubmitScoreDocument, variables: { input: results[0] } },
  // Issue 59: a result with its tie-break values (replayed: answered with the standings as they are now).
  { operation: 'submitScore', document: ops.SubmitScoreDocument, variables: { input: tied('ada', 700, [3, 20], 'tie-0') } },
  {
    operation: 'submitScores',
    document: ops.SubmitScoresDocument,
    variables: { inputs: [tied('Jürgen', 700, [3, 20], 'tie-1'), tied('bob', 500, [1, 0], 'tie-1')] },
  },
  // Refused alike by every sender: values missing, one too many, past a column's max; a score under minScore; values on a board without columns.
  { operation: 'submitScore', document: ops.SubmitScoreDocument, variables: { input: tied('ada', 700, undefined, 'bad') } },
  { operation: 'submitScore', document: ops.SubmitScoreDocument, variables: { input: tied('ada', 700, [3, 20, 1], 'bad') } },
  { operation: 'submitScore', document: ops.SubmitScoreDocument, variables: { input: tied('ada', 700, [4, 20], 'bad') } },
  { operation: 'submitScore', document: ops.SubmitScoreDocument, variables: { input: tied('ada', 9, [3, 20], 'bad') } },
  {
    operation: 'submitScores',
    document: ops.SubmitScoresDocument,
    variables: { inputs: [tied('ada', 700, [3, 20], 'bad'), { ...results[0], tieBreakValues: [1] }] },
  },
  // Every standing read of the tie-break board: ranks by the whole tuple, each with its values.
  { operation: 'top', document: ops.TopDocument, variables: { ...tieBucket, limit: 10 } },
  { operation: 'top', document: ops.TopDocument, variables: { ...tieBucket, limit: 10, rankStyle: 'COMPETITION', withAchievedAt: true } },
  { operation: 'standing', document: ops.StandingDocument, variables: { ...tieBucket, playerId: 'ada' } },
  { operation: 'around', document: ops.AroundDocument, variables: { ...tieBucket, playerId: 'bob', radius: 1, rankStyle: 'COMPETITION' } },
  { operation: 'friends', document: ops.FriendsDocument, variables: { ...tieBucket, playerId: 'ada' } },
  { operation: 'standings', document: ops.StandingsDocument, variables: { ...tieBucket, first: 3, after: null } },
  { operation: 'open', document: ops.OpenBoardDocument, variables: { ...tieBucket, playerId: 'Jürgen', limit: 3, radius: 1 } },
  { operation: 'board', document: ops.BoardDocument, variables: { id: TIE_BOARD, period: 'ALL_TIME', bucket: null, region: null } },
  { operation: 'submitScores', document: ops.SubmitScoresDocument, variables: { inputs: results } },
  {
    operation: 'upsertPlayer',
    document: ops.UpsertPlayerDocument,
    variables: { input: { id: '玩家一', displayName: '玩家 👩‍💻', avatarUrl: 'https://example.com/a.png' } },
  },
  { operation: 'setFriends', document: ops.SetFriendsDocument, variables: { playerId: 'ada', friendIds: ['bob', 'Jürgen', 'nobody'] } },
  { operation: 'top', document: ops.TopDocument, variables: { ...bucket, limit: 10 } },
  { operation: 'top', document: ops.TopDocument, variables: { ...regional, limit: 3 } },
  { operation: 'standing', document: ops.StandingDocument, variables: { ...bucket, playerId: 'ada' } },
  { operation: 'standing', document: ops.StandingDocument, variables: { ...bucket, playerId: 'nobody' } },
  { operation: 'around', document: ops.AroundDocument, variables: { ...regional, playerId: 'Jürgen', radius: 1 } },
  { operation: 'friends', document: ops.FriendsDocument, variables: { ...bucket, playerId: 'ada' } },
  { operation: 'standings', document: ops.StandingsDocument, variables: { ...bucket, first: 2, after: null } },
  // A board opened in one request (the client's OpenBoard): the top, my standing (aliased `me`) and the players around me.
  { operation: 'open', document: ops.OpenBoardDocument, variables: { ...bucket, playerId: 'ada', limit: 10, radius: 1 } },
  { operation: 'open', document: ops.OpenBoardDocument, variables: { ...regional, playerId: 'Jürgen', limit: 3, radius: 2, rankStyle: 'COMPETITION' } },
  { operation: 'open', document: ops.OpenBoardDocument, variables: { ...bucket, playerId: '玩家一', limit: 10, radius: 2, withMetadata: true } },
  { operation: 'open', document: ops.OpenBoardDocument, variables: { ...dense, playerId: 'bob', limit: 10, radius: 1, rankStyle: 'DENSE' } },
  { operation: 'open', document: ops.OpenBoardDocument, variables: { ...bucket, playerId: 'nobody', limit: 10, radius: 1 } },
  { operation: 'seasonResults', document: ops.SeasonResultsDocument, variables: { board: BOARD, season: 's1', first: 10, after: null } },
  { operation: 'player', document: ops.PlayerDocument, variables: { id: '玩家一' } },
  { operation: 'board', document: ops.BoardDocument, variables: { id: BOARD, period: 'DAILY', bucket: null, region: 'EU' } },
  { operation: 'boards', document: ops.BoardsDocument, variables: {} },
  { operation: 'rebuildBoard', document: ops.RebuildBoardDocument, variables: { ...bucket } },
  { operation: 'flagPlayer', document: ops.FlagPlayerDocument, variables: { playerId: 'cheater', reason: 'aimbot' } },
  { operation: 'unflagPlayer', document: ops.UnflagPlayerDocument, variables: { playerId: 'bob' } },
  { operation: 'deletePlayer', document: ops.DeletePlayerDocument, variables: { playerId: 'nobody-at-all' } },
  // Ranks as a board shares them among equal scores, asked for by the read.
  { operation: 'top', document: ops.TopDocument, variables: { ...bucket, limit: 10, rankStyle: 'COMPETITION' } },
  { operation: 'standing', document: ops.StandingDocument, variables: { ...bucket, playerId: 'ada', rankStyle: 'COMPETITION' } },
  { operation: 'around', document: ops.AroundDocument, variables: { ...regional, playerId: 'Jürgen', radius: 1, rankStyle: 'COMPETITION' } },
  { operation: 'friends', document: ops.FriendsDocument, variables: { ...bucket, playerId: 'ada', rankStyle: 'ORDINAL' } },
  { operation: 'standings', document: ops.StandingsDocument, variables: { ...bucket, first: 2, after: null, rankStyle: 'COMPETITION' } },
  {
    operation: 'seasonResults',
    document: ops.SeasonResultsDocument,
    variables: { board: BOARD, season: 's1', first: 10, after: null, rankStyle: 'COMPETITION' },
  },
  // With each standing's entry metadata, asked for by $withMetadata (the fragments' @include).
  { operation: 'submitScore', document: ops.SubmitScoreDocument, variables: { input: results[1], withMetadata: true } },
  { operation: 'submitScores', document: ops.SubmitScoresDocument, variables: { inputs: results, withMetadata: true } },
  { operation: 'top', document: ops.TopDocument, variables: { ...bucket, limit: 10, withMetadata: true } },
  { operation: 'standing', document: ops.StandingDocument, variables: { ...bucket, playerId: '玩家一', withMetadata: true } },
  { operation: 'around', document: ops.AroundDocument, variables: { ...regional, playerId: 'Jürgen', radius: 1, withMetadata: true } },
  { operation: 'friends', document: ops.FriendsDocument, variables: { ...bucket, playerId: 'ada', withMetadata: true } },
  { operation: 'standings', document: ops.StandingsDocument, variables: { ...bucket, first: 2, after: null, withMetadata: true } },
  { operation: 'seasonResults', document: ops.SeasonResultsDocument, variables: { board: BOARD, season: 's1', first: 10, after: null, withMetadata: true } },
  // With each standing's achievedAt, asked for by $withAchievedAt (the fragments' @include).
  { operation: 'submitScore', document: ops.SubmitScoreDocument, variables: { input: results[1], withAchievedAt: true } },
  { operation: 'top', document: ops.TopDocument, variables: { ...regional, limit: 10, withAchievedAt: true } },
  { operation: 'standing', document: ops.StandingDocument, variables: { ...bucket, playerId: 'ada', withAchievedAt: true } },
  { operation: 'around', document: ops.AroundDocument, variables: { ...bucket, playerId: 'bob', radius: 2, withAchievedAt: true, withMetadata: true } },
  { operation: 'open', document: ops.OpenBoardDocument, variables: { ...regional, playerId: 'ada', limit: 10, radius: 1, withAchievedAt: true } },
  { operation: 'standings', document: ops.StandingsDocument, variables: { ...bucket, first: 3, after: null, withAchievedAt: true } },
  { operation: 'top', document: ops.TopDocument, variables: { ...dense, limit: 10, rankStyle: 'DENSE' } },
  { operation: 'top', document: ops.TopDocument, variables: { ...dense, limit: 10, rankStyle: null } },
  { operation: 'standing', document: ops.StandingDocument, variables: { ...dense, playerId: 'bob', rankStyle: 'DENSE' } },
  { operation: 'around', document: ops.AroundDocument, variables: { ...dense, playerId: 'Jürgen', radius: 1, rankStyle: 'DENSE' } },
  { operation: 'friends', document: ops.FriendsDocument, variables: { ...dense, playerId: 'ada', rankStyle: 'DENSE' } },
  { operation: 'standings', document: ops.StandingsDocument, variables: { ...dense, first: 3, after: null, rankStyle: 'DENSE' } },
  {
    operation: 'seasonResults',
    document: ops.SeasonResultsDocument,
    variables: { board: DENSE_BOARD, season: 's1', first: 10, after: null, rankStyle: 'DENSE' },
  },
  // A closed day (issue 56): every read of it, from its frozen standings.
  { operation: 'top', document: ops.TopDocument, variables: { ...closed, limit: 10, withMetadata: true, withAchievedAt: true } },
  { operation: 'top', document: ops.TopDocument, variables: { ...closedEu, limit: 2, rankStyle: 'COMPETITION' } },
  { operation: 'standing', document: ops.StandingDocument, variables: { ...closed, playerId: '玩家一', withMetadata: true } },
  { operation: 'standing', document: ops.StandingDocument, variables: { ...closedEu, playerId: 'ohne-Profil-é' } },
  { operation: 'standing', document: ops.StandingDocument, variables: { ...closedEu, playerId: 'ada' } },
  { operation: 'around', document: ops.AroundDocument, variables: { ...closed, playerId: 'ada', radius: 1, rankStyle: 'COMPETITION' } },
  { operation: 'friends', document: ops.FriendsDocument, variables: { ...closed, playerId: 'ada' } },
  { operation: 'standings', document: ops.StandingsDocument, variables: { ...closed, first: 2, after: null, withAchievedAt: true } },
  { operation: 'open', document: ops.OpenBoardDocument, variables: { ...closedEu, playerId: 'Jürgen', limit: 3, radius: 1 } },
  { operation: 'board', document: ops.BoardDocument, variables: { id: CLOSED_BOARD, period: 'DAILY', bucket: CLOSED_LABEL, region: 'EU' } },
  // Its buckets, a player's history and a bucket's score distribution (issue 56).
  { operation: 'board', document: ops.PeriodBucketsDocument, variables: { board: CLOSED_BOARD, period: 'DAILY', region: 'EU', first: 4, after: null } },
  { operation: 'board', document: ops.PeriodBucketsDocument, variables: { board: CLOSED_BOARD, period: 'ALL_TIME', region: null, first: 20, after: null } },
  {
    operation: 'history',
    document: ops.HistoryDocument,
    variables: { board: CLOSED_BOARD, playerId: '玩家一', period: 'DAILY', region: null, first: 30, after: null },
  },
  {
    operation: 'history',
    document: ops.HistoryDocument,
    variables: {
      board: CLOSED_BOARD,
      playerId: 'ohne-Profil-é',
      period: 'DAILY',
      region: 'EU',
      first: 1,
      after: null,
      withMetadata: true,
      withAchievedAt: true,
    },
  },
  {
    operation: 'history',
    document: ops.HistoryDocument,
    variables: { board: CLOSED_BOARD, playerId: 'nobody', period: 'DAILY', region: null, first: 30, after: null },
  },
  { operation: 'scoreDistribution', document: ops.ScoreDistributionDocument, variables: { ...closed, bins: 7 } },
  { operation: 'scoreDistribution', document: ops.ScoreDistributionDocument, variables: { ...closedEu, bins: 1 } },
  { operation: 'scoreDistribution', document: ops.ScoreDistributionDocument, variables: { ...bucket, bins: 20 } },
  // Issue 57: a player's league round (placed, placed with metadata, not placed), its cohorts, its tiers; a tournament's attempts and joins.
  { operation: 'league', document: ops.LeagueDocument, variables: { board: LEAGUE_BOARD, playerId: 'ada', bucket: null } },
  { operation: 'league', document: ops.LeagueDocument, variables: { board: LEAGUE_BOARD, playerId: 'ohne-Profil-é', bucket: null, withMetadata: true } },
  { operation: 'league', document: ops.LeagueDocument, variables: { board: LEAGUE_BOARD, playerId: 'nobody', bucket: null } },
  { operation: 'cohort', document: ops.CohortDocument, variables: { board: LEAGUE_BOARD, tier: '青銅', number: 1, bucket: null, withAchievedAt: true } },
  { operation: 'cohort', document: ops.CohortDocument, variables: { board: LEAGUE_BOARD, tier: '青銅', number: 2, bucket: null } },
  { operation: 'cohort', document: ops.CohortDocument, variables: { board: LEAGUE_BOARD, tier: 'Gold', number: 1, bucket: null } },
  { operation: 'leagueTiers', document: ops.LeagueTiersDocument, variables: { board: LEAGUE_BOARD, bucket: null } },
  { operation: 'board', document: ops.BoardDocument, variables: { id: LEAGUE_BOARD, period: 'DAILY', bucket: null, region: 'EU' } },
  { operation: 'attemptsUsed', document: ops.AttemptsUsedDocument, variables: { board: TOURNAMENT, playerId: 'ada' } },
  { operation: 'attemptsUsed', document: ops.AttemptsUsedDocument, variables: { board: TOURNAMENT, playerId: 'bob' } },
  { operation: 'joinBoard', document: ops.JoinBoardDocument, variables: { board: TOURNAMENT, playerId: 'ada' } },
  // Refused alike by every sender, with the same reason: the tournament is full, cyd has not joined, ada has no attempt left today.
  { operation: 'joinBoard', document: ops.JoinBoardDocument, variables: { board: TOURNAMENT, playerId: 'cyd' } },
  { operation: 'submitScore', document: ops.SubmitScoreDocument, variables: { input: { board: TOURNAMENT, playerId: 'cyd', score: 5, matchId: 'cup-2' } } },
  { operation: 'submitScore', document: ops.SubmitScoreDocument, variables: { input: { board: TOURNAMENT, playerId: 'ada', score: 5, matchId: 'cup-2' } } },
  {
    operation: 'submitScores',
    document: ops.SubmitScoresDocument,
    variables: {
      inputs: [
        { board: TOURNAMENT, playerId: 'bob', score: 5, matchId: 'cup-3' },
        { board: TOURNAMENT, playerId: 'cyd', score: 5, matchId: 'cup-3' },
      ],
    },
  },
  { operation: 'league', document: ops.LeagueDocument, variables: { board: BOARD, playerId: 'ada', bucket: null } },
  // Issue 58: the closed day's awards (globally, and one a page in EU), a webhook's deliveries; refused alike: awards of an open day, an unknown webhook, an unknown delivery.
  { operation: 'awards', document: ops.AwardsDocument, variables: { ...closed, bucket: CLOSED_LABEL, first: 100, after: null, withMetadata: true } },
  { operation: 'awards', document: ops.AwardsDocument, variables: { ...closedEu, bucket: CLOSED_LABEL, first: 1, after: null, withAchievedAt: true } },
  { operation: 'awards', document: ops.AwardsDocument, variables: { ...closed, bucket: NOW.toISOString().slice(0, 10), first: 10, after: null } },
  { operation: 'webhookDeliveries', document: ops.WebhookDeliveriesDocument, variables: { webhook: 'no-such-hook', status: null, first: 10, after: null } },
  { operation: 'redeliverWebhook', document: ops.RedeliverWebhookDocument, variables: { delivery: 'msg_no-such-delivery' } },
  // Issue 60: a page backwards (the board's last rows), from a rank (and past the end), around and a board opened with fill, on 1 and 8 shards.
  ...PAGE_BOARDS.flatMap((board) => [
    { operation: 'standings', document: ops.StandingsDocument, variables: { ...pagesBucket(board), first: 50, last: 3, before: null } },
    { operation: 'standings', document: ops.StandingsDocument, variables: { ...pagesBucket(board), first: 3, fromRank: 4, rankStyle: 'COMPETITION' } },
    { operation: 'standings', document: ops.StandingsDocument, variables: { ...pagesBucket(board), first: 3, fromRank: 99 } },
    { operation: 'around', document: ops.AroundDocument, variables: { ...pagesBucket(board), playerId: '玩家一', radius: 2, fill: true } },
    { operation: 'open', document: ops.OpenBoardDocument, variables: { ...pagesBucket(board), playerId: 'cyd', limit: 3, radius: 1, fill: true } },
  ]),
  { operation: 'seasonResults', document: ops.SeasonResultsDocument, variables: { board: BOARD, season: 's1', first: 100, last: 2, before: null } },
  {
    operation: 'seasonResults',
    document: ops.SeasonResultsDocument,
    variables: { board: DENSE_BOARD, season: 's1', first: 2, fromRank: 2, rankStyle: 'DENSE' },
  },
  // Refused alike by every sender: the same code.
  { operation: 'standings', document: ops.StandingsDocument, variables: { ...bucket, first: 2, before: 'no-cursor' } },
  { operation: 'standings', document: ops.StandingsDocument, variables: { ...bucket, first: 2, fromRank: 2, last: 2 } },
  { operation: 'top', document: ops.TopDocument, variables: { ...bucket, board: 'no-such-board', limit: 10 } },
  { operation: 'top', document: ops.TopDocument, variables: { ...bucket, limit: 10, rankStyle: 'DENSE' } },
  { operation: 'scoreDistribution', document: ops.ScoreDistributionDocument, variables: { ...closed, bins: 0 } },
  {
    operation: 'history',
    document: ops.HistoryDocument,
    variables: { board: CLOSED_BOARD, playerId: 'ada', period: 'DAILY', region: 'eu', first: 30, after: null },
  },
];

/** The variables each generated document (test/helpers/generated-documents.ts) is sent with, by its operation. */
const GENERATED_VARIABLES: Record<string, Variables> = {
  submitScore: { input: results[1] },
  submitScores: { inputs: results.slice(0, 3) },
  // rankStyle as a game client passes it to some reads, and leaves it null (the board's) on others.
  top: { ...bucket, limit: 10, rankStyle: 'COMPETITION' },
  standing: { ...regional, playerId: 'bob' },
  around: { ...bucket, playerId: 'ada', radius: 2, rankStyle: 'COMPETITION' },
  open: { ...regional, playerId: 'Jürgen', limit: 5, radius: 1 },
  friends: { ...bucket, playerId: 'ada' },
  standings: { ...bucket, first: 3, after: null, rankStyle: 'COMPETITION' },
  seasonResults: { board: BOARD, season: 's1', first: 5, after: null },
  board: { id: BOARD, period: 'ALL_TIME', bucket: null, region: null },
  boards: { period: 'ALL_TIME', bucket: null, region: null },
  player: { id: 'Jürgen' },
  topChanged: { ...bucket, limit: 3, rankStyle: 'COMPETITION' },
  history: { board: CLOSED_BOARD, playerId: '玩家一', period: 'DAILY', region: 'EU', first: 5, after: null },
  scoreDistribution: { ...closed, bins: 5 },
  periodBuckets: { id: CLOSED_BOARD, period: 'DAILY', region: 'EU', first: 3, after: null },
  league: { board: LEAGUE_BOARD, playerId: 'ohne-Profil-é', bucket: null },
  cohort: { board: LEAGUE_BOARD, tier: '青銅', number: 1, bucket: null },
  leagueTiers: { board: LEAGUE_BOARD, bucket: null },
  attemptsUsed: { board: TOURNAMENT, playerId: 'ada' },
  joinBoard: { board: TOURNAMENT, playerId: 'bob' },
  cohortChanged: { board: LEAGUE_BOARD, playerId: 'Jürgen' },
};

// About 600 requests in all: generous bounds for a shared, busy machine.
describe('every operation through real client libraries, over POST, GET and graphql-ws', { timeout: 180_000 }, () => {
  let t: TestApp;
  let oracle: ReturnType<typeof plain>;
  const senders: Sender[] = [];
  const sentBy = new Map<string, Set<string>>();
  const noteSent = (operation: string, sender: Sender) => sentBy.set(operation, (sentBy.get(operation) ?? new Set()).add(sender.name.split(' over ')[0]!));

  beforeAll(async () => {
    // The clock stands in the closed day while it is seeded, then at NOW for everything else.
    const clock = movableClock({ startsAt: CLOSED_DAY, runs: false });
    t = await startTestApp({ now: clock.now, webhooks: { allowPrivate: true } });
    oracle = plain(t.url);
    const createClosed = await oracle.send(ops.CreateBoardDocument, {
      input: {
        id: CLOSED_BOARD,
        title: 'Daily, EU',
        maxScore: 1_000_000,
        periods: ['ALL_TIME', 'DAILY'],
        regions: ['EU'],
        regionTimeZones: [{ region: 'EU', timeZone: 'Europe/Berlin' }],
        closeGraceSeconds: 60,
        rewards: CLOSED_BANDS,
      },
    });
    expect(createClosed.codes).toEqual([]);
    expect((createClosed.data as ops.CreateBoardMutation).createBoard.closeGraceSeconds).toBe(60);
    expect((await oracle.send(ops.SubmitScoresDocument, { inputs: closedResults })).codes).toEqual([]);
    clock.advance(NOW.getTime() - CLOSED_DAY.getTime());
    await closeBuckets(t, CLOSED_BOARD, 'DAILY', [CLOSED_LABEL]);
    const create = await oracle.send(ops.CreateBoardDocument, {
      input: { id: BOARD, title: 'Arena', maxScore: 1_000_000, periods: ['ALL_TIME', 'DAILY', 'SEASON'], regions: ['EU'] },
    });
    expect(create.codes).toEqual([]);
    expect((await oracle.send(ops.StartSeasonDocument, { board: BOARD, name: 'One' })).codes).toEqual([]);
    expect(
      (await oracle.send(ops.SubmitScoresDocument, { inputs: results.map((r) => ({ ...r, achievedAt: null, matchId: `s-${r.matchId}` })) })).codes,
    ).toEqual([]);
    expect((await oracle.send(ops.CloseSeasonDocument, { board: BOARD })).codes).toEqual([]);
    const createDense = await oracle.send(ops.CreateBoardDocument, {
      input: { id: DENSE_BOARD, title: 'Arena, dense', maxScore: 1_000_000, periods: ['ALL_TIME', 'SEASON'], rankStyle: 'DENSE' },
    });
    expect(createDense.codes).toEqual([]);
    expect((await oracle.send(ops.StartSeasonDocument, { board: DENSE_BOARD, name: 'One' })).codes).toEqual([]);
    const denseInputs = results.map((r) => ({ ...r, board: DENSE_BOARD, region: null, achievedAt: null, matchId: `d-${r.matchId}` }));
    expect((await oracle.send(ops.SubmitScoresDocument, { inputs: denseInputs })).codes).toEqual([]);
    expect((await oracle.send(ops.CloseSeasonDocument, { board: DENSE_BOARD })).codes).toEqual([]);
    const createLeague = await oracle.send(ops.CreateBoardDocument, {
      input: {
        id: LEAGUE_BOARD,
        title: 'Liga',
        maxScore: 1_000_000,
        periods: ['ALL_TIME', 'DAILY'],
        regions: ['EU', 'na'],
        rankStyle: LEAGUE.rankStyle,
        league: { tiers: LEAGUE.tiers, cohortSize: LEAGUE.cohortSize, promote: LEAGUE.promote, demote: LEAGUE.demote, period: 'DAILY' },
      },
    });
    expect(createLeague.codes).toEqual([]);
    // One at a time: the order they arrive in is the order they are placed in.
    for (const [i, { playerId, score, region, achievedAt }] of leagueSent.entries()) {
      const input = { board: LEAGUE_BOARD, playerId, score, region, matchId: `liga-${i}`, achievedAt: achievedAt.toISOString() };
      expect((await oracle.send(ops.SubmitScoreDocument, { input })).codes).toEqual([]);
    }
    const createCup = await oracle.send(ops.CreateBoardDocument, {
      input: { id: TOURNAMENT, title: 'Cup', maxScore: 1_000, periods: ['ALL_TIME', 'DAILY'], joinRequired: true, maxPlayers: 2, maxAttempts: 1 },
    });
    expect(createCup.codes).toEqual([]);
    for (const playerId of ['ada', 'bob'])
      expect((await oracle.send(ops.JoinBoardDocument, { board: TOURNAMENT, playerId })).data).toEqual({ joinBoard: true });
    expect((await oracle.send(ops.SubmitScoreDocument, { input: { board: TOURNAMENT, playerId: 'ada', score: 5, matchId: 'cup-1' } })).codes).toEqual([]);
    expect((await oracle.send(ops.CreateBoardDocument, { input: { id: PASS_BOARD, title: 'Pass', maxScore: 1_000 } })).codes).toEqual([]);
    expect((await oracle.send(ops.SetFriendsDocument, { playerId: 'ohne-Profil-é', friendIds: ['Jürgen'] })).codes).toEqual([]);
    for (const [playerId, score] of [
      ['ohne-Profil-é', 500],
      ['Jürgen', 100],
    ] as const)
      expect((await oracle.send(ops.SubmitScoreDocument, { input: { board: PASS_BOARD, playerId, score, matchId: 'seed' } })).codes).toEqual([]);
    // Issue 59's board, its results one at a time in the order sent.
    const createTie = await oracle.send(ops.CreateBoardDocument, {
      input: { id: TIE_BOARD, title: 'Laps', maxScore: 1_000, minScore: 10, tieBreaks: TIE_COLUMNS },
    });
    expect(createTie.codes).toEqual([]);
    for (const [i, result] of tieSent.entries()) {
      const input = { ...tied(result.playerId, result.score, result.tieBreakValues, `laps-${i}`), achievedAt: result.achievedAt.toISOString() };
      expect((await oracle.send(ops.SubmitScoreDocument, { input })).codes).toEqual([]);
    }
    // Issue 60's page boards: the same results, one board of one shard and one of eight.
    for (const board of PAGE_BOARDS) {
      expect(
        (await oracle.send(ops.CreateBoardDocument, { input: { id: board, title: board, maxScore: 1_000, shards: board === 'Pages-1' ? 1 : 8 } })).codes,
      ).toEqual([]);
      const inputs = pagesSent.map(({ playerId, score, matchId, achievedAt }) => ({
        board,
        playerId,
        score,
        matchId,
        achievedAt: new Date(achievedAt).toISOString(),
      }));
      expect((await oracle.send(ops.SubmitScoresDocument, { inputs })).codes).toEqual([]);
    }
    // The first time each write is sent, by the oracle; every later send is a replay.
    for (const c of CASES) if (kindOf(c.document) === OperationTypeNode.MUTATION) await oracle.send(c.document, c.variables);
    for (const transport of ['post', 'get', 'ws'] as const) senders.push(typedClient(t.url, transport), apollo(t.url, transport), urql(t.url, transport));
  }, 120_000);
  afterAll(async () => {
    for (const sender of senders) await sender.close();
    await oracle?.close();
    await t?.close();
    // The list the closing note asks for: every operation of the contract and the libraries that sent it.
    console.info(
      [...sentBy]
        .sort()
        .map(([operation, by]) => `${operation}: ${[...by].sort().join(', ')}`)
        .join('\n'),
    );
  });

  /**
   * `run` by the plain documents on board `<prefix>-plain`, then by every sender on a board of its
   * own (`<prefix>-<i>`): each must answer what the plain documents answered, the board's id aside.
   * Answers the plain documents' answers.
   */
  async function onBoardsOfTheirOwn(prefix: string, run: (sender: Sender, id: string) => Promise<Answer[]>, operations: readonly string[]): Promise<Answer[]> {
    const plain = await run(oracle, `${prefix}-plain`);
    const expected = JSON.stringify(plain).replaceAll(`${prefix}-plain`, 'ID');
    for (const [i, sender] of senders.entries()) {
      const id = `${prefix}-${i}`;
      expect(JSON.stringify(await run(sender, id)).replaceAll(id, 'ID'), sender.name).toBe(expected);
      for (const operation of operations) noteSent(operation, sender);
    }
    return plain;
  }

  it('the typed client, Apollo Client and urql answer exactly what the plain document answers', async () => {
    for (const c of CASES) {
      const expected = await oracle.send(c.document, c.variables);
      expect(expected.data === null && expected.codes.length === 0, c.operation).toBe(false);
      for (const sender of senders) {
        expect(viewOf(await sender.send(c.document, c.variables)), `${c.operation} by ${sender.name}`).toEqual(viewOf(expected));
        noteSent(c.operation, sender);
      }
    }
  });

  it('a game client reading the top anonymously, again and again (answered before the pipeline once shared), gets what the plain document answers', async () => {
    // Anonymous over POST: the requests the fast path answers from a kept cached answer.
    const anonymous = [typedClient(t.url, 'post', null), apollo(t.url, 'post', null), urql(t.url, 'post', null)];
    try {
      for (const variables of [
        { ...bucket, limit: 10 },
        { ...regional, limit: 3 },
      ]) {
        const expected = viewOf(await oracle.send(ops.TopDocument, variables));
        const before = await observations(t, 'leaderboard_operation_seconds', { type: 'query', outcome: 'ok' });
        for (let i = 0; i < 3; i++) {
          for (const sender of anonymous) expect(viewOf(await sender.send(ops.TopDocument, variables)), `top by anonymous ${sender.name}`).toEqual(expected);
        }
        // Every answer observed as an operation, whichever way it was answered.
        expect(await observations(t, 'leaderboard_operation_seconds', { type: 'query', outcome: 'ok' })).toBe(before + 3 * anonymous.length);
      }
    } finally {
      for (const sender of anonymous) await sender.close();
    }
  });

  it('DENSE on the DENSE board: equal scores share a rank, the next rank follows (the cheater flagged)', async () => {
    const answer = (await oracle.send(ops.TopDocument, { ...dense, limit: 10, rankStyle: null })).data as ops.TopQuery;
    expect(answer.top.entries.map((entry) => [entry.rank, entry.score])).toEqual([
      [1, 900],
      [2, 700],
      [2, 700],
      [3, 500],
      [4, 100],
    ]);
  });

  it("the closed day's top is its results, highest first, equal scores in the order reached (COMPETITION shares their rank)", async () => {
    const answer = (await oracle.send(ops.TopDocument, { ...closed, limit: 10, rankStyle: 'COMPETITION' })).data as ops.TopQuery;
    expect(answer.top.entries.map((entry) => [entry.rank, entry.player.id, entry.score])).toEqual([
      [1, '玩家一', 800],
      [2, 'Jürgen', 600],
      [2, 'ada', 600],
      [4, 'ohne-Profil-é', 300],
      [5, 'bob', 100],
    ]);
    // A player who never got a profile has no name.
    expect(answer.top.entries[3]!.player.displayName).toBeNull();
  });

  it('the second page of standings, from the cursor of the first', async () => {
    const firstPage = (await oracle.send(ops.StandingsDocument, { ...bucket, first: 2, after: null })).data as ops.StandingsQuery;
    const variables = { ...bucket, first: 2, after: firstPage.standings.pageInfo.endCursor };
    const expected = await oracle.send(ops.StandingsDocument, variables);
    expect((expected.data as ops.StandingsQuery).standings.edges).toHaveLength(2);
    for (const sender of senders) expect(await sender.send(ops.StandingsDocument, variables), sender.name).toEqual(expected);
  });

  it('createBoard, updateBoard, startSeason and closeSeason, each sender on a board of its own, answer as the plain documents do', async () => {
    const lifecycle = async (sender: Sender, id: string) => [
      await sender.send(ops.CreateBoardDocument, {
        input: {
          id,
          title: 'Cup',
          maxScore: 100,
          periods: ['ALL_TIME', 'SEASON', 'DAILY'],
          regions: ['EU', 'na.west'],
          topSize: 5,
          shards: 2,
          retention: { daily: 3 },
          timeZone: 'Europe/Berlin',
          regionTimeZones: [{ region: 'na.west', timeZone: 'America/Los_Angeles' }],
          inactiveAfterDays: 30,
          closeGraceSeconds: 3_600,
        },
      }),
      await sender.send(ops.UpdateBoardDocument, {
        input: { id, title: 'Cup — finals', topSize: 8, addRegions: ['OCE'], maxScore: 127, inactiveAfterDays: 90, closeGraceSeconds: 0 },
      }),
      await sender.send(ops.StartSeasonDocument, { board: id, name: 'Opening', startsAt: null, endsAt: new Date(NOW.getTime() + 86_400_000).toISOString() }),
      await sender.send(ops.StartSeasonDocument, { board: id, name: 'Next', startsAt: new Date(NOW.getTime() + 86_400_000).toISOString(), endsAt: null }),
      await sender.send(ops.CloseSeasonDocument, { board: id }),
    ];
    const plain = await onBoardsOfTheirOwn('cup', lifecycle, ['createBoard', 'updateBoard', 'startSeason', 'closeSeason']);
    // The days as sent, then as updated: what every sender must carry both ways.
    expect((plain[0]!.data as ops.CreateBoardMutation).createBoard.inactiveAfterDays).toBe(30);
    expect((plain[1]!.data as ops.UpdateBoardMutation).updateBoard.inactiveAfterDays).toBe(90);
    expect((plain[0]!.data as ops.CreateBoardMutation).createBoard.closeGraceSeconds).toBe(3_600);
    expect((plain[1]!.data as ops.UpdateBoardMutation).updateBoard.closeGraceSeconds).toBe(0);
  });

  it('topChanged: the first view, over graphql-ws by every library and over SSE by the typed client', async () => {
    for (const variables of [
      { ...bucket, limit: 5, withMetadata: false },
      { ...bucket, limit: 5, withMetadata: true },
    ]) {
      const expected = await oracle.first(ops.TopChangedDocument, variables);
      const { entries } = (expected.data as ops.TopChangedSubscription).topChanged;
      expect(entries.length).toBe(5);
      // Selected only when asked for; then the 玩家一 the oracle holds carries the car it was sent with.
      expect(entries.some((entry) => 'metadata' in entry)).toBe(variables.withMetadata);
      for (const sender of senders) {
        expect(viewOf(await sender.first(ops.TopChangedDocument, variables)), sender.name).toEqual(viewOf(expected));
        noteSent('topChanged', sender);
      }
    }
  });

  it("the league's round is the oracle's: cohorts filled in arrival order, ranked within each (COMPETITION), its tiers counted", async () => {
    const round = leagueRound(LEAGUE, NOW.toISOString().slice(0, 10), leagueSent, new Map());
    // What the oracle works out, so that it can be read: Bronze 1 (ada's second result placed no one twice), Bronze 2.
    expect(round.cohorts.map((cohort) => [cohort.tier, cohort.number, cohort.entries.map((entry) => [entry.playerId, entry.rank])])).toEqual([
      [
        '青銅',
        1,
        [
          ['玩家一', 1],
          ['ada', 2],
          ['Jürgen', 3],
          ['ohne-Profil-é', 4],
          ['bob', 5],
        ],
      ],
      [
        '青銅',
        2,
        [
          ['EU', 1],
          ['cyd', 2],
        ],
      ],
    ]);
    for (const cohort of round.cohorts) {
      const answer = (await oracle.send(ops.CohortDocument, { board: LEAGUE_BOARD, tier: cohort.tier, number: cohort.number, bucket: null }))
        .data as ops.CohortQuery;
      expect(answer.cohort).toMatchObject({
        bucket: round.bucket,
        tier: cohort.tier,
        number: cohort.number,
        promotedThrough: cohort.promotedThrough,
        demotedFrom: cohort.demotedFrom,
        closed: false,
      });
      expect(answer.cohort!.entries.map(({ rank, score, percentile, player }) => ({ playerId: player.id, rank, score, percentile }))).toEqual(cohort.entries);
      for (const entry of cohort.entries) {
        const placed = ((await oracle.send(ops.LeagueDocument, { board: LEAGUE_BOARD, playerId: entry.playerId, bucket: null })).data as ops.LeagueQuery)
          .league;
        expect(placed, entry.playerId).toMatchObject({
          tier: cohort.tier,
          outcome: cohort.outcomes.get(entry.playerId),
          standing: { rank: entry.rank, score: entry.score, percentile: entry.percentile },
          cohort: { number: cohort.number },
        });
      }
    }
    expect(((await oracle.send(ops.LeagueTiersDocument, { board: LEAGUE_BOARD, bucket: null })).data as ops.LeagueTiersQuery).leagueTiers).toEqual(round.tiers);
    // The refusals carry their reasons.
    expect(await oracle.send(ops.JoinBoardDocument, { board: TOURNAMENT, playerId: 'cyd' })).toMatchObject({
      codes: ['BAD_USER_INPUT'],
      reasons: ['BOARD_FULL'],
    });
    expect(await oracle.send(ops.SubmitScoreDocument, { input: { board: TOURNAMENT, playerId: 'cyd', score: 5, matchId: 'cup-2' } })).toMatchObject({
      codes: ['BAD_USER_INPUT'],
      reasons: ['NOT_JOINED'],
    });
    expect(await oracle.send(ops.SubmitScoreDocument, { input: { board: TOURNAMENT, playerId: 'ada', score: 5, matchId: 'cup-2' } })).toMatchObject({
      codes: ['BAD_USER_INPUT'],
      reasons: ['NO_ATTEMPTS_LEFT'],
    });
  });

  it("the closed day's awards are the oracle's: band by band in rank order, Jürgen (first on 600) in both bands, ada in the top 50 % only", async () => {
    const answer = (await oracle.send(ops.AwardsDocument, { ...closed, first: 100, after: null })).data as ops.AwardsQuery;
    expect(answer.awards.edges.map(({ node }) => [node.band, node.standing.rank, node.standing.player.id, node.standing.score])).toEqual([
      ['Sieger', 1, '玩家一', 800],
      ['Sieger', 2, 'Jürgen', 600],
      ['Top 50 %', 1, '玩家一', 800],
      ['Top 50 %', 2, 'Jürgen', 600],
      ['Top 50 %', 3, 'ada', 600],
    ]);
    expect(new Set(answer.awards.edges.map(({ node }) => node.id)).size).toBe(5);
  });

  it('friendOvertook: the first event, over graphql-ws by every library and over SSE by the typed client, when a friend passes', async () => {
    const watchers = async () =>
      ((await t.app.parts.metrics.registry.getSingleMetric('leaderboard_friend_overtook_subscribers')?.get())?.values ?? []).reduce(
        (total, value) => total + value.value,
        0,
      );
    const variables = { board: PASS_BOARD, playerId: 'ohne-Profil-é', withAchievedAt: true };
    const before = await watchers();
    const firsts = [oracle, ...senders].map((sender) => sender.first(ops.FriendOvertookDocument, variables));
    // Every subscription served (its watcher counted, the board's channel listened to) before the pass.
    await until(
      async () => (await watchers()) >= before + firsts.length && (await t.app.parts.index.overtakenListeners(PASS_BOARD)) > 0,
      20_000,
      'every sender subscribed',
    );
    const achievedAt = at(1);
    expect(
      (await oracle.send(ops.SubmitScoreDocument, { input: { board: PASS_BOARD, playerId: 'Jürgen', score: 900, matchId: 'pass', achievedAt } })).codes,
    ).toEqual([]);
    const [expected, ...answers] = await Promise.all(firsts);
    expect(expected!.codes).toEqual([]);
    // The oracle of what was sent: Jürgen (900, now first) passed ohne-Profil-é (500, now second), on the one list.
    expect((expected!.data as ops.FriendOvertookSubscription).friendOvertook).toMatchObject({
      boardId: PASS_BOARD,
      period: 'ALL_TIME',
      bucket: 'all',
      by: { rank: 1, score: 900, achievedAt, player: { id: 'Jürgen' } },
      you: { rank: 2, score: 500, player: { id: 'ohne-Profil-é', displayName: null } },
    });
    for (const [i, sender] of senders.entries()) {
      expect(answers[i], sender.name).toEqual(expected);
      noteSent('friendOvertook', sender);
    }
  });

  it('createWebhook, webhooks and deleteWebhook, each sender a webhook of its own, answer as the plain documents do', async () => {
    const hooks = async (sender: Sender, id: string): Promise<Answer[]> => {
      const created = await sender.send(ops.CreateWebhookDocument, {
        input: { url: `http://127.0.0.1:9/${id}`, events: ['LEAGUE_ROUND_CLOSED', 'BUCKET_CLOSED'], boards: [LEAGUE_BOARD] },
      });
      const made = (created.data as ops.CreateWebhookMutation).createWebhook;
      const listed = await sender.send(ops.WebhooksDocument, {});
      const mine = (listed.data as ops.WebhooksQuery).webhooks.filter((hook) => hook.id === made.webhook.id);
      const deleted = await sender.send(ops.DeleteWebhookDocument, { id: made.webhook.id });
      const after = await sender.send(ops.WebhooksDocument, {});
      // Each sender's own id and time set aside: what is left must be the plain documents' answer.
      const own = (hook: ops.WebhookFieldsFragment) => ({ ...hook, id: hook.id === made.webhook.id, createdAt: hook.createdAt === made.webhook.createdAt });
      return [
        { data: { secret: /^whsec_/.test(made.secret), webhook: own(made.webhook) }, codes: created.codes },
        { data: mine.map(own), codes: listed.codes },
        deleted,
        { data: (after.data as ops.WebhooksQuery).webhooks.some((hook) => hook.id === made.webhook.id), codes: after.codes },
      ];
    };
    const plain = await onBoardsOfTheirOwn('hook', hooks, ['createWebhook', 'webhooks', 'deleteWebhook']);
    expect(plain.map(({ data }) => data)).toEqual([
      {
        secret: true,
        webhook: {
          id: true,
          url: 'http://127.0.0.1:9/hook-plain',
          events: ['LEAGUE_ROUND_CLOSED', 'BUCKET_CLOSED'],
          boards: [LEAGUE_BOARD],
          createdAt: true,
          failing: 0,
          lastDeliveredAt: null,
          lastError: null,
        },
      },
      [expect.objectContaining({ id: true, url: 'http://127.0.0.1:9/hook-plain' })],
      { deleteWebhook: true },
      false,
    ]);
  });

  it('cohortChanged: the first view, over graphql-ws by every library and over SSE by the typed client', async () => {
    for (const variables of [
      { board: LEAGUE_BOARD, playerId: 'ada', withMetadata: false },
      { board: LEAGUE_BOARD, playerId: 'ohne-Profil-é', withMetadata: true, withAchievedAt: true },
      { board: LEAGUE_BOARD, playerId: 'nobody' },
    ]) {
      const expected = await oracle.first(ops.CohortChangedDocument, variables);
      expect(expected.codes).toEqual([]);
      // The placement league answers.
      const league = await oracle.send(ops.LeagueDocument, { ...variables, bucket: null });
      expect((expected.data as ops.CohortChangedSubscription).cohortChanged).toEqual((league.data as ops.LeagueQuery).league);
      for (const sender of senders) {
        expect(await sender.first(ops.CohortChangedDocument, variables), sender.name).toEqual(expected);
        noteSent('cohortChanged', sender);
      }
    }
  });

  it("createBoard with a league and a tournament's settings, then joinBoard and attemptsUsed, each sender on a board of its own", async () => {
    const tournament = async (sender: Sender, id: string) => [
      await sender.send(ops.CreateBoardDocument, {
        input: {
          id,
          title: 'Liga-Cup',
          maxScore: 100,
          periods: ['ALL_TIME', 'WEEKLY', 'DAILY'],
          regions: ['EU'],
          league: { tiers: ['Or', 'Argent', '銅'], cohortSize: 10, period: 'WEEKLY' },
          joinRequired: true,
          maxPlayers: 1,
          maxAttempts: 3,
        },
      }),
      await sender.send(ops.JoinBoardDocument, { board: id, playerId: 'Zoë' }),
      await sender.send(ops.JoinBoardDocument, { board: id, playerId: 'Zoë' }),
      await sender.send(ops.JoinBoardDocument, { board: id, playerId: 'ohne-Profil-é' }),
      await sender.send(ops.AttemptsUsedDocument, { board: id, playerId: 'Zoë' }),
    ];
    const plain = await onBoardsOfTheirOwn('liga', tournament, ['createBoard', 'joinBoard', 'attemptsUsed']);
    expect((plain[0]!.data as ops.CreateBoardMutation).createBoard).toMatchObject({
      league: { tiers: ['Or', 'Argent', '銅'], cohortSize: 10, promote: 5, demote: 5, period: 'WEEKLY' },
      joinRequired: true,
      maxPlayers: 1,
      maxAttempts: 3,
      joined: 0,
    });
    expect(plain.slice(1).map(({ data, reasons }) => ({ data, reasons }))).toEqual([
      { data: { joinBoard: true }, reasons: [] },
      { data: { joinBoard: false }, reasons: [] },
      { data: null, reasons: ['BOARD_FULL'] },
      { data: { board: { id: 'liga-plain', joinRequired: true, maxPlayers: 1, maxAttempts: 3, joined: 1 }, attemptsUsed: 0 }, reasons: [] },
    ]);
  });

  it('the deepest documents generated clients make (client preset and Relay), sent by every library', async () => {
    for (const generated of [...GENERATED_DOCUMENTS, ...LEAGUE_DOCUMENTS]) {
      const document = parse(generated.query);
      const variables = GENERATED_VARIABLES[generated.operation]!;
      const subscription = generated.kind === 'subscription';
      const expected = viewOf(subscription ? await oracle.first(document, variables) : await oracle.send(document, variables));
      expect(expected.codes, generated.operationName).toEqual([]);
      for (const sender of senders) {
        // Apollo adds __typename inside an inline fragment on the Subscription root too, which makes a
        // second root field: invalid for any GraphQL server (a subscription selects one field). Apollo
        // users write the field itself, as the client preset's document (sent by Apollo above) does.
        if (subscription && generated.operationName.endsWith('Relay') && sender.name.startsWith('Apollo')) continue;
        const answer = viewOf(subscription ? await sender.first(document, variables) : await sender.send(document, variables));
        expect(answer, `${generated.operationName} by ${sender.name}`).toEqual(expected);
      }
    }
  });

  it('every query of the contract answers the same bytes run compiled (graphql-jit) as on graphql-js', async () => {
    const post = async (query: string, variables: Variables, key: string | undefined) =>
      (
        await fetch(`${t.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
          body: JSON.stringify({ query, variables }),
        })
      ).text();
    const cases: { name: string; query: string; variables: Variables; compiled: boolean }[] = [
      ...GENERATED_DOCUMENTS.filter((generated) => generated.kind === 'query').map((generated) => ({
        name: generated.operationName,
        query: generated.query,
        variables: GENERATED_VARIABLES[generated.operation]!,
        compiled: true,
      })),
      {
        name: 'aliases, and @include on a field of its own',
        query: `query Aliased($b: ID!, $with: Boolean!) { leader: top(board: $b, limit: 1) { e: entries { r: rank s: score } } me: standing(board: $b, playerId: "ada") { r: rank player { id displayName @include(if: $with) } } them: around(board: $b, playerId: "bob", radius: 1) { rank s: score } }`,
        variables: { b: BOARD, with: true },
        compiled: true,
      },
      {
        name: 'an error beside data, and nulls',
        query: `query Partial($b: ID!) { standing(board: $b, playerId: "nobody-here") { rank } board(id: "no-such") { id } size: board(id: $b) { size } gone: top(board: "no-such", limit: 1) { bucket } }`,
        variables: { b: BOARD },
        compiled: true,
      },
      {
        name: 'a merged field whose first copy @skip leaves out',
        query: `query Merged($b: ID!, $skip: Boolean!) { standing(board: $b, playerId: "ada") { score @skip(if: $skip) rank score } }`,
        variables: { b: BOARD, skip: true },
        compiled: false,
      },
      {
        name: 'a merged field under @include in a fragment',
        query: `query MergedInFragment($b: ID!, $with: Boolean!) { around(board: $b, playerId: "bob", radius: 1) { ...Place @include(if: $with) rank player { id } } } fragment Place on Standing { score rank }`,
        variables: { b: BOARD, with: false },
        compiled: false,
      },
    ];
    for (const { name, query, variables, compiled } of cases) {
      const document = parse(query);
      expect(notCompiledBecause(document, getOperationAST(document)!) === undefined, name).toBe(compiled);
      for (const key of [undefined, ADMIN_KEY]) {
        // Its second run compiles it (useGraphqlJit' runsBeforeCompiling), the third runs compiled
        // (a document of tops alone is a cached answer after its first run, so it is the same object).
        await post(query, variables, key);
        await post(query, variables, key);
        const repeated = await post(query, variables, key);
        // The same text with a comment of its own is a document never run before: graphql-js answers it.
        const fresh = await post(`${query}\n# graphql-js ${name} ${key ?? 'anonymous'}`, variables, key);
        expect(repeated, name).toBe(fresh);
      }
    }
  });

  it("the typed client's methods, as a game server and a game client call them, answer what the documents answer", async () => {
    const server = ops.createLeaderboardClient({ url: `${t.url}/graphql`, apiKey: ADMIN_KEY, webSocketImpl: WebSocket });
    const game = ops.createLeaderboardClient({ url: `${t.url}/graphql`, transport: 'get', webSocketImpl: WebSocket });
    const data = async (document: DocumentNode, variables: Variables) => (await oracle.send(document, variables)).data as Record<string, unknown>;
    try {
      expect(await server.submitScore(results[2]!)).toEqual((await data(ops.SubmitScoreDocument, { input: results[2] })).submitScore);
      expect(await server.submitScores(results)).toEqual((await data(ops.SubmitScoresDocument, { inputs: results })).submitScores);
      expect(await server.upsertPlayer({ id: 'ada', displayName: 'Ada' })).toEqual({ id: 'ada', displayName: 'Ada', avatarUrl: null });
      expect(await server.setFriends('ada', ['bob', 'Jürgen', 'nobody'])).toBe(3);
      const top = await game.top({ board: BOARD, region: 'EU', period: 'DAILY', limit: 3 });
      expect(viewOf({ data: top, codes: [] })).toEqual(viewOf({ data: (await data(ops.TopDocument, { ...regional, limit: 3 })).top, codes: [] }));
      expect(await game.standing({ board: BOARD, playerId: 'ada' })).toEqual((await data(ops.StandingDocument, { ...bucket, playerId: 'ada' })).standing);
      expect(await game.around({ board: BOARD, playerId: 'ada', radius: 1 })).toEqual(
        (await data(ops.AroundDocument, { ...bucket, playerId: 'ada', radius: 1 })).around,
      );
      for (const args of [
        { board: BOARD, playerId: 'ada' },
        { board: BOARD, period: 'DAILY' as const, region: 'EU', playerId: 'Jürgen', limit: 3, radius: 2 },
        { board: BOARD, playerId: '玩家一', radius: 1, withMetadata: true },
      ]) {
        const opened = await game.openBoard(args);
        const expected = await data(ops.OpenBoardDocument, { ...bucket, withMetadata: false, ...args, limit: args.limit ?? 10, radius: args.radius ?? 5 });
        expect(viewOf({ data: opened, codes: [] })).toEqual(viewOf({ data: expected, codes: [] }));
        // Read together, each part answers what it answers read alone.
        expect(opened.me?.player.id).toBe(args.playerId);
        expect(opened.me).toEqual(await game.standing(args));
        expect(opened.around).toEqual(await game.around({ radius: 5, ...args }));
        expect(viewOf({ data: opened.top, codes: [] })).toEqual(viewOf({ data: await game.top({ limit: 10, ...args }), codes: [] }));
      }
      expect(await game.friends({ board: BOARD, playerId: 'ada' })).toEqual((await data(ops.FriendsDocument, { ...bucket, playerId: 'ada' })).friends);
      expect(await game.player('ada')).toEqual({ id: 'ada', displayName: 'Ada', avatarUrl: null });
      // Entry metadata when asked for: the object 玩家一's best result was sent with; none for ada's.
      expect((await game.standing({ board: BOARD, playerId: '玩家一', withMetadata: true }))?.metadata).toEqual(results[0]!.metadata);
      expect((await game.standing({ board: BOARD, playerId: 'ada', withMetadata: true }))?.metadata).toBeNull();
      expect(await game.standing({ board: BOARD, playerId: '玩家一' })).not.toHaveProperty('metadata');
      // achievedAt when asked for: the time ada's best result was sent with; left out by default.
      const best = results.filter((r) => r.playerId === 'ada').sort((a, b) => b.score - a.score)[0]!;
      expect((await game.standing({ board: BOARD, playerId: 'ada', withAchievedAt: true }))?.achievedAt).toBe(best.achievedAt);
      expect(await game.standing({ board: BOARD, playerId: 'ada' })).not.toHaveProperty('achievedAt');
      expect((await server.submitScore(results[0]!, { withAchievedAt: true })).standings.map((s) => s.standing.achievedAt)).toContain(results[0]!.achievedAt);
      const [answered] = await server.submitScores([results[0]!], { withMetadata: true });
      expect(answered!.standings.find((s) => s.period === 'ALL_TIME')!.standing.metadata).toEqual(results[0]!.metadata);
      const pages: ops.StandingsQuery['standings'][] = [];
      for await (const page of game.standingsPages({ board: BOARD, first: 2 })) pages.push(page);
      const all = (await data(ops.StandingsDocument, { ...bucket, first: 100, after: null })).standings as ops.StandingsQuery['standings'];
      expect(pages.flatMap((page) => page.edges.map((edge) => edge.node))).toEqual(all.edges.map((edge) => edge.node));
      expect(pages.length).toBe(Math.ceil(all.edges.length / 2));
      for (const over of ['ws', 'sse'] as const) {
        for await (const view of game.topChanged({ board: BOARD, limit: 3 }, over)) {
          expect(view.entries.map((entry) => entry.player.id)).toEqual(all.edges.slice(0, 3).map((edge) => edge.node.player.id));
          break;
        }
      }
      // A closed day (issue 56): its buckets, a player's history in it, its score distribution, read by the methods.
      expect(await game.periodBuckets({ board: CLOSED_BOARD, period: 'DAILY', region: 'EU', first: 3 })).toEqual(
        (await data(ops.PeriodBucketsDocument, { board: CLOSED_BOARD, period: 'DAILY', region: 'EU', first: 3, after: null })).board,
      );
      const history = await game.history({ board: CLOSED_BOARD, playerId: '玩家一', period: 'DAILY', withMetadata: true });
      expect(history).toEqual(
        (
          await data(ops.HistoryDocument, {
            board: CLOSED_BOARD,
            playerId: '玩家一',
            period: 'DAILY',
            region: null,
            first: 30,
            after: null,
            withMetadata: true,
          })
        ).history,
      );
      expect(
        history.edges.map(({ node }) => [node.bucket.bucket, node.bucket.closed, node.standing.rank, node.standing.score, node.standing.metadata]),
      ).toEqual([[CLOSED_LABEL, true, 1, 800, { car: 'R8' }]]);
      const bins = await game.scoreDistribution({ board: CLOSED_BOARD, period: 'DAILY', bucket: CLOSED_LABEL, bins: 7 });
      expect(bins).toEqual((await data(ops.ScoreDistributionDocument, { ...closed, bins: 7 })).scoreDistribution);
      expect([bins.length, bins[0]!.from, bins.at(-1)!.to, bins.reduce((total, bin) => total + bin.players, 0)]).toEqual([7, 100, 800, closedResults.length]);
      expect(await game.scoreDistribution({ board: BOARD })).toEqual((await data(ops.ScoreDistributionDocument, { ...bucket, bins: 20 })).scoreDistribution);
      await expect(game.scoreDistribution({ board: CLOSED_BOARD, bins: 101 })).rejects.toMatchObject({ name: 'LeaderboardError', code: 'BAD_USER_INPUT' });
      // A period the board does not keep.
      await expect(game.periodBuckets({ board: CLOSED_BOARD, period: 'WEEKLY' })).rejects.toMatchObject({ name: 'LeaderboardError', code: 'BAD_USER_INPUT' });
      // A board id no board could have is an unknown board (ids are opaque: issue 53).
      await expect(game.top({ board: 'no:such', limit: 1 })).rejects.toMatchObject({ name: 'LeaderboardError', code: 'NOT_FOUND' });
      // Issue 57: a player's league round, a cohort, the round's tiers, a tournament's attempts, a join, the live cohort.
      const league = (await data(ops.LeagueDocument, { board: LEAGUE_BOARD, playerId: 'ada', bucket: null })).league;
      expect(await game.league({ board: LEAGUE_BOARD, playerId: 'ada' })).toEqual(league);
      expect(await game.cohort({ board: LEAGUE_BOARD, tier: '青銅', number: 2, withMetadata: true })).toEqual(
        (await data(ops.CohortDocument, { board: LEAGUE_BOARD, tier: '青銅', number: 2, bucket: null, withMetadata: true })).cohort,
      );
      expect(await game.leagueTiers({ board: LEAGUE_BOARD })).toEqual((await data(ops.LeagueTiersDocument, { board: LEAGUE_BOARD, bucket: null })).leagueTiers);
      expect(await game.attemptsUsed(TOURNAMENT, 'ada')).toEqual({
        board: { id: TOURNAMENT, joinRequired: true, maxPlayers: 2, maxAttempts: 1, joined: 2 },
        attemptsUsed: 1,
      });
      expect(await server.joinBoard(TOURNAMENT, 'bob')).toBe(false);
      const full: unknown = await server.joinBoard(TOURNAMENT, 'cyd').catch((error: unknown) => error);
      expect(full).toBeInstanceOf(ops.LeaderboardError);
      expect([(full as ops.LeaderboardError).code, ops.reasonOf(full as ops.LeaderboardError)]).toEqual(['BAD_USER_INPUT', 'BOARD_FULL']);
      for (const over of ['ws', 'sse'] as const) {
        for await (const view of game.cohortChanged({ board: LEAGUE_BOARD, playerId: 'ada' }, over)) {
          expect(view, over).toEqual(league);
          break;
        }
      }
      // Issue 58: the closed day's awards, one page and every page two at a time, by the methods.
      const awards = (await data(ops.AwardsDocument, { ...closed, first: 100, after: null })).awards as ops.AwardsQuery['awards'];
      expect(await game.awards({ board: CLOSED_BOARD, period: 'DAILY', bucket: CLOSED_LABEL })).toEqual(awards);
      const awardPages: ops.AwardsQuery['awards'][] = [];
      for await (const page of game.awardsPages({ board: CLOSED_BOARD, period: 'DAILY', bucket: CLOSED_LABEL, first: 2 })) awardPages.push(page);
      expect(awardPages.flatMap((page) => page.edges.map((edge) => edge.node))).toEqual(awards.edges.map((edge) => edge.node));
      expect(awardPages.length).toBe(Math.ceil(awards.edges.length / 2));
      await expect(game.awards({ board: CLOSED_BOARD, period: 'DAILY', bucket: NOW.toISOString().slice(0, 10) })).rejects.toMatchObject({
        name: 'LeaderboardError',
        code: 'BAD_USER_INPUT',
      });
    } finally {
      await server.close();
      await game.close();
    }
  });

  it("the tie-break board's reads are the oracle's: ranks by (score, stars, fewest moves), then time, then id bytes; each standing's tieBreakValues", async () => {
    type Row = { rank: number; score: number; tieBreakValues: number[]; player: { id: string } };
    const rowsOf = (entries: readonly Row[]) => entries.map((entry) => [entry.rank, entry.player.id, entry.score, entry.tieBreakValues]);
    for (const rankStyle of ['ORDINAL', 'COMPETITION'] as const) {
      const expected = tieBreakStandings('HIGH_FIRST', TIE_COLUMNS, tieSent, rankStyle).map((row) => [row.rank, row.playerId, row.score, row.tieBreakValues]);
      if (rankStyle === 'ORDINAL') expect(expected.map(([, id]) => id)).toEqual(['cyd', '玩家一', 'Jürgen', 'ada', 'bob', 'Bob', 'ohne-Profil-é']);
      for (const sender of senders) {
        const top = await sender.send(ops.TopDocument, { ...tieBucket, limit: 10, rankStyle });
        expect(rowsOf((top.data as ops.TopQuery).top.entries as Row[]), `${rankStyle} by ${sender.name}`).toEqual(expected);
        const standing = await sender.send(ops.StandingDocument, { ...tieBucket, playerId: 'Bob', rankStyle });
        expect(rowsOf([(standing.data as ops.StandingQuery).standing as Row]), sender.name).toEqual(expected.filter(([, id]) => id === 'Bob'));
      }
      // As the deepest generated documents ask for them (__typename everywhere), by every library.
      for (const document of TIE_BREAK_DOCUMENTS.filter((one) => one.operation === 'top')) {
        for (const sender of senders) {
          const answer = await sender.send(parse(document.query), { ...tieBucket, limit: 10, rankStyle });
          expect(rowsOf((answer.data as ops.TopQuery).top.entries as Row[]), `${document.operationName} by ${sender.name}`).toEqual(expected);
        }
      }
    }
    const board = (await oracle.send(ops.BoardDocument, { id: TIE_BOARD, period: 'ALL_TIME', bucket: null, region: null })).data as ops.BoardQuery;
    expect(board.board).toMatchObject({ tieBreaks: TIE_COLUMNS, minScore: 10, suspectAbove: null, suspectJump: null, resultRate: null });
    // A refused result names the field and records nothing.
    const refused = await oracle.send(ops.SubmitScoreDocument, { input: tied('ada', 900, [4, 0], 'refused') });
    expect(refused.codes).toEqual(['BAD_USER_INPUT']);
    expect(((await oracle.send(ops.StandingDocument, { ...tieBucket, playerId: 'ada' })).data as ops.StandingQuery).standing).toMatchObject({ score: 700 });
  });

  it('resultRate: each sender on a board of its own, a result, its replay (not counted), then RATE_LIMITED with extensions.retryAfterMs, answered as the plain documents do', async () => {
    const perSeconds = 3_600;
    const rated = async (sender: Sender, id: string) => {
      const answers = [await sender.send(ops.CreateBoardDocument, { input: { id, title: 'Rate', maxScore: 100, resultRate: { results: 1, perSeconds } } })];
      const result = (matchId: string, score: number) => ({ input: { board: id, playerId: 'ada', score, matchId } });
      for (const [matchId, score] of [
        ['r1', 10],
        ['r1', 10],
        ['r2', 20],
      ] as const)
        answers.push(await sender.send(ops.SubmitScoreDocument, result(matchId, score)));
      answers.push(await sender.send(ops.SubmitScoresDocument, { inputs: [result('r3', 30).input] }));
      answers.push(await sender.send(ops.StandingDocument, { board: id, period: 'ALL_TIME', bucket: null, region: null, playerId: 'ada' }));
      return answers;
    };
    const plainAnswers = await onBoardsOfTheirOwn('Rate', rated, ['createBoard', 'submitScore', 'submitScores', 'standing']);
    expect(plainAnswers.map((answer) => answer.codes)).toEqual([[], [], [], ['RATE_LIMITED'], ['RATE_LIMITED'], []]);
    expect(plainAnswers[3]!.retryAfterMs).toEqual(['whole ms']);
    expect((plainAnswers[5]!.data as ops.StandingQuery).standing).toMatchObject({ score: 10, tieBreakValues: [] });
    // Its value: within the window (the app's clock stands still here).
    const refused = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}` },
      body: JSON.stringify({ query: 'mutation { submitScore(input: { board: "Rate-plain", playerId: "ada", score: 40, matchId: "r4" }) { duplicate } }' }),
    });
    const { errors } = (await refused.json()) as FormattedExecutionResult;
    const retryAfterMs = errors?.[0]?.extensions?.retryAfterMs as number;
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(perSeconds * 1000);
    // The typed client hands it over as it is.
    const server = ops.createLeaderboardClient({ url: `${t.url}/graphql`, apiKey: ADMIN_KEY });
    try {
      const limited: unknown = await server.submitScore({ board: 'Rate-plain', playerId: 'ada', score: 50, matchId: 'r5' }).catch((error: unknown) => error);
      expect(limited).toBeInstanceOf(ops.LeaderboardError);
      expect((limited as ops.LeaderboardError).code).toBe('RATE_LIMITED');
      expect(ops.retryAfterMsOf(limited as ops.LeaderboardError)).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });

  it('createApiKey with boards, each sender a key of its own: ApiKey.boards as sent; a key scoped to the tie-break board, used by every library, is refused FORBIDDEN elsewhere', async () => {
    /** An answer with what each call makes anew (the key, its id, when) set aside. */
    const masked = (answer: Answer) => JSON.stringify(answer).replace(/"(key|id|createdAt)":"[^"]*"/g, '"$1":"<$1>"');
    const create = (sender: Sender, name: string) => sender.send(ops.CreateApiKeyDocument, { name, role: 'SERVER', boards: [TIE_BOARD, PASS_BOARD] });
    const plainKey = await create(oracle, 'laps-plain');
    expect(plainKey.codes).toEqual([]);
    expect((plainKey.data as ops.CreateApiKeyMutation).createApiKey.apiKey).toMatchObject({
      name: 'laps-plain',
      role: 'SERVER',
      boards: [TIE_BOARD, PASS_BOARD],
    });
    for (const [i, sender] of senders.entries()) {
      expect(masked(await create(sender, `laps-${i}`)).replace(`laps-${i}`, 'NAME'), sender.name).toBe(masked(plainKey).replace('laps-plain', 'NAME'));
      noteSent('createApiKey', sender);
    }
    for (const document of TIE_BREAK_DOCUMENTS.filter((one) => one.operation === 'createApiKey')) {
      const answer = await oracle.send(parse(document.query), { name: document.operationName, role: 'ADMIN', boards: [TIE_BOARD] });
      expect(answer.codes, 'an admin key with boards').toEqual(['BAD_USER_INPUT']);
    }
    const key = (plainKey.data as ops.CreateApiKeyMutation).createApiKey.key;
    const scoped = (['post', 'get', 'ws'] as const).flatMap((transport) => [
      typedClient(t.url, transport, key),
      apollo(t.url, transport, key),
      urql(t.url, transport, key),
    ]);
    try {
      for (const [i, sender] of scoped.entries()) {
        expect((await sender.send(ops.SubmitScoreDocument, { input: tied(`scoped-${i}`, 50, [1, 1], 'scoped') })).codes, sender.name).toEqual([]);
        for (const [what, document, variables] of [
          ['submitScore elsewhere', ops.SubmitScoreDocument, { input: { ...results[0], playerId: `scoped-${i}` } }],
          [
            'a batch with one input elsewhere',
            ops.SubmitScoresDocument,
            { inputs: [tied(`scoped-${i}`, 60, [1, 1], 'b'), { ...results[0], playerId: `scoped-${i}` }] },
          ],
          ['joinBoard elsewhere', ops.JoinBoardDocument, { board: TOURNAMENT, playerId: `scoped-${i}` }],
        ] as const)
          expect((await sender.send(document, variables)).codes, `${what} by ${sender.name}`).toEqual(['FORBIDDEN']);
        expect((await sender.send(ops.UpsertPlayerDocument, { input: { id: `scoped-${i}`, displayName: 'Scoped' } })).codes, sender.name).toEqual([]);
      }
      // Nothing of the refused writes recorded: no scoped player on the board elsewhere, the batch's good input neither.
      const scopedOn = async (where: typeof bucket) => {
        const { standings } = (await oracle.send(ops.StandingsDocument, { ...where, first: 100, after: null })).data as ops.StandingsQuery;
        return standings.edges.filter(({ node }) => node.player.id.startsWith('scoped-')).map(({ node }) => [node.player.id, node.score]);
      };
      expect(await scopedOn(bucket)).toEqual([]);
      expect((await scopedOn(tieBucket)).sort()).toEqual(scoped.map((_, i) => [`scoped-${i}`, 50]).sort());
    } finally {
      for (const sender of scoped) await sender.close();
    }
  });

  it("issue 60, the typed client's methods on 1 and 8 shards: a walk up from the end, pages from a rank, around and a board opened with fill, the oracle's rows", async () => {
    const game = ops.createLeaderboardClient({ url: `${t.url}/graphql`, transport: 'get', webSocketImpl: WebSocket });
    type Node = { rank: number; score: number; player: { id: string } };
    type Page = ops.StandingsQuery['standings'];
    const rowsOf = (nodes: readonly Node[]) => nodes.map(({ rank, player, score }) => [rank, player.id, score]);
    const pageOf = (page: Page) => {
      expect(page.pageInfo.startCursor).toBe(page.edges[0]?.cursor ?? null);
      expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)?.cursor ?? null);
      return {
        rows: rowsOf(page.edges.map((edge) => edge.node)),
        flags: { hasPreviousPage: page.pageInfo.hasPreviousPage, hasNextPage: page.pageInfo.hasNextPage },
      };
    };
    try {
      for (const board of PAGE_BOARDS) {
        const rows = boardRows({ order: 'HIGH_FIRST', aggregate: 'BEST' }, pagesSent);
        const walked: ReturnType<typeof pageOf>[] = [];
        for await (const page of game.standingsPagesBackward({ board, last: 3 })) walked.push(pageOf(page));
        expect(walked, board).toEqual(backwardPages(rows, 3));
        for (const fromRank of [1, 4, 8, 9]) {
          const page = await game.standings({ board, first: 3, fromRank });
          expect(pageOf(page), `${board} fromRank ${fromRank}`).toEqual(pageAt(rows, fromRank - 1, 3));
          if (page.edges.length === 0) continue;
          // Its cursors go on either way.
          expect(pageOf(await game.standings({ board, last: 2, before: page.pageInfo.startCursor })), `${board} above ${fromRank}`).toEqual(
            pageAt(rows, Math.max(0, fromRank - 3), Math.min(2, fromRank - 1)),
          );
          expect(pageOf(await game.standings({ board, first: 2, after: page.pageInfo.endCursor })), `${board} below ${fromRank}`).toEqual(
            pageAt(rows, fromRank + 2, 2),
          );
        }
        for (const [, playerId] of rows) {
          expect(rowsOf(await game.around({ board, playerId, radius: 2, fill: true })), `${board} around ${playerId}`).toEqual(
            aroundRows(rows, playerId, 2, true),
          );
        }
        expect(rowsOf(await game.around({ board, playerId: 'cyd', radius: 2 })), `${board} around cyd, not filled`).toEqual(aroundRows(rows, 'cyd', 2, false));
        const opened = await game.openBoard({ board, playerId: 'cyd', radius: 1, fill: true, limit: 2 });
        expect([rowsOf(opened.top.entries), rowsOf(opened.around)], board).toEqual([rows.slice(0, 2), aroundRows(rows, 'cyd', 1, true)]);
      }
    } finally {
      await game.close();
    }
  });

  it('issue 60, previousRank: each sender on a SUM board of its own (COMPETITION, 8 shards), single results, a batch with a player twice, a replay, as the plain documents answer and the oracle says', async () => {
    const r = (playerId: string, score: number, matchId: string, minutes: number): SentScore => ({
      playerId,
      score,
      matchId,
      achievedAt: NOW.getTime() - (60 - minutes) * 60_000,
    });
    const steps: SentScore[][] = [
      [r('ada', 100, 'm1', 1)],
      [r('Jürgen', 200, 'm1', 2), r('ada', 150, 'm2', 3), r('ohne-Profil-é', 250, 'm1', 4), r('Jürgen', 100, 'm2', 5)],
      [r('ada', 150, 'm2', 3)],
      [r('ohne-Profil-é', 50, 'm2', 6)],
    ];
    const model = { order: 'HIGH_FIRST', aggregate: 'SUM' } as const;
    const prev = async (sender: Sender, id: string) => {
      const answers = [
        await sender.send(ops.CreateBoardDocument, { input: { id, title: 'Prev', maxScore: 1_000, aggregate: 'SUM', rankStyle: 'COMPETITION', shards: 8 } }),
      ];
      for (const step of steps) {
        const inputs = step.map(({ playerId, score, matchId, achievedAt }) => ({
          board: id,
          playerId,
          score,
          matchId,
          achievedAt: new Date(achievedAt).toISOString(),
        }));
        answers.push(
          step.length === 1 ? await sender.send(ops.SubmitScoreDocument, { input: inputs[0] }) : await sender.send(ops.SubmitScoresDocument, { inputs }),
        );
      }
      return answers;
    };
    const plainAnswers = await onBoardsOfTheirOwn('Prev', prev, ['createBoard', 'submitScore', 'submitScores']);
    const answered = plainAnswers.slice(1).flatMap((answer) => {
      const data = answer.data as Partial<ops.SubmitScoreMutation & ops.SubmitScoresMutation>;
      return (data.submitScores ?? [data.submitScore!]).map((payload) => payload.standings.map((standing) => standing.previousRank));
    });
    expect(answered).toEqual(previousRanks(model, steps.flat(), 'COMPETITION').map((rank) => [rank]));
    // The typed client's method hands it over as answered: ada's rank before her third result.
    const server = ops.createLeaderboardClient({ url: `${t.url}/graphql`, apiKey: ADMIN_KEY });
    try {
      const third = r('ada', 400, 'm3', 7);
      const payload = await server.submitScore({
        board: 'Prev-plain',
        playerId: 'ada',
        score: 400,
        matchId: 'm3',
        achievedAt: new Date(third.achievedAt).toISOString(),
      });
      expect(payload.standings.map((standing) => [standing.previousRank, standing.standing.rank])).toEqual([
        [previousRanks(model, [...steps.flat(), third], 'COMPETITION').at(-1), 1],
      ]);
    } finally {
      await server.close();
    }
  });

  it('issue 60, removeEntry, entryRemovals and deleteBoard: each sender on a board of its own (8 shards), answered as the plain documents do, as the oracle says', async () => {
    const sent: SentScore[] = ['ada', 'bob', 'ohne-Profil-é'].map((playerId, i) => ({
      playerId,
      score: 300 - 100 * i,
      matchId: 'gone',
      achievedAt: NOW.getTime() - 60_000 + i,
    }));
    const lifecycle = async (sender: Sender, id: string) => {
      const board = pagesBucket(id);
      const answers = [
        await sender.send(ops.CreateBoardDocument, { input: { id, title: 'Gone', maxScore: 1_000, shards: 8 } }),
        await sender.send(ops.SubmitScoresDocument, {
          inputs: sent.map(({ playerId, score, matchId, achievedAt }) => ({
            board: id,
            playerId,
            score,
            matchId,
            achievedAt: new Date(achievedAt).toISOString(),
          })),
        }),
        await sender.send(ops.RemoveEntryDocument, { board: id, playerId: 'bob', reason: 'Cheat 👾' }),
        await sender.send(ops.RemoveEntryDocument, { board: id, playerId: 'bob', reason: 'again' }),
        await sender.send(ops.StandingsDocument, { ...board, first: 50, last: 5, before: null }),
      ];
      // removedAt is each call's own moment: checked, then set aside.
      const removals = await sender.send(ops.EntryRemovalsDocument, { board: id });
      for (const removal of (removals.data as ops.EntryRemovalsQuery | null)?.entryRemovals ?? []) {
        expect(Date.parse(removal.removedAt), 'removedAt').toBeGreaterThan(0);
        removal.removedAt = 'a date-time';
      }
      answers.push(removals);
      answers.push(await sender.send(ops.DeleteBoardDocument, { id }));
      // Reads answer NOT_FOUND within a second.
      answers.push(
        await settle(
          () => sender.send(ops.TopDocument, { ...board, limit: 5 }),
          (answer) => answer.codes[0] === 'NOT_FOUND',
          1_000,
          50,
        ),
      );
      answers.push(await sender.send(ops.DeleteBoardDocument, { id }));
      answers.push(await sender.send(ops.CreateBoardDocument, { input: { id, title: 'Again', maxScore: 1_000, shards: 8 } }));
      answers.push(await sender.send(ops.StandingsDocument, { ...board, first: 50, last: 5, before: null }));
      // A cursor is signed for its board, so each sender's differ: set aside.
      return JSON.parse(JSON.stringify(answers).replace(/"(cursor|startCursor|endCursor)":"[^"]+"/g, '"$1":"a cursor"')) as Answer[];
    };
    const plainAnswers = await onBoardsOfTheirOwn('Gone', lifecycle, ['removeEntry', 'entryRemovals', 'deleteBoard', 'standings', 'top']);
    const data = plainAnswers.map((answer) => answer.data as Record<string, unknown> | null);
    expect([data[2], data[3]]).toEqual([{ removeEntry: true }, { removeEntry: false }]);
    const left = boardRows(
      { order: 'HIGH_FIRST', aggregate: 'BEST' },
      sent.filter((result) => result.playerId !== 'bob'),
    );
    const page = (data[4] as ops.StandingsQuery).standings;
    expect(page.edges.map(({ node }) => [node.rank, node.player.id, node.score])).toEqual(left);
    expect(data[5]).toEqual({
      entryRemovals: [
        { board: 'Gone-plain', playerId: 'bob', reason: 'Cheat 👾', removedBy: expect.stringMatching(/\S/) as unknown, removedAt: 'a date-time', results: 1 },
      ],
    });
    expect([data[6], plainAnswers[7]!.codes, data[8]]).toEqual([{ deleteBoard: true }, ['NOT_FOUND'], { deleteBoard: false }]);
    expect((data[10] as ops.StandingsQuery).standings).toEqual({
      edges: [],
      pageInfo: { hasNextPage: false, endCursor: null, hasPreviousPage: false, startCursor: null },
    });
  });

  it("issue 60's documents as generated clients write them (client preset and Relay), sent by every library over POST, GET or graphql-ws in turn", async () => {
    const pages = pagesBucket('Pages-8');
    const variables: Record<string, Variables> = {
      StandingsBackward: { ...pages, last: 3, before: null, rankStyle: 'COMPETITION' },
      StandingsFromRank: { ...pages, first: 3, fromRank: 3, rankStyle: null },
      SeasonResultsBackward: { board: BOARD, season: 's1', last: 3, before: null, rankStyle: null },
      AroundFill: { ...pages, playerId: 'cyd', radius: 2, fill: true, rankStyle: 'COMPETITION' },
      // Replays (the oracle sent them first): answered with the standings as they are now, previousRank null.
      SubmitScoreRankChange: { input: results[1] },
      SubmitScoresRankChange: { inputs: results.slice(0, 3) },
      // Nothing there, for every sender alike.
      DeleteBoardGenerated: { id: 'never-made' },
      RemoveEntryGenerated: { board: 'Pages-8', playerId: 'nobody', reason: 'none' },
      EntryRemovalsGenerated: { board: 'Pages-8', playerId: null, first: 10 },
    };
    // Each document by the three libraries over one transport, the transport taking turns.
    for (const [i, generated] of BOTH_WAYS_DOCUMENTS.entries()) {
      const document = parse(generated.query);
      const sent = variables[generated.operationName.replace(/Relay$/, '')]!;
      const expected = await oracle.send(document, sent);
      expect(expected.codes, generated.operationName).toEqual([]);
      const transport = (['post', 'get', 'ws'] as const)[i % 3]!;
      for (const sender of senders.filter((one) => one.name.endsWith(`over ${transport}`)))
        expect(await sender.send(document, sent), `${generated.operationName} by ${sender.name}`).toEqual(expected);
    }
  });

  it('every operation of the contract was sent by the typed client, Apollo Client and urql (the tests above, in order)', () => {
    const contract = buildSchema(readFileSync(new URL('../contract/api.graphql', import.meta.url), 'utf8'));
    const operations = [contract.getQueryType(), contract.getMutationType(), contract.getSubscriptionType()].flatMap((type) =>
      Object.keys(type?.getFields() ?? {}),
    );
    expect(operations.length).toBeGreaterThan(20);
    for (const operation of operations) expect([...(sentBy.get(operation) ?? [])].sort(), operation).toEqual(['Apollo Client', 'typed client', 'urql']);
  });

  it('each library sent what it is known for: Apollo and urql added __typename, GET carried the queries, graphql-ws everything', () => {
    const byName = new Map(senders.map((sender) => [sender.name, sender.sent.join('\n')]));
    for (const library of ['Apollo Client', 'urql']) {
      for (const transport of ['post', 'get', 'ws']) expect(byName.get(`${library} over ${transport}`), `${library} over ${transport}`).toContain('__typename');
    }
    for (const name of byName.keys()) {
      const sent = byName.get(name)!;
      if (name.endsWith('over get')) expect(sent, name).toMatch(/^GET .*query=/m);
      if (name.endsWith('over ws'))
        expect(
          sent.split('\n').filter((line) => /^(POST|GET) /.test(line)),
          name,
        ).toEqual([]);
      if (name.endsWith('over post')) expect(sent, name).toMatch(/^POST /m);
    }
  });
});
