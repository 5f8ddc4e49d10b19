/**
 * The leaderboard's typed client, for a Node game server or a browser game: every operation of the
 * service as a TypedDocumentNode (generated from the committed schema.graphql by graphql-codegen,
 * see codegen.ts), and a thin wrapper that sends them over HTTP (POST, or GET for queries, which a
 * CDN may cache) or graphql-ws, and subscribes to topChanged over graphql-ws or server-sent events.
 */
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import {
  type DocumentNode,
  type FormattedExecutionResult,
  type GraphQLFormattedError,
  Kind,
  type OperationDefinitionNode,
  OperationTypeNode,
  print,
} from 'graphql';
import { createClient as createSseClient } from 'graphql-sse';
import { type Client as WsClient, createClient as createWsClient } from 'graphql-ws';
import {
  AroundDocument,
  type AroundQueryVariables,
  AttemptsUsedDocument,
  AwardsDocument,
  type AwardsQuery,
  type AwardsQueryVariables,
  CohortChangedDocument,
  type CohortChangedSubscription,
  CohortDocument,
  type CohortQueryVariables,
  FriendOvertookDocument,
  type FriendOvertookSubscription,
  FriendsDocument,
  type FriendsQueryVariables,
  HistoryDocument,
  type HistoryQueryVariables,
  JoinBoardDocument,
  LeagueDocument,
  type LeagueQueryVariables,
  LeagueTiersDocument,
  OpenBoardDocument,
  type OpenBoardQueryVariables,
  PeriodBucketsDocument,
  type PeriodBucketsQueryVariables,
  PlayerDocument,
  ScoreDistributionDocument,
  SetFriendsDocument,
  StandingDocument,
  type StandingQueryVariables,
  StandingsDocument,
  type StandingsQuery,
  type StandingsQueryVariables,
  SubmitScoreDocument,
  type SubmitScoreInput,
  SubmitScoresDocument,
  TopChangedDocument,
  type TopChangedSubscription,
  type TopChangedSubscriptionVariables,
  TopDocument,
  type TopQueryVariables,
  UpsertPlayerDocument,
  type PlayerInput,
} from './generated.js';

export * from './generated.js';

/** How requests travel. */
export type Transport = 'post' | 'get' | 'ws';

export interface LeaderboardClientOptions {
  /** The service's GraphQL endpoint, e.g. `http://127.0.0.1:4000/graphql`. */
  url: string;
  /**
   * A game-server or admin key, sent as `Authorization: Bearer <key>` on every request and in the
   * graphql-ws connection's payload. Default: none (reads and subscriptions need no key; never
   * ship a key in a game client).
   */
  apiKey?: string;
  /**
   * How queries and mutations travel: `post`, `get` (queries over GET, cacheable for a second;
   * mutations still POST, as GET may not change anything) or `ws` (one graphql-ws socket for
   * everything). Default: `post`.
   */
  transport?: Transport;
  /** The fetch to use. Default: `globalThis.fetch`. */
  fetch?: typeof fetch;
  /**
   * The WebSocket implementation for graphql-ws: a browser's own, or the `ws` package's on Node 20.
   * Default: `globalThis.WebSocket`.
   */
  webSocketImpl?: unknown;
  /**
   * Send each operation by its registered id (`documentId`; over graphql-ws and server-sent events
   * the APQ extension) instead of its text: smaller requests, and what a service that runs
   * registered documents only (PERSISTED_DOCUMENTS_ONLY) takes. The ids are the SHA-256 of each
   * document's text, as `npm run client:generate` registers them. Default false.
   */
  persisted?: boolean;
}

/** A GraphQL error answered by the service, with the contract's code (`BAD_USER_INPUT`, `UNAVAILABLE`, ...). */
export class LeaderboardError extends Error {
  override name = 'LeaderboardError';
  constructor(
    /** The first error's `extensions.code`, or undefined when it has none. */
    readonly code: string | undefined,
    /** Every error of the answer. */
    readonly errors: readonly GraphQLFormattedError[],
  ) {
    super(errors.map((error) => error.message).join('; '));
  }
}

