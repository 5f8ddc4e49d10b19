/**
 * The documents a code generator or a normalising client sends for each operation of the contract,
 * at their deepest: Relay's and graphql-codegen's fragment masking (a fragment per type, nested,
 * the operation's own selection a spread on the root type), Apollo's `__typename` on every
 * selection, inline fragments, variables for every argument, operation names. The service must
 * never refuse one of them (issue 11).
 */

const PLAYER = /* GraphQL */ `
  fragment PlayerFields on Player {
    __typename
    id
    displayName
    avatarUrl
  }
`;

const STANDING = /* GraphQL */ `
  fragment StandingFields on Standing {
    __typename
    rank
    score
    percentile
    achievedAt
    metadata
    player {
      __typename
      ...PlayerFields
      ... on Player {
        __typename
        id
      }
    }
  }
  ${PLAYER}
`;

const PERIOD_STANDING = /* GraphQL */ `
  fragment PeriodStandingFields on PeriodStanding {
    __typename
    bucket
    period
    region
    standing {
      __typename
      ...StandingFields
    }
  }
  ${STANDING}
`;

const SUBMIT_PAYLOAD = /* GraphQL */ `
  fragment SubmitScorePayloadFields on SubmitScorePayload {
    __typename
    duplicate
    improved
    standings {
      __typename
      ...PeriodStandingFields
    }
  }
  ${PERIOD_STANDING}
`;

const TOP_BOARD = /* GraphQL */ `
  fragment TopBoardFields on TopBoard {
    __typename
    boardId
    period
    bucket
    region
    size
    asOf
    entries {
      __typename
      ...StandingFields
    }
  }
  ${STANDING}
`;

const CONNECTION = /* GraphQL */ `
  fragment StandingEdgeFields on StandingEdge {
    __typename
    cursor
    node {
      __typename
      ...StandingFields
    }
  }
  fragment PageInfoFields on PageInfo {
    __typename
    endCursor
    hasNextPage
  }
  fragment StandingConnectionFields on StandingConnection {
    __typename
    edges {
      __typename
      ...StandingEdgeFields
    }
    pageInfo {
      __typename
      ...PageInfoFields
    }
  }
  ${STANDING}
`;

const SEASON = /* GraphQL */ `
  fragment SeasonFields on Season {
    __typename
    id
    name
    startsAt
    endsAt
    closedAt
  }
`;

const BOARD = /* GraphQL */ `
  fragment RetentionFields on Retention {
    __typename
    daily
    weekly
    monthly
  }
  fragment BoardFields on Board {
    __typename
    id
    title
    order
    aggregate
    maxScore
    periods
    regions
    topSize
    shards
    closeGraceSeconds
    size(period: $period, bucket: $bucket, region: $region)
    retention {
      __typename
      ...RetentionFields
    }
    currentSeason {
      __typename
      ...SeasonFields
    }
    seasons {
      __typename
      ...SeasonFields
    }
  }
  ${SEASON}
`;

const BUCKET = /* GraphQL */ `
  fragment BucketFields on Bucket {
    __typename
    period
    bucket
    region
    startsAt
    endsAt
    closed
    size
  }
`;

const PAGE_INFO = /* GraphQL */ `
  fragment PageInfoFields on PageInfo {
    __typename
    endCursor
    hasNextPage
  }
`;

/** A board's buckets of a period and its next reset, as a bucket list screen reads them. */
const BOARD_BUCKETS = /* GraphQL */ `
  fragment BucketEdgeFields on BucketEdge {
    __typename
    cursor
    node {
      __typename
      ...BucketFields
    }
  }
  fragment BucketConnectionFields on BucketConnection {
    __typename
    edges {
      __typename
      ...BucketEdgeFields
    }
    pageInfo {
      __typename
      ...PageInfoFields
    }
  }
  fragment BoardBucketsFields on Board {
    __typename
    id
    closeGraceSeconds
    nextReset(period: $period, region: $region)
    periodBuckets(period: $period, region: $region, first: $first, after: $after) {
      __typename
      ...BucketConnectionFields
    }
  }
  ${BUCKET}
  ${PAGE_INFO}
`;

const HISTORY = /* GraphQL */ `
  fragment BucketStandingFields on BucketStanding {
    __typename
    bucket {
      __typename
      ...BucketFields
    }
    standing {
      __typename
      ...StandingFields
    }
  }
  fragment BucketStandingEdgeFields on BucketStandingEdge {
    __typename
    cursor
    node {
      __typename
      ...BucketStandingFields
    }
  }
  fragment BucketStandingConnectionFields on BucketStandingConnection {
    __typename
    edges {
      __typename
      ...BucketStandingEdgeFields
    }
    pageInfo {
      __typename
      ...PageInfoFields
    }
  }
  ${BUCKET}
  ${PAGE_INFO}
  ${STANDING}
`;

