/**
 * The console's documents: one fragment per type, __typename on every selection. Fragments are not
 * nested inside one another: the service's depth and cost limits count each spread as a level.
 */

const F = {
  Board: `fragment ConsoleBoard on Board { __typename id title order aggregate maxScore periods regions topSize shards
    rankStyle closeGraceSeconds timeZone regionTimeZones { __typename region timeZone } retention { __typename daily weekly monthly } currentSeason { __typename id name startsAt endsAt closedAt } }`,
  Season: 'fragment ConsoleSeason on Season { __typename id name startsAt endsAt closedAt }',
  Player: 'fragment ConsolePlayer on Player { __typename id displayName }',
  Standing: 'fragment ConsoleStanding on Standing { __typename rank score percentile achievedAt player { __typename id displayName } }',
  Bucket: 'fragment ConsoleBucket on BucketStatus { __typename period bucket region size stored drift }',
  Rebuild: 'fragment ConsoleRebuild on Rebuild { __typename id state rowsRead rowsTotal size error period bucket region startedAt finishedAt }',
  Key: 'fragment ConsoleKey on ApiKey { __typename id name role boards createdAt revokedAt }',
  Flag: 'fragment ConsoleFlag on PlayerFlag { __typename reason flaggedAt player { __typename id displayName } result { __typename boardId matchId score tieBreakValues achievedAt } }',
  Probe: 'fragment ConsoleProbe on StoreProbe { __typename up latencyMs error }',
  PeriodBucket: 'fragment ConsolePeriodBucket on Bucket { __typename period bucket region startsAt endsAt closed size }',
  Webhook: 'fragment ConsoleWebhook on Webhook { __typename id url events boards createdAt failing lastDeliveredAt lastError }',
  Delivery: 'fragment ConsoleDelivery on WebhookDelivery { __typename id event status attempts lastAttemptAt nextAttemptAt lastError }',
  RewardBand: 'fragment ConsoleRewardBand on RewardBand { __typename name fromRank toRank topPercent }',
  EntryRemoval: 'fragment ConsoleEntryRemoval on EntryRemoval { __typename board playerId reason removedBy removedAt results }',
};

/** An operation with every fragment it spreads (nested ones too): a document holds no unused fragment. */
function doc(operation) {
  const used = new Set();
  const visit = (text) => {
    for (const [, name] of text.matchAll(/\.\.\.Console(\w+)/g)) {
      if (!used.has(name)) {
        used.add(name);
        visit(F[name]);
      }
    }
  };
  visit(operation);
  return [operation, ...[...used].map((name) => F[name])].join('\n');
}