/** Why the service refused: the first error's `extensions.reason` (NOT_JOINED, NO_ATTEMPTS_LEFT, BOARD_FULL), when it gives one. */
export const reasonOf = (error: LeaderboardError): string | undefined => error.errors[0]?.extensions?.reason as string | undefined;

/**
 * How long to wait before a board takes the player's next result, in ms: RATE_LIMITED's
 * `extensions.retryAfterMs` (a board's resultRate, issue 59), when the first error gives one.
 */
export const retryAfterMsOf = (error: LeaderboardError): number | undefined => {
  const ms = error.errors[0]?.extensions?.retryAfterMs;
  return typeof ms === 'number' ? ms : undefined;
};

/** Where a board's standings are read: every read takes these; period ALL_TIME and the current bucket when left out. */
export interface BucketArgs {
  board: string;
  period?: TopQueryVariables['period'];
  bucket?: string | null;
  region?: string | null;
  /** Whether each standing carries its entry metadata (`metadata`, read from PostgreSQL only then). Default false. */
  withMetadata?: boolean;
  /**
   * Whether each standing carries `achievedAt`, when the player reached the score, to the
   * millisecond. Where the index keeps the time coarser than that (ALL_TIME and SEASON on a board
   * with large scores) the service looks it up in PostgreSQL (one query shared by the requests of
   * a moment). Default false.
   */
  withAchievedAt?: boolean;
}

/** Which closed list's awards (issue 58): a board's bucket of a period, globally or in a region; `first` per page. */
export type AwardsArgs = Pick<AwardsQueryVariables, 'board' | 'period' | 'bucket'> &
  Pick<BucketArgs, 'region' | 'withMetadata' | 'withAchievedAt'> & { first?: number };

/** How a submission is answered. */
export interface SubmitOptions {
  /** Whether the answered standings carry their entry metadata. Default false. */
  withMetadata?: boolean;
  /** Whether the answered standings carry `achievedAt` (free here: the submission holds it). Default false. */
  withAchievedAt?: boolean;
}

/** One printed text per document: printing is the costly part of preparing a request. */
const printed = new WeakMap<DocumentNode, string>();
function textOf(document: DocumentNode): string {
  let text = printed.get(document);
  if (text === undefined) {
    text = print(document);
    printed.set(document, text);
  }
  return text;
}