const SCORE_BIN = /* GraphQL */ `
  fragment ScoreBinFields on ScoreBin {
    __typename
    from
    to
    players
  }
`;

/** Variables every bucket read takes, all of them given (as a generated client sends them). */
const BUCKET_VARIABLES = '$board: ID!, $period: Period!, $bucket: String, $region: String';
const BUCKET_ARGS = 'board: $board, period: $period, bucket: $bucket, region: $region';

export interface GeneratedDocument {
  /** The contract operation it calls (`open`: top, standing and around, as a board's screen asks them). */
  operation: string;
  query: string;
  operationName: string;
  kind: 'query' | 'mutation' | 'subscription';
}

/**
 * Each operation twice: as graphql-codegen's client preset writes it (fragments per type, the
 * operation's selection on the field), and as Relay writes it (the root selection itself a
 * fragment spread on the root type, holding the field).
 */
function both(
  operation: string,
  kind: GeneratedDocument['kind'],
  variables: string,
  field: string,
  fragments: string,
  name = operation[0]!.toUpperCase() + operation.slice(1),
): GeneratedDocument[] {
  const root = kind === 'query' ? 'Query' : kind === 'mutation' ? 'Mutation' : 'Subscription';
  // (A subscription's root holds its one field alone: no __typename beside it.)
  const codegen = `${kind} ${name}(${variables}) { ${kind === 'subscription' ? '' : '__typename '}${field} }${fragments}`;
  // Relay: the operation spreads a component's fragment on the root type (not for subscriptions,
  // whose root selection must be a single field; Relay writes those with the field itself).
  const relay =
    kind === 'subscription'
      ? `${kind} ${name}Relay(${variables}) { ... on ${root} { ${field} } }${fragments}`
      : `${kind} ${name}Relay(${variables}) { __typename ...${name}Root_${kind} }\nfragment ${name}Root_${kind} on ${root} { __typename ${field} }${fragments}`;
  return [
    { operation, kind, operationName: name, query: codegen },
    { operation, kind, operationName: `${name}Relay`, query: relay },
  ];
}