export const Q = {
  health: doc('query ConsoleHealth { storeHealth { __typename index indexBacklog postgres { ...ConsoleProbe } redis { ...ConsoleProbe } } }'),
  boards: doc('query ConsoleBoards { boards { ...ConsoleBoard } }'),
  board: doc('query ConsoleBoardDetail($id: ID!) { board(id: $id) { ...ConsoleBoard seasons { ...ConsoleSeason } } }'),
  buckets: doc('query ConsoleBuckets($id: ID!) { board(id: $id) { __typename id buckets { ...ConsoleBucket } } }'),
  createBoard: doc('mutation ConsoleCreateBoard($input: CreateBoardInput!) { createBoard(input: $input) { ...ConsoleBoard } }'),
  updateBoard: doc('mutation ConsoleUpdateBoard($input: UpdateBoardInput!) { updateBoard(input: $input) { ...ConsoleBoard } }'),
  page: doc(`query ConsolePage($board: ID!, $period: Period!, $bucket: String, $region: String, $first: Int!, $after: String) {
    standings(board: $board, period: $period, bucket: $bucket, region: $region, first: $first, after: $after) {
      __typename edges { __typename cursor node { ...ConsoleStanding } } pageInfo { __typename endCursor hasNextPage } } }`),
  top: doc(`subscription ConsoleTop($board: ID!, $period: Period!, $bucket: String, $region: String, $limit: Int!) {
    topChanged(board: $board, period: $period, bucket: $bucket, region: $region, limit: $limit) {
      __typename asOf size bucket entries { ...ConsoleStanding } } }`),
  startSeason: doc(
    'mutation ConsoleStartSeason($board: ID!, $name: String!, $endsAt: DateTime) { startSeason(board: $board, name: $name, endsAt: $endsAt) { ...ConsoleSeason } }',
  ),
  // startsAt (scheduling a season ahead) is sent only when it is given, so that the console works
  // on a service whose startSeason does not take it yet.
  scheduleSeason: doc(
    'mutation ConsoleScheduleSeason($board: ID!, $name: String!, $endsAt: DateTime, $startsAt: DateTime) { startSeason(board: $board, name: $name, endsAt: $endsAt, startsAt: $startsAt) { ...ConsoleSeason } }',
  ),
  closeSeason: doc('mutation ConsoleCloseSeason($board: ID!) { closeSeason(board: $board) { ...ConsoleSeason } }'),
  seasonResults: doc(`query ConsoleSeasonResults($board: ID!, $season: ID!, $first: Int!, $after: String) {
    seasonResults(board: $board, season: $season, first: $first, after: $after) {
      __typename edges { __typename cursor node { ...ConsoleStanding } } pageInfo { __typename endCursor hasNextPage } } }`),
  search: doc('query ConsoleSearch($text: String!) { searchPlayers(text: $text, first: 50) { ...ConsolePlayer flag { __typename reason } } }'),
  player: doc(`query ConsolePlayerDetail($id: String!) { searchPlayers(text: $id, first: 1) {
    ...ConsolePlayer avatarUrl flag { __typename reason flaggedAt }
    boardScores { __typename period bucket region score achievedAt board { __typename id title } standing { __typename rank percentile } }
    recentResults(first: 25) { __typename matchId score region achievedAt recordedAt board { __typename id title } } } }`),
  flag: doc('mutation ConsoleFlagPlayer($playerId: ID!, $reason: String!) { flagPlayer(playerId: $playerId, reason: $reason) { ...ConsolePlayer } }'),
  unflag: doc('mutation ConsoleUnflagPlayer($playerId: ID!) { unflagPlayer(playerId: $playerId) { ...ConsolePlayer } }'),
  erase: 'mutation ConsoleErasePlayer($playerId: ID!) { deletePlayer(playerId: $playerId) }',
  flagged: doc('query ConsoleFlagged { flaggedPlayers(first: 100) { ...ConsoleFlag } }'),
  keys: doc('query ConsoleKeys { apiKeys { ...ConsoleKey } }'),
  createKey: doc(
    'mutation ConsoleCreateKey($name: String!, $role: ApiKeyRole!, $boards: [ID!]! = []) { createApiKey(name: $name, role: $role, boards: $boards) { __typename key apiKey { ...ConsoleKey } } }',
  ),
  revokeKey: doc('mutation ConsoleRevokeKey($key: ID!) { revokeApiKey(key: $key) { ...ConsoleKey } }'),
  startRebuild: doc(
    'mutation ConsoleStartRebuild($board: ID!, $period: Period!, $bucket: String, $region: String) { startRebuild(board: $board, period: $period, bucket: $bucket, region: $region) { ...ConsoleRebuild } }',
  ),
  rebuild: doc('query ConsoleRebuildProgress($id: ID!) { rebuild(id: $id) { ...ConsoleRebuild } }'),
  // Closed buckets, history and score distributions (issue 21): asked for by the views that show
  // them only, so that the rest of the console works on a service without them.
  periodBuckets: doc(`query ConsolePeriodBuckets($id: ID!, $period: Period!, $region: String, $first: Int!, $after: String) {
    board(id: $id) { __typename id closeGraceSeconds nextReset(period: $period, region: $region)
      periodBuckets(period: $period, region: $region, first: $first, after: $after) {
        __typename edges { __typename cursor node { ...ConsolePeriodBucket } } pageInfo { __typename endCursor hasNextPage } } } }`),
  bucketSize: `query ConsoleBucketSize($id: ID!, $period: Period!, $bucket: String, $region: String) {
    board(id: $id) { __typename id size(period: $period, bucket: $bucket, region: $region) } }`,
  distribution: `query ConsoleScoreDistribution($board: ID!, $period: Period!, $bucket: String, $region: String, $bins: Int!) {
    scoreDistribution(board: $board, period: $period, bucket: $bucket, region: $region, bins: $bins) { __typename from to players } }`,
  history: doc(`query ConsoleHistory($board: ID!, $playerId: ID!, $period: Period!, $region: String, $first: Int!, $after: String) {
    history(board: $board, playerId: $playerId, period: $period, region: $region, first: $first, after: $after) {
      __typename edges { __typename cursor node { __typename bucket { ...ConsolePeriodBucket } standing { __typename rank score percentile achievedAt } } }
      pageInfo { __typename endCursor hasNextPage } } }`),
  // Leagues and tournaments (issue 57): asked for by the league views only. A tournament's joined
  // count is asked for on its own, so that the settings show even where it fails.
  league: `query ConsoleLeague($id: ID!) { board(id: $id) { __typename id title joinRequired maxPlayers maxAttempts
    league { __typename tiers cohortSize promote demote period } } }`,
  joined: 'query ConsoleJoined($id: ID!) { board(id: $id) { __typename id joined } }',
  leagueTiers: 'query ConsoleLeagueTiers($board: ID!, $bucket: String) { leagueTiers(board: $board, bucket: $bucket) { __typename tier cohorts players } }',
  cohort: doc(`query ConsoleCohort($board: ID!, $tier: String!, $number: Int!, $bucket: String) {
    cohort(board: $board, tier: $tier, number: $number, bucket: $bucket) {
      __typename bucket tier number promotedThrough demotedFrom closed endsAt entries { ...ConsoleStanding } } }`),
  // Webhooks, reward bands and awards (issue 58): asked for by the views that show them only.
  webhooks: doc('query ConsoleWebhooks { webhooks { ...ConsoleWebhook } }'),
  createWebhook: doc(
    'mutation ConsoleCreateWebhook($input: CreateWebhookInput!) { createWebhook(input: $input) { __typename secret webhook { ...ConsoleWebhook } } }',
  ),
  deleteWebhook: 'mutation ConsoleDeleteWebhook($id: ID!) { deleteWebhook(id: $id) }',
  deliveries: doc(`query ConsoleDeliveries($webhook: ID!, $status: DeliveryStatus, $first: Int!, $after: String) {
    webhookDeliveries(webhook: $webhook, status: $status, first: $first, after: $after) {
      __typename edges { __typename cursor node { ...ConsoleDelivery } } pageInfo { __typename endCursor hasNextPage } } }`),
  redeliver: doc('mutation ConsoleRedeliver($delivery: ID!) { redeliverWebhook(delivery: $delivery) { ...ConsoleDelivery } }'),
  rewards: doc('query ConsoleRewards($id: ID!) { board(id: $id) { __typename id rankStyle rewards { ...ConsoleRewardBand } } }'),
  updateRewards: doc(
    'mutation ConsoleUpdateRewards($input: UpdateBoardInput!) { updateBoard(input: $input) { __typename id rankStyle rewards { ...ConsoleRewardBand } } }',
  ),
  awards: doc(`query ConsoleAwards($board: ID!, $period: Period!, $bucket: String!, $region: String, $first: Int!, $after: String) {
    awards(board: $board, period: $period, bucket: $bucket, region: $region, first: $first, after: $after) {
      __typename edges { __typename cursor node { __typename id band standing { ...ConsoleStanding } } } pageInfo { __typename endCursor hasNextPage } } }`),
  // Deleting a board, removing one entry and the removals list (issue 60): asked for by the actions
  // and cards that use them only, so that the rest of the console works on a service without them.
  deleteBoard: 'mutation ConsoleDeleteBoard($id: ID!) { deleteBoard(id: $id) }',
  removeEntry:
    'mutation ConsoleRemoveEntry($board: ID!, $playerId: ID!, $reason: String!) { removeEntry(board: $board, playerId: $playerId, reason: $reason) }',
  entryRemovals: doc(
    'query ConsoleEntryRemovals($board: ID, $playerId: ID, $first: Int!) { entryRemovals(board: $board, playerId: $playerId, first: $first) { ...ConsoleEntryRemoval } }',
  ),
};