/** One id per document: the SHA-256 (hex) of its printed text, as the service registers it. */
const ids = new WeakMap<DocumentNode, Promise<string>>();
function idOf(document: DocumentNode): Promise<string> {
  let id = ids.get(document);
  if (id === undefined) {
    id = globalThis.crypto.subtle
      .digest('SHA-256', new TextEncoder().encode(textOf(document)))
      .then((digest) => [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join(''));
    ids.set(document, id);
  }
  return id;
}

/** The document of a request: its text, or (persisted) its id, as a POST body or a GET's search parameters name it. */
async function documentOf(document: DocumentNode, persisted: boolean): Promise<{ query: string } | { documentId: string }> {
  return persisted ? { documentId: await idOf(document) } : { query: textOf(document) };
}

/** A graphql-ws or server-sent events payload's document: its text, or (persisted) an empty query and the APQ extension naming it. */
async function payloadOf(document: DocumentNode, persisted: boolean) {
  if (!persisted) return { query: textOf(document) };
  return { query: '', extensions: { persistedQuery: { version: 1, sha256Hash: await idOf(document) } } };
}

function operationOf(document: DocumentNode): OperationDefinitionNode {
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (!operation) throw new TypeError('The document holds no operation.');
  return operation;
}

/** The operation's name as a request names it: left out when the operation has none. */
function operationNameOf(document: DocumentNode): { operationName?: string } {
  const name = operationOf(document).name?.value;
  return name === undefined ? {} : { operationName: name };
}

function dataOf<R>(result: FormattedExecutionResult<R>): R {
  if (result.errors?.length) throw new LeaderboardError(result.errors[0]?.extensions?.code as string | undefined, result.errors);
  if (result.data === null || result.data === undefined) throw new LeaderboardError(undefined, [{ message: 'The answer held no data.' }]);
  return result.data;
}

/**
 * A client of one leaderboard service. Nothing connects until the first request; `close()` closes
 * the graphql-ws socket if one was opened.
 */
export function createLeaderboardClient(options: LeaderboardClientOptions) {
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const transport = options.transport ?? 'post';
  const authorization: Record<string, string> = options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {};
  let ws: WsClient | undefined;
  const socket = () =>
    (ws ??= createWsClient({
      url: options.url.replace(/^http/, 'ws'),
      webSocketImpl: options.webSocketImpl,
      connectionParams: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : undefined,
      lazy: true,
    }));

  const persisted = options.persisted ?? false;

  async function overHttp<R>(document: DocumentNode, variables: unknown): Promise<FormattedExecutionResult<R>> {
    const operation = operationOf(document);
    const body = { ...(await documentOf(document, persisted)), operationName: operation.name?.value, variables };
    let response: Response;
    if (transport === 'get' && operation.operation === OperationTypeNode.QUERY) {
      const url = new globalThis.URL(options.url);
      if ('query' in body) url.searchParams.set('query', body.query);
      else url.searchParams.set('documentId', body.documentId);
      if (body.operationName) url.searchParams.set('operationName', body.operationName);
      url.searchParams.set('variables', JSON.stringify(variables ?? {}));
      response = await fetchImpl(url, { headers: { accept: 'application/graphql-response+json, application/json', ...authorization } });
    } else {
      response = await fetchImpl(options.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', ...authorization },
        body: JSON.stringify(body),
      });
    }
    return (await response.json()) as FormattedExecutionResult<R>;
  }

  async function overWs<R>(document: DocumentNode, variables: unknown): Promise<FormattedExecutionResult<R>> {
    const payload = {
      ...(await payloadOf(document, persisted)),
      ...operationNameOf(document),
      variables: variables as Record<string, unknown>,
    };
    const results = socket().iterate<R>(payload);
    for await (const result of results) return result as FormattedExecutionResult<R>;
    throw new LeaderboardError(undefined, [{ message: 'The socket answered nothing.' }]);
  }

  /** Sends any operation of the service (queries and mutations) and answers its data, or throws a LeaderboardError. */
  async function request<R, V>(document: TypedDocumentNode<R, V>, variables: V): Promise<R> {
    return dataOf(transport === 'ws' ? await overWs<R>(document, variables) : await overHttp<R>(document, variables));
  }

  /** What each answered standing carries beside its place: the operations' @include variables. */
  const answered = (options: SubmitOptions) => ({ withMetadata: options.withMetadata ?? false, withAchievedAt: options.withAchievedAt ?? false });
  const bucket = (args: BucketArgs) => ({
    board: args.board,
    period: args.period ?? 'ALL_TIME',
    bucket: args.bucket ?? null,
    region: args.region ?? null,
    ...answered(args),
  });

  /**
   * The views of a subscription, as an async iterator; `return()` (a `break` out of `for await`)
   * unsubscribes. Over graphql-ws (default) or server-sent events (`sse`, one HTTP response per
   * subscription, for networks that block WebSockets).
   */
  function subscribe<R, V>(document: TypedDocumentNode<R, V>, variables: V, over: 'ws' | 'sse' = 'ws'): AsyncIterableIterator<R> {
    // Started at the first next(): the payload (a persisted document's id) is computed asynchronously.
    let started: AsyncIterableIterator<FormattedExecutionResult<R>> | undefined;
    const start = async () => {
      const payload = {
        ...(await payloadOf(document, persisted)),
        ...operationNameOf(document),
        variables: variables as Record<string, unknown>,
      };
      return (started ??=
        over === 'ws'
          ? (socket().iterate<R>(payload) as AsyncIterableIterator<FormattedExecutionResult<R>>)
          : (createSseClient({ url: options.url, fetchFn: fetchImpl, headers: authorization, retryAttempts: 0 }).iterate<R>(payload) as AsyncIterableIterator<
              FormattedExecutionResult<R>
            >));
    };
    return {
      [Symbol.asyncIterator]() {
        return this;
      },
      async next() {
        const next = await (started ?? (await start())).next();
        return next.done ? { done: true, value: undefined } : { done: false, value: dataOf(next.value) };
      },
      async return() {
        await started?.return?.();
        return { done: true, value: undefined };
      },
    };
  }

  const awardsVariables = (args: AwardsArgs, first: number, after: string | null): AwardsQueryVariables => ({
    board: args.board,
    period: args.period,
    bucket: args.bucket,
    region: args.region ?? null,
    first,
    after,
    ...answered(args),
  });

  return {
    request,
    subscribe,

    /** Game servers: records one result; answers the player's standing in every bucket it went to. */
    submitScore: async (input: SubmitScoreInput, options: SubmitOptions = {}) =>
      (await request(SubmitScoreDocument, { input, ...answered(options) })).submitScore,
    /** Game servers: up to 1,000 results (every player of a match) in one transaction, answered in order. */
    submitScores: async (inputs: SubmitScoreInput[], options: SubmitOptions = {}) =>
      (await request(SubmitScoresDocument, { inputs, ...answered(options) })).submitScores,
    /** Game servers: creates or updates a player's profile. */
    upsertPlayer: async (input: PlayerInput) => (await request(UpsertPlayerDocument, { input })).upsertPlayer,
    /** Game servers: replaces a player's friend list; answers how many friends it holds. */
    setFriends: async (playerId: string, friendIds: string[]) => (await request(SetFriendsDocument, { playerId, friendIds })).setFriends,
    /**
     * Game servers, tournaments: joins a player to a board; true when newly joined, false when
     * already in. A LeaderboardError (BAD_USER_INPUT, `reasonOf(error)` BOARD_FULL) once maxPlayers have joined.
     */
    joinBoard: async (board: string, playerId: string) => (await request(JoinBoardDocument, { board, playerId })).joinBoard,

    /** The first `limit` standings (default 10) of a bucket. */
    top: async (args: BucketArgs & { limit?: number }) => (await request(TopDocument, { ...bucket(args), limit: args.limit ?? 10 })).top,
    /** One player's standing, or null when they have no score there. */
    standing: async (args: BucketArgs & Pick<StandingQueryVariables, 'playerId'>) =>
      (await request(StandingDocument, { ...bucket(args), playerId: args.playerId })).standing,
    /**
     * The player and up to `radius` (default 5) players either side; with `fill`, a player near
     * either end still gets 2 × radius + 1 rows (the whole board when smaller), the window shifted
     * inward: a fixed number of rows for an end-of-match screen.
     */
    around: async (args: BucketArgs & Pick<AroundQueryVariables, 'playerId'> & { radius?: number; fill?: boolean }) =>
      (await request(AroundDocument, { ...bucket(args), playerId: args.playerId, radius: args.radius ?? 5, fill: args.fill ?? false })).around,
    /**
     * What a screen shows when a player opens a board, in one request: the first `limit` standings
     * (default 10) as `top`, the player's own as `me` (null when they have no score there) and up
     * to `radius` (default 5) players either side of them as `around` (`fill`: as around's).
     */
    openBoard: async (args: BucketArgs & Pick<OpenBoardQueryVariables, 'playerId'> & { limit?: number; radius?: number; fill?: boolean }) =>
      request(OpenBoardDocument, {
        ...bucket(args),
        playerId: args.playerId,
        limit: args.limit ?? 10,
        radius: args.radius ?? 5,
        fill: args.fill ?? false,
      }),
    /** The player and their friends, each with their rank on the whole board. */
    friends: async (args: BucketArgs & Pick<FriendsQueryVariables, 'playerId'>) =>
      (await request(FriendsDocument, { ...bucket(args), playerId: args.playerId })).friends,
    /**
     * One page of a bucket's standings, top first whichever way it goes: `first` rows (default 50)
     * strictly after `after`; or the `last` rows just before `before` (the bucket's last rows
     * without one); or `first` rows from the 1-based position `fromRank` (an empty page past the
     * end). Each page's startCursor and endCursor continue the walk either way.
     */
    standings: async (args: BucketArgs & Partial<Pick<StandingsQueryVariables, 'after' | 'before' | 'last' | 'fromRank'>> & { first?: number }) =>
      (
        await request(StandingsDocument, {
          ...bucket(args),
          first: args.first ?? 50,
          after: args.after ?? null,
          before: args.before ?? null,
          last: args.last ?? null,
          fromRank: args.fromRank ?? null,
        })
      ).standings,
    /** Every page of a bucket's standings, from the first, `first` rows each (default 1,000). */
    async *standingsPages(args: BucketArgs & { first?: number }): AsyncGenerator<StandingsQuery['standings']> {
      let after: string | null = null;
      for (;;) {
        const page: StandingsQuery['standings'] = (await request(StandingsDocument, { ...bucket(args), first: args.first ?? 1_000, after })).standings;
        yield page;
        if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) return;
        after = page.pageInfo.endCursor;
      }
    },
    /**
     * Every page of a bucket's standings walking up from its end, `last` rows each (default
     * 1,000): the bottom page first, each page's rows top first.
     */
    async *standingsPagesBackward(args: BucketArgs & { last?: number }): AsyncGenerator<StandingsQuery['standings']> {
      let before: string | null = null;
      for (;;) {
        // `first` is the document's own (the schema's default): with `last` given it sizes nothing.
        const variables = { ...bucket(args), first: 50, last: args.last ?? 1_000, before };
        const page: StandingsQuery['standings'] = (await request(StandingsDocument, variables)).standings;
        yield page;
        if (!page.pageInfo.hasPreviousPage || !page.pageInfo.startCursor) return;
        before = page.pageInfo.startCursor;
      }
    },
    /**
     * When the period's open bucket resets (`nextReset`: null for ALL_TIME, and for SEASON with no
     * open season or one without an end) and one page of its buckets that can still be read, newest
     * first, the open one first (default 20), strictly after `after`; null when there is no such board.
     */
    periodBuckets: async (args: Pick<PeriodBucketsQueryVariables, 'board' | 'period'> & { region?: string | null; first?: number; after?: string | null }) =>
      (
        await request(PeriodBucketsDocument, {
          board: args.board,
          period: args.period,
          region: args.region ?? null,
          first: args.first ?? 20,
          after: args.after ?? null,
        })
      ).board,
    /**
     * A player's final standing in each closed bucket of a period where they had one, newest first,
     * one page (default 30) strictly after `after`: what a chart of their rank over the days,
     * weeks, months or seasons draws.
     */
    history: async (
      args: Pick<HistoryQueryVariables, 'board' | 'playerId' | 'period'> &
        Pick<BucketArgs, 'region' | 'withMetadata' | 'withAchievedAt'> & { first?: number; after?: string | null },
    ) =>
      (
        await request(HistoryDocument, {
          board: args.board,
          playerId: args.playerId,
          period: args.period,
          region: args.region ?? null,
          first: args.first ?? 30,
          after: args.after ?? null,
          ...answered(args),
        })
      ).history,
    /** How a bucket's scores spread: `bins` (1 to 100, default 20) equal-width bins from its lowest to its highest score, each with how many players it holds. */
    scoreDistribution: async (args: Omit<BucketArgs, 'withMetadata' | 'withAchievedAt'> & { bins?: number }) =>
      (
        await request(ScoreDistributionDocument, {
          board: args.board,
          period: args.period ?? 'ALL_TIME',
          bucket: args.bucket ?? null,
          region: args.region ?? null,
          bins: args.bins ?? 20,
        })
      ).scoreDistribution,
    /** A player's profile, or null. */
    player: async (id: string) => (await request(PlayerDocument, { id })).player,
    /**
     * A player's league round (the open one when `bucket` is left out): their tier, their cohort
     * (null until their first result of the round) ranked within it, their standing there, and
     * where the round's close takes them (or would, if it closed now).
     */
    league: async (args: Pick<LeagueQueryVariables, 'board' | 'playerId'> & Pick<BucketArgs, 'bucket' | 'withMetadata' | 'withAchievedAt'>) =>
      (await request(LeagueDocument, { board: args.board, playerId: args.playerId, bucket: args.bucket ?? null, ...answered(args) })).league,
    /** One cohort of a round (the open one when `bucket` is left out), by its tier and number (from 1); null when there is no such cohort. */
    cohort: async (args: Pick<CohortQueryVariables, 'board' | 'tier' | 'number'> & Pick<BucketArgs, 'bucket' | 'withMetadata' | 'withAchievedAt'>) =>
      (await request(CohortDocument, { board: args.board, tier: args.tier, number: args.number, bucket: args.bucket ?? null, ...answered(args) })).cohort,
    /** Each tier of a league round, best first, with how many cohorts and players it holds. */
    leagueTiers: async (args: { board: string; bucket?: string | null }) =>
      (await request(LeagueTiersDocument, { board: args.board, bucket: args.bucket ?? null })).leagueTiers,
    /**
     * A tournament's settings (board: null when there is no such board) and how many results the
     * player has used in the open bucket of the board's shortest period (`attemptsUsed`).
     */
    attemptsUsed: async (board: string, playerId: string) => request(AttemptsUsedDocument, { board, playerId }),
    /**
     * One page (default 100) of a closed bucket's awards, strictly after `after`: band by band in
     * rank order, each with its stable id (grant each once) and the player's final standing. A
     * LeaderboardError (BAD_USER_INPUT) while the bucket is open.
     */
    awards: async (args: AwardsArgs & { after?: string | null }) =>
      (await request(AwardsDocument, awardsVariables(args, args.first ?? 100, args.after ?? null))).awards,
    /** Every page of a closed bucket's awards, from the first, `first` each (default 1,000): what a game's backend walks to grant a close's prizes. */
    async *awardsPages(args: AwardsArgs): AsyncGenerator<AwardsQuery['awards']> {
      let after: string | null = null;
      for (;;) {
        const page: AwardsQuery['awards'] = (await request(AwardsDocument, awardsVariables(args, args.first ?? 1_000, after))).awards;
        yield page;
        if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) return;
        after = page.pageInfo.endCursor;
      }
    },

    /** The live top of a bucket: the current view at once, then each change; `break` out of the loop to unsubscribe. */
    async *topChanged(args: BucketArgs & { limit?: number }, over: 'ws' | 'sse' = 'ws'): AsyncGenerator<TopChangedSubscription['topChanged']> {
      const variables: TopChangedSubscriptionVariables = { ...bucket(args), limit: args.limit ?? 10 };
      for await (const view of subscribe(TopChangedDocument, variables, over)) yield view.topChanged;
    },

    /**
     * A player's league round, live: their placement at once, then a new view each time their
     * cohort's entries change, and when they are placed; `break` out of the loop to unsubscribe.
     */
    async *cohortChanged(
      args: { board: string; playerId: string } & Pick<BucketArgs, 'withMetadata' | 'withAchievedAt'>,
      over: 'ws' | 'sse' = 'ws',
    ): AsyncGenerator<CohortChangedSubscription['cohortChanged']> {
      for await (const view of subscribe(CohortChangedDocument, { board: args.board, playerId: args.playerId, ...answered(args) }, over))
        yield view.cohortChanged;
    },

    /**
     * Each time one of the player's friends (those the player lists with setFriends) passes them on
     * the board, in ALL_TIME and in the board's shortest period: both standings as they are now.
     * No view at once; `break` out of the loop to unsubscribe.
     */
    async *friendOvertook(
      args: { board: string; playerId: string } & Pick<BucketArgs, 'withMetadata' | 'withAchievedAt'>,
      over: 'ws' | 'sse' = 'ws',
    ): AsyncGenerator<FriendOvertookSubscription['friendOvertook']> {
      for await (const event of subscribe(FriendOvertookDocument, { board: args.board, playerId: args.playerId, ...answered(args) }, over))
        yield event.friendOvertook;
    },

    /** Closes the graphql-ws socket, if one was opened. */
    async close(): Promise<void> {
      await ws?.dispose();
      ws = undefined;
    },
  };
}

export type LeaderboardClient = ReturnType<typeof createLeaderboardClient>;