/** The deepest documents generated clients make, for every read, the submissions and topChanged. */
export const GENERATED_DOCUMENTS: GeneratedDocument[] = [
  ...both('submitScore', 'mutation', '$input: SubmitScoreInput!', 'submitScore(input: $input) { __typename ...SubmitScorePayloadFields }', SUBMIT_PAYLOAD),
  ...both(
    'submitScores',
    'mutation',
    '$inputs: [SubmitScoreInput!]!',
    'submitScores(inputs: $inputs) { __typename ...SubmitScorePayloadFields }',
    SUBMIT_PAYLOAD,
  ),
  ...both(
    'top',
    'query',
    `${BUCKET_VARIABLES}, $limit: Int!, $rankStyle: RankStyle`,
    `top(${BUCKET_ARGS}, limit: $limit, rankStyle: $rankStyle) { __typename ...TopBoardFields }`,
    TOP_BOARD,
  ),
  ...both(
    'standing',
    'query',
    `${BUCKET_VARIABLES}, $playerId: ID!, $rankStyle: RankStyle`,
    `standing(${BUCKET_ARGS}, playerId: $playerId, rankStyle: $rankStyle) { __typename ...StandingFields }`,
    STANDING,
  ),
  ...both(
    'around',
    'query',
    `${BUCKET_VARIABLES}, $playerId: ID!, $radius: Int!, $rankStyle: RankStyle`,
    `around(${BUCKET_ARGS}, playerId: $playerId, radius: $radius, rankStyle: $rankStyle) { __typename ...StandingFields }`,
    STANDING,
  ),
  // A board opened (the client's OpenBoard): three root fields, one aliased, in one request.
  ...both(
    'open',
    'query',
    `${BUCKET_VARIABLES}, $playerId: ID!, $limit: Int!, $radius: Int!, $rankStyle: RankStyle`,
    [
      `top(${BUCKET_ARGS}, limit: $limit, rankStyle: $rankStyle) { __typename ...TopBoardFields }`,
      `me: standing(${BUCKET_ARGS}, playerId: $playerId, rankStyle: $rankStyle) { __typename ...StandingFields }`,
      `around(${BUCKET_ARGS}, playerId: $playerId, radius: $radius, rankStyle: $rankStyle) { __typename ...StandingFields }`,
    ].join(' '),
    TOP_BOARD,
  ),
  ...both(
    'friends',
    'query',
    `${BUCKET_VARIABLES}, $playerId: ID!, $rankStyle: RankStyle`,
    `friends(${BUCKET_ARGS}, playerId: $playerId, rankStyle: $rankStyle) { __typename ...StandingFields }`,
    STANDING,
  ),
  ...both(
    'standings',
    'query',
    `${BUCKET_VARIABLES}, $first: Int!, $after: String, $rankStyle: RankStyle`,
    `standings(${BUCKET_ARGS}, first: $first, after: $after, rankStyle: $rankStyle) { __typename ...StandingConnectionFields }`,
    CONNECTION,
  ),
  ...both(
    'seasonResults',
    'query',
    '$board: ID!, $season: ID!, $first: Int!, $after: String, $rankStyle: RankStyle',
    'seasonResults(board: $board, season: $season, first: $first, after: $after, rankStyle: $rankStyle) { __typename ...StandingConnectionFields }',
    CONNECTION,
  ),
  ...both('board', 'query', `$id: ID!, $period: Period!, $bucket: String, $region: String`, 'board(id: $id) { __typename ...BoardFields }', BOARD),
  ...both('boards', 'query', `$period: Period!, $bucket: String, $region: String`, 'boards { __typename ...BoardFields }', BOARD),
  ...both('player', 'query', '$id: ID!', 'player(id: $id) { __typename ...PlayerFields }', PLAYER),
  // A board's buckets and next reset (the typed client's PeriodBuckets): `board` with Board.periodBuckets and Board.nextReset.
  ...both(
    'periodBuckets',
    'query',
    '$id: ID!, $period: Period!, $region: String, $first: Int!, $after: String',
    'board(id: $id) { __typename ...BoardBucketsFields }',
    BOARD_BUCKETS,
  ),
  ...both(
    'history',
    'query',
    '$board: ID!, $playerId: ID!, $period: Period!, $region: String, $first: Int!, $after: String',
    'history(board: $board, playerId: $playerId, period: $period, region: $region, first: $first, after: $after) { __typename ...BucketStandingConnectionFields }',
    HISTORY,
  ),
  ...both(
    'scoreDistribution',
    'query',
    `${BUCKET_VARIABLES}, $bins: Int!`,
    `scoreDistribution(${BUCKET_ARGS}, bins: $bins) { __typename ...ScoreBinFields }`,
    SCORE_BIN,
  ),
  ...both(
    'topChanged',
    'subscription',
    `${BUCKET_VARIABLES}, $limit: Int!, $rankStyle: RankStyle`,
    `topChanged(${BUCKET_ARGS}, limit: $limit, rankStyle: $rankStyle) { __typename ...TopBoardFields }`,
    TOP_BOARD,
  ),
];

const COHORT = /* GraphQL */ `
  fragment CohortFields on Cohort {
    __typename
    bucket
    tier
    number
    promotedThrough
    demotedFrom
    closed
    endsAt
    entries {
      __typename
      ...StandingFields
    }
  }
  ${STANDING}
`;

const LEAGUE = /* GraphQL */ `
  fragment LeaguePlacementFields on LeaguePlacement {
    __typename
    tier
    outcome
    standing {
      __typename
      ...StandingFields
    }
    cohort {
      __typename
      ...CohortFields
    }
  }
  ${COHORT}
`;

const LEAGUE_TIER = /* GraphQL */ `
  fragment LeagueTierFields on LeagueTier {
    __typename
    tier
    cohorts
    players
  }
`;

/** A board's league and tournament settings (issue 57), as a board screen reads them. */
const BOARD_LEAGUE = /* GraphQL */ `
  fragment LeagueFields on League {
    __typename
    tiers
    cohortSize
    promote
    demote
    period
  }
  fragment BoardLeagueFields on Board {
    __typename
    id
    league {
      __typename
      ...LeagueFields
    }
    joinRequired
    maxPlayers
    maxAttempts
    joined
  }
`;

/**
 * Issue 57's operations as generated clients write them (kept apart from GENERATED_DOCUMENTS, whose
 * every operation other suites send with variables of their own): a player's league round, one
 * cohort, a round's tiers, a tournament's attempts with the board's settings, a join, and the live
 * cohort.
 */
export const LEAGUE_DOCUMENTS: GeneratedDocument[] = [
  ...both(
    'league',
    'query',
    '$board: ID!, $playerId: ID!, $bucket: String',
    'league(board: $board, playerId: $playerId, bucket: $bucket) { __typename ...LeaguePlacementFields }',
    LEAGUE,
  ),
  ...both(
    'cohort',
    'query',
    '$board: ID!, $tier: String!, $number: Int!, $bucket: String',
    'cohort(board: $board, tier: $tier, number: $number, bucket: $bucket) { __typename ...CohortFields }',
    COHORT,
  ),
  ...both(
    'leagueTiers',
    'query',
    '$board: ID!, $bucket: String',
    'leagueTiers(board: $board, bucket: $bucket) { __typename ...LeagueTierFields }',
    LEAGUE_TIER,
  ),
  ...both(
    'attemptsUsed',
    'query',
    '$board: ID!, $playerId: ID!',
    'board(id: $board) { __typename ...BoardLeagueFields } attemptsUsed(board: $board, playerId: $playerId)',
    BOARD_LEAGUE,
  ),
  ...both('joinBoard', 'mutation', '$board: ID!, $playerId: ID!', 'joinBoard(board: $board, playerId: $playerId)', ''),
  ...both(
    'cohortChanged',
    'subscription',
    '$board: ID!, $playerId: ID!',
    'cohortChanged(board: $board, playerId: $playerId) { __typename ...LeaguePlacementFields }',
    LEAGUE,
  ),
];

const TIE_BREAK_STANDING = /* GraphQL */ `
  fragment TieBreakStandingFields on Standing {
    __typename
    rank
    score
    tieBreakValues
    player {
      __typename
      ...PlayerFields
    }
  }
  ${PLAYER}
`;

const BOARD_GUARDS = /* GraphQL */ `
  fragment BoardGuardFields on Board {
    __typename
    id
    order
    tieBreaks {
      __typename
      ...TieBreakFields
    }
    minScore
    suspectAbove
    suspectJump
    resultRate {
      __typename
      ...ResultRateFields
    }
  }
  fragment TieBreakFields on TieBreak {
    __typename
    name
    order
    max
  }
  fragment ResultRateFields on ResultRate {
    __typename
    results
    perSeconds
  }
`;

/**
 * Issue 59's additions as generated clients write them (kept apart from GENERATED_DOCUMENTS, as
 * LEAGUE_DOCUMENTS are): a board's tie-break columns and guards, made by createBoard and read by
 * board; a top and a batch of results whose standings carry their tie-break values; a key scoped
 * to boards. Each under a name of its own, beside the operation's other generated documents.
 */
export const TIE_BREAK_DOCUMENTS: GeneratedDocument[] = [
  ...both('board', 'query', '$id: ID!', 'board(id: $id) { __typename ...BoardGuardFields }', BOARD_GUARDS, 'BoardGuards'),
  ...both(
    'createBoard',
    'mutation',
    '$input: CreateBoardInput!',
    'createBoard(input: $input) { __typename ...BoardGuardFields }',
    BOARD_GUARDS,
    'CreateGuardedBoard',
  ),
  ...both(
    'top',
    'query',
    `${BUCKET_VARIABLES}, $limit: Int!, $rankStyle: RankStyle`,
    `top(${BUCKET_ARGS}, limit: $limit, rankStyle: $rankStyle) { __typename size entries { __typename ...TieBreakStandingFields } }`,
    TIE_BREAK_STANDING,
    'TieBreakTop',
  ),
  ...both(
    'submitScores',
    'mutation',
    '$inputs: [SubmitScoreInput!]!',
    'submitScores(inputs: $inputs) { __typename duplicate standings { __typename period standing { __typename ...TieBreakStandingFields } } }',
    TIE_BREAK_STANDING,
    'TieBreakSubmitScores',
  ),
  ...both(
    'createApiKey',
    'mutation',
    '$name: String!, $role: ApiKeyRole!, $boards: [ID!]!',
    'createApiKey(name: $name, role: $role, boards: $boards) { __typename key apiKey { __typename id name role boards } }',
    '',
    'CreateScopedApiKey',
  ),
];

/** A page both ways (issue 25): PageInfo's hasPreviousPage and startCursor beside the forward pair. */
const BOTH_WAYS_CONNECTION = /* GraphQL */ `
  fragment BothWaysEdgeFields on StandingEdge {
    __typename
    cursor
    node {
      __typename
      ...StandingFields
    }
  }
  fragment BothWaysPageInfoFields on PageInfo {
    __typename
    hasPreviousPage
    hasNextPage
    startCursor
    endCursor
  }
  fragment BothWaysConnectionFields on StandingConnection {
    __typename
    edges {
      __typename
      ...BothWaysEdgeFields
    }
    pageInfo {
      __typename
      ...BothWaysPageInfoFields
    }
  }
  ${STANDING}
`;

/** A submission's answer with each bucket's previousRank (issue 25). */
const RANK_CHANGE_PAYLOAD = /* GraphQL */ `
  fragment RankChangeFields on PeriodStanding {
    __typename
    period
    bucket
    previousRank
    standing {
      __typename
      ...StandingFields
    }
  }
  fragment RankChangePayloadFields on SubmitScorePayload {
    __typename
    duplicate
    improved
    standings {
      __typename
      ...RankChangeFields
    }
  }
  ${STANDING}
`;

const ENTRY_REMOVAL = /* GraphQL */ `
  fragment EntryRemovalGeneratedFields on EntryRemoval {
    __typename
    board
    playerId
    reason
    removedBy
    removedAt
    results
  }
`;

/**
 * Issue 60's additions as generated clients write them (kept apart from GENERATED_DOCUMENTS, as
 * LEAGUE_DOCUMENTS are): a page backwards (last, before), a page from a rank, seasonResults
 * backwards, around with fill, submissions answering previousRank, deleteBoard, removeEntry and
 * entryRemovals.
 * Each under a name of its own.
 */
export const BOTH_WAYS_DOCUMENTS: GeneratedDocument[] = [
  ...both(
    'standings',
    'query',
    `${BUCKET_VARIABLES}, $last: Int!, $before: String, $rankStyle: RankStyle`,
    `standings(${BUCKET_ARGS}, last: $last, before: $before, rankStyle: $rankStyle) { __typename ...BothWaysConnectionFields }`,
    BOTH_WAYS_CONNECTION,
    'StandingsBackward',
  ),
  ...both(
    'standings',
    'query',
    `${BUCKET_VARIABLES}, $first: Int!, $fromRank: Int!, $rankStyle: RankStyle`,
    `standings(${BUCKET_ARGS}, first: $first, fromRank: $fromRank, rankStyle: $rankStyle) { __typename ...BothWaysConnectionFields }`,
    BOTH_WAYS_CONNECTION,
    'StandingsFromRank',
  ),
  ...both(
    'seasonResults',
    'query',
    '$board: ID!, $season: ID!, $last: Int!, $before: String, $rankStyle: RankStyle',
    'seasonResults(board: $board, season: $season, last: $last, before: $before, rankStyle: $rankStyle) { __typename ...BothWaysConnectionFields }',
    BOTH_WAYS_CONNECTION,
    'SeasonResultsBackward',
  ),
  ...both(
    'around',
    'query',
    `${BUCKET_VARIABLES}, $playerId: ID!, $radius: Int!, $fill: Boolean!, $rankStyle: RankStyle`,
    `around(${BUCKET_ARGS}, playerId: $playerId, radius: $radius, fill: $fill, rankStyle: $rankStyle) { __typename ...StandingFields }`,
    STANDING,
    'AroundFill',
  ),
  ...both(
    'submitScore',
    'mutation',
    '$input: SubmitScoreInput!',
    'submitScore(input: $input) { __typename ...RankChangePayloadFields }',
    RANK_CHANGE_PAYLOAD,
    'SubmitScoreRankChange',
  ),
  ...both(
    'submitScores',
    'mutation',
    '$inputs: [SubmitScoreInput!]!',
    'submitScores(inputs: $inputs) { __typename ...RankChangePayloadFields }',
    RANK_CHANGE_PAYLOAD,
    'SubmitScoresRankChange',
  ),
  ...both('deleteBoard', 'mutation', '$id: ID!', 'deleteBoard(id: $id)', '', 'DeleteBoardGenerated'),
  ...both(
    'removeEntry',
    'mutation',
    '$board: ID!, $playerId: ID!, $reason: String!',
    'removeEntry(board: $board, playerId: $playerId, reason: $reason)',
    '',
    'RemoveEntryGenerated',
  ),
  ...both(
    'entryRemovals',
    'query',
    '$board: ID, $playerId: ID, $first: Int!',
    'entryRemovals(board: $board, playerId: $playerId, first: $first) { __typename ...EntryRemovalGeneratedFields }',
    ENTRY_REMOVAL,
    'EntryRemovalsGenerated',
  ),
];
