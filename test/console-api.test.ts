import { beforeAll, describe, expect, it } from 'vitest';
import { createRebuildJobs } from '../src/services/rebuild-jobs.js';
import { labelsAt, rankEntries } from './helpers/oracle.js';
import { ADMIN_KEY, SERVER_KEY, type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * The admin operations the console runs (board buckets with the drift gauge, background rebuilds,
 * player search, a player's board scores and recent results, flags, API keys, store health), sent
 * over HTTP as real clients send them: named operations, variables, one fragment per type (nested
 * as Relay and fragment masking write them) and __typename on every selection. Each answer is
 * compared with what the test computes from the results it sent, not with the service's own code.
 */

// A date to come, so the keys the app sets expiries on from this clock stay.
const NOW = new Date('2037-11-29T12:00:00.000Z');
const TODAY = labelsAt(NOW).DAILY!;
const BOARD = 'arena';

interface Sent {
  playerId: string;
  matchId: string;
  score: number;
  region: string | null;
  achievedAt: Date;
}

/** One fragment per type, as fragment masking writes them. */
const FRAGMENTS: Record<string, string> = {
  ConsolePlayer: 'fragment ConsolePlayer on Player { __typename id displayName }',
  ConsoleStanding: 'fragment ConsoleStanding on Standing { __typename rank score percentile achievedAt player { ...ConsolePlayer } }',
  ConsoleBucket: 'fragment ConsoleBucket on BucketStatus { __typename period bucket region size stored drift }',
  ConsoleRebuild:
    'fragment ConsoleRebuild on Rebuild { __typename id state rowsRead rowsTotal size error startedAt finishedAt period bucket region board { __typename id } }',
  ConsoleKey: 'fragment ConsoleKey on ApiKey { __typename id name role createdAt revokedAt }',
  ConsoleFlag: 'fragment ConsoleFlag on PlayerFlag { __typename reason flaggedAt player { ...ConsolePlayer } }',
  ConsoleProbe: 'fragment ConsoleProbe on StoreProbe { __typename up latencyMs error }',
};

/** The operation with every fragment it spreads, nested ones included (a document may carry no unused one). */
function gql(operation: string): string {
  const used = new Set<string>();
  const visit = (text: string) => {
    for (const [, name] of text.matchAll(/\.\.\.(\w+)/g)) {
      if (!used.has(name!)) {
        used.add(name!);
        visit(FRAGMENTS[name!]!);
      }
    }
  };
  visit(operation);
  return [operation, ...[...used].map((name) => FRAGMENTS[name])].join('\n');
}

const BUCKETS = gql(`query ConsoleBuckets($id: ID!) { board(id: $id) { __typename id buckets { ...ConsoleBucket } } }`);
const START_REBUILD = gql(`mutation ConsoleStartRebuild($board: ID!, $period: Period!, $bucket: String, $region: String) {
  startRebuild(board: $board, period: $period, bucket: $bucket, region: $region) { ...ConsoleRebuild }
}`);
const REBUILD = gql(`query ConsoleRebuild($id: ID!) { rebuild(id: $id) { ...ConsoleRebuild } }`);
const SEARCH = gql(`query ConsoleSearch($text: String!, $first: Int!) { searchPlayers(text: $text, first: $first) { ...ConsolePlayer } }`);
const PLAYER = gql(`query ConsolePlayerDetail($id: String!, $first: Int!) {
  searchPlayers(text: $id, first: 1) {
    ...ConsolePlayer
    flag { ...ConsoleFlag }
    boardScores { __typename period bucket region score achievedAt board { __typename id title } standing { __typename rank score percentile } }
    recentResults(first: $first) { __typename matchId score region achievedAt recordedAt board { __typename id } }
  }
}`);
const FLAG = gql(`mutation ConsoleFlag($playerId: ID!, $reason: String!) { flagPlayer(playerId: $playerId, reason: $reason) { ...ConsolePlayer } }`);
const UNFLAG = gql(`mutation ConsoleUnflag($playerId: ID!) { unflagPlayer(playerId: $playerId) { ...ConsolePlayer } }`);
const FLAGGED = gql(`query ConsoleFlagged { flaggedPlayers { ...ConsoleFlag } }`);
const KEYS = gql(`query ConsoleKeys { apiKeys { ...ConsoleKey } }`);
const CREATE_KEY = gql(
  `mutation ConsoleCreateKey($name: String!, $role: ApiKeyRole!) { createApiKey(name: $name, role: $role) { __typename key apiKey { ...ConsoleKey } } }`,
);
const REVOKE_KEY = gql(`mutation ConsoleRevokeKey($key: ID!) { revokeApiKey(key: $key) { ...ConsoleKey } }`);
const HEALTH = gql(`query ConsoleHealth { storeHealth { __typename index indexBacklog postgres { ...ConsoleProbe } redis { ...ConsoleProbe } } }`);
const SUBMIT = `mutation Submit($input: SubmitScoreInput!) { submitScore(input: $input) { __typename duplicate } }`;

describe('the console’s admin operations', () => {
  let t: TestApp;
  const sent: Sent[] = [];
  const names = new Map<string, string>([
    ['Zoë-1', 'Zoë'],
    ['игрок', 'Игрок Первый'],
    ['p-ada', 'Ada Lovelace'],
    ['p-grace', 'Grace Hopper'],
  ]);

  /** Best score per player over `rows`, highest first, ties to who reached it first: the oracle of a bucket. */
  const ranked = (rows: Sent[]) => {
    const best = new Map<string, Sent>();
    for (const row of rows) {
      const held = best.get(row.playerId);
      if (!held || row.score > held.score) best.set(row.playerId, row);
    }
    return rankEntries(
      { order: 'HIGH_FIRST' },
      [...best.values()].map((row) => ({ ...row, reachedAt: row.achievedAt.getTime() })),
    );
  };

  /** The rebuild jobs' records in Redis (SCAN patterns are not prefixed by ioredis; the keys it answers are full names). */
  async function jobKeys(): Promise<string[]> {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await t.redis.scan(cursor, 'MATCH', `${t.keyPrefix}rebuild-job:*`, 'COUNT', 1000);
      found.push(...keys.map((key) => key.slice(t.keyPrefix.length)));
      cursor = next;
    } while (cursor !== '0');
    return found.sort();
  }

  async function submit(row: Sent, key = SERVER_KEY) {
    const answer = await t.gql(
      SUBMIT,
      { input: { board: BOARD, playerId: row.playerId, matchId: row.matchId, score: row.score, region: row.region, achievedAt: row.achievedAt.toISOString() } },
      { key },
    );
    expect(answer.errors).toBeUndefined();
    sent.push(row);
  }

  beforeAll(async () => {
    t = await startTestApp({ now: () => NOW });
    const created = await t.admin(
      `mutation { createBoard(input: { id: "${BOARD}", title: "Arena", maxScore: 1000000, periods: [ALL_TIME, DAILY], regions: ["eu"] }) { id } }`,
    );
    expect(created.errors).toBeUndefined();
    for (const [id, displayName] of names)
      expect((await t.server(`mutation($input: PlayerInput!) { upsertPlayer(input: $input) { id } }`, { input: { id, displayName } })).errors).toBeUndefined();
    // 'ghost' plays without a profile.
    const players = [...names.keys(), 'ghost'];
    let match = 0;
    for (let i = 0; i < 15; i++) {
      const playerId = players[i % players.length]!;
      await submit({
        playerId,
        matchId: `m${++match}`,
        score: 100 + ((i * 37) % 200),
        region: i % 3 === 0 ? 'eu' : null,
        achievedAt: new Date(NOW.getTime() - (15 - i) * 60_000),
      });
    }
  }, 60_000);

  it('lists each live bucket with its size in Redis and in PostgreSQL, and the drift between them', async () => {
    const answer = await t.admin<{
      board: { buckets: { period: string; bucket: string; region: string | null; size: number; stored: number; drift: number }[] };
    }>(BUCKETS, { id: BOARD });
    expect(answer.errors).toBeUndefined();
    const expected = [
      { period: 'ALL_TIME', bucket: 'all', region: null, rows: sent },
      { period: 'ALL_TIME', bucket: 'all', region: 'eu', rows: sent.filter((row) => row.region === 'eu') },
      { period: 'DAILY', bucket: TODAY, region: null, rows: sent },
      { period: 'DAILY', bucket: TODAY, region: 'eu', rows: sent.filter((row) => row.region === 'eu') },
    ].map(({ rows, ...at }) => ({ __typename: 'BucketStatus', ...at, size: ranked(rows).length, stored: ranked(rows).length, drift: 0 }));
    expect(answer.data!.board.buckets).toEqual(expect.arrayContaining(expected));
    expect(answer.data!.board.buckets).toHaveLength(expected.length);
  });

  it('a rebuild started in the background reports its progress and heals a bucket that lost a member', { timeout: 30_000 }, async () => {
    const lost = ranked(sent)[0]!.playerId;
    expect(await t.redis.zrem(`lb:{${BOARD}:ALL_TIME:all}`, lost)).toBe(1);
    const drifted = await t.admin<{ board: { buckets: { period: string; region: string | null; drift: number; size: number }[] } }>(BUCKETS, { id: BOARD });
    const allTime = drifted.data!.board.buckets.find((bucket) => bucket.period === 'ALL_TIME' && bucket.region === null)!;
    expect(allTime.drift).toBe(1);
    expect(
      (await t.admin<{ standing: unknown }>(`query($p: ID!) { standing(board: "${BOARD}", playerId: $p) { rank } }`, { p: lost })).data!.standing,
    ).toBeNull();

    const started = await t.admin<{ startRebuild: { id: string; state: string; rowsTotal: number; board: { id: string } } }>(START_REBUILD, {
      board: BOARD,
      period: 'ALL_TIME',
    });
    expect(started.errors).toBeUndefined();
    expect(started.data!.startRebuild).toMatchObject({
      __typename: 'Rebuild',
      board: { __typename: 'Board', id: BOARD },
      period: 'ALL_TIME',
      bucket: 'all',
      region: null,
      // Counted in the job, beside the rebuild: not yet when it answers.
      rowsTotal: 0,
    });
    const { id } = started.data!.startRebuild;
    type Job = { state: string; rowsRead: number; rowsTotal: number; size: number | null; finishedAt: string | null };
    let job: Job | undefined;
    await expect
      .poll(async () => (job = (await t.admin<{ rebuild: Job }>(REBUILD, { id })).data!.rebuild).state, { timeout: 10_000, interval: 50 })
      .toBe('DONE');
    expect(job).toMatchObject({ rowsRead: ranked(sent).length, rowsTotal: ranked(sent).length, size: ranked(sent).length });
    expect(job!.finishedAt).not.toBeNull();
    const healed = await t.admin<{ board: { buckets: { drift: number }[] } }>(BUCKETS, { id: BOARD });
    expect(healed.data!.board.buckets.map((bucket) => bucket.drift)).toEqual(healed.data!.board.buckets.map(() => 0));
    expect((await t.admin(REBUILD, { id: 'no-such-rebuild' })).data).toEqual({ rebuild: null });

    const refused = await t.admin(START_REBUILD, { board: BOARD, period: 'WEEKLY' });
    expect(refused.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');

    // Another rebuild of the bucket holds its rebuild key: refused at once, and no job is left behind.
    const live = `lb:{${BOARD}:DAILY:${TODAY}:eu}`;
    await t.redis.zadd(`${live}#rebuild`, 0, '\u0000rebuild:someone-else');
    const jobsBefore = await jobKeys();
    expect(jobsBefore).toEqual([`rebuild-job:${id}`]);
    const busy = await t.admin(START_REBUILD, { board: BOARD, period: 'DAILY', region: 'eu' });
    expect(busy.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    expect(await jobKeys()).toEqual(jobsBefore);
    await t.redis.del(`${live}#rebuild`);
  });

  it('answers a rebuild whose process stopped beating as FAILED rather than RUNNING for ever', async () => {
    const jobs = createRebuildJobs(t.redis, { staleMs: 200 });
    await t.redis.hset('rebuild-job:orphan', {
      boardId: BOARD,
      period: 'ALL_TIME',
      bucket: 'all',
      region: '',
      state: 'RUNNING',
      rowsRead: 3,
      rowsTotal: 9,
      startedAt: Date.now(),
      beatAt: Date.now(),
    });
    expect(await jobs.find('orphan')).toMatchObject({ state: 'RUNNING', rowsRead: 3, rowsTotal: 9, error: null });
    await expect.poll(async () => (await jobs.find('orphan'))?.state, { timeout: 5_000, interval: 50 }).toBe('FAILED');
    expect((await jobs.find('orphan'))!.error).toContain('stopped');
    await t.redis.del('rebuild-job:orphan');
  });

  it('finds players by id prefix, by a piece of their name in any case, and one without a profile by a prefix of their id', async () => {
    const search = async (text: string) =>
      (await t.admin<{ searchPlayers: { id: string; displayName: string | null }[] }>(SEARCH, { text, first: 20 })).data!.searchPlayers;
    expect(await search('p-')).toEqual([
      { __typename: 'Player', id: 'p-ada', displayName: 'Ada Lovelace' },
      { __typename: 'Player', id: 'p-grace', displayName: 'Grace Hopper' },
    ]);
    expect((await search('HOPP')).map((player) => player.id)).toEqual(['p-grace']);
    expect((await search('первый')).map((player) => player.id)).toEqual(['игрок']);
    expect(await search('ghost')).toEqual([{ __typename: 'Player', id: 'ghost', displayName: null }]);
    // By a prefix of the id too, in any case, as a player with a profile is (player-search.test.ts).
    expect(await search('GH')).toEqual([{ __typename: 'Player', id: 'ghost', displayName: null }]);
    expect(await search('%')).toEqual([]);
    expect((await t.admin(SEARCH, { text: '  ', first: 20 })).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it("shows a player's board score and standing in every bucket, and their recent results newest first", async () => {
    const playerId = 'Zoë-1';
    type Detail = {
      boardScores: { period: string; bucket: string; region: string | null; score: number; standing: { rank: number; score: number } | null }[];
      recentResults: { matchId: string; score: number; region: string | null; achievedAt: string; board: { id: string } }[];
    };
    const answer = await t.admin<{ searchPlayers: Detail[] }>(PLAYER, { id: playerId, first: 3 });
    expect(answer.errors).toBeUndefined();
    const detail = answer.data!.searchPlayers[0]!;
    const buckets = [
      { period: 'ALL_TIME', bucket: 'all', region: null, rows: sent },
      { period: 'ALL_TIME', bucket: 'all', region: 'eu', rows: sent.filter((row) => row.region === 'eu') },
      { period: 'DAILY', bucket: TODAY, region: null, rows: sent },
      { period: 'DAILY', bucket: TODAY, region: 'eu', rows: sent.filter((row) => row.region === 'eu') },
    ].flatMap(({ rows, ...at }) => {
      const order = ranked(rows);
      const rank = order.findIndex((row) => row.playerId === playerId);
      return rank < 0 ? [] : [{ ...at, score: order[rank]!.score, standing: { rank: rank + 1, score: order[rank]!.score } }];
    });
    expect(
      detail.boardScores.map(({ period, bucket, region, score, standing }) => ({
        period,
        bucket,
        region,
        score,
        standing: standing && { rank: standing.rank, score: standing.score },
      })),
    ).toEqual(expect.arrayContaining(buckets));
    expect(detail.boardScores).toHaveLength(buckets.length);
    const latest = sent
      .filter((row) => row.playerId === playerId)
      .sort((a, b) => b.achievedAt.getTime() - a.achievedAt.getTime())
      .slice(0, 3);
    expect(detail.recentResults.map(({ matchId, score, region, achievedAt, board }) => ({ matchId, score, region, achievedAt, board: board.id }))).toEqual(
      latest.map((row) => ({ matchId: row.matchId, score: row.score, region: row.region, achievedAt: row.achievedAt.toISOString(), board: BOARD })),
    );
  });

  it('flags with a reason, lists the flagged players, and unflags', async () => {
    expect((await t.admin(FLAG, { playerId: 'p-ada', reason: '  impossible lap times  ' })).errors).toBeUndefined();
    const flagged = await t.admin<{ flaggedPlayers: unknown[] }>(FLAGGED);
    expect(flagged.data!.flaggedPlayers).toEqual([
      {
        __typename: 'PlayerFlag',
        reason: 'impossible lap times',
        flaggedAt: NOW.toISOString(),
        player: { __typename: 'Player', id: 'p-ada', displayName: 'Ada Lovelace' },
      },
    ]);
    const detail = await t.admin<{ searchPlayers: { flag: { reason: string } | null; boardScores: { standing: unknown }[] }[] }>(PLAYER, {
      id: 'p-ada',
      first: 1,
    });
    expect(detail.data!.searchPlayers[0]!.flag).toMatchObject({ reason: 'impossible lap times' });
    // Hidden from every bucket, their board scores kept.
    expect(detail.data!.searchPlayers[0]!.boardScores.length).toBeGreaterThan(0);
    expect(detail.data!.searchPlayers[0]!.boardScores.map((row) => row.standing)).toEqual(detail.data!.searchPlayers[0]!.boardScores.map(() => null));
    expect((await t.admin(UNFLAG, { playerId: 'p-ada' })).errors).toBeUndefined();
    expect((await t.admin<{ flaggedPlayers: unknown[] }>(FLAGGED)).data!.flaggedPlayers).toEqual([]);
  });

  it('makes an API key shown once, lists keys without the key, and revokes it so that it is refused at once', { timeout: 20_000 }, async () => {
    const created = await t.admin<{ createApiKey: { key: string; apiKey: { id: string; name: string; role: string; revokedAt: string | null } } }>(CREATE_KEY, {
      name: 'EU game servers',
      role: 'SERVER',
    });
    expect(created.errors).toBeUndefined();
    const { key, apiKey } = created.data!.createApiKey;
    expect(key).toMatch(/^lb_server_[A-Za-z0-9_-]{43}$/);
    expect(apiKey).toMatchObject({ __typename: 'ApiKey', name: 'EU game servers', role: 'SERVER', revokedAt: null });
    const listed = await t.admin<{ apiKeys: Record<string, unknown>[] }>(KEYS);
    expect(listed.data!.apiKeys).toEqual([apiKey]);
    expect(JSON.stringify(listed)).not.toContain(key);
    await submit({ playerId: 'p-grace', matchId: 'by-new-key', score: 5, region: null, achievedAt: NOW }, key);

    const revoked = await t.admin<{ revokeApiKey: { id: string; revokedAt: string | null }[] }>(REVOKE_KEY, { key: apiKey.id });
    expect(revoked.data!.revokeApiKey).toHaveLength(1);
    expect(revoked.data!.revokeApiKey[0]!.revokedAt).not.toBeNull();
    const refused = await t.gql(SUBMIT, { input: { board: BOARD, playerId: 'p-grace', matchId: 'after-revoke', score: 5 } }, { key });
    expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect((await t.admin(REVOKE_KEY, { key: apiKey.id })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await t.admin(CREATE_KEY, { name: ' ', role: 'ADMIN' })).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('reports store health', async () => {
    type Health = { storeHealth: { index: string; indexBacklog: number; postgres: { up: boolean; latencyMs: number }; redis: { up: boolean } } };
    type Answer = { data: Health };
    // The outbox's rows are confirmed a moment after each index write.
    let answer: { data?: Health | null; errors?: unknown } = {};
    await expect.poll(async () => (answer = await t.admin<Health>(HEALTH)).data?.storeHealth.indexBacklog, { timeout: 5_000, interval: 50 }).toBe(0);
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.storeHealth).toMatchObject({
      __typename: 'StoreHealth',
      index: 'READY',
      indexBacklog: 0,
      postgres: { __typename: 'StoreProbe', up: true, error: null },
      redis: { __typename: 'StoreProbe', up: true, error: null },
    });
    expect(answer.data!.storeHealth.postgres.latencyMs).toBeGreaterThan(0);

    // A query over GET, as a persisted-query or CDN-friendly client sends it, with the key in its header.
    const url = new URL(`${t.url}/graphql`);
    url.searchParams.set('query', HEALTH);
    const viaGet = await fetch(url, { headers: { authorization: `Bearer ${ADMIN_KEY}`, accept: 'application/graphql-response+json' } });
    expect(viaGet.status).toBe(200);
    expect(((await viaGet.json()) as Answer).data.storeHealth).toMatchObject({ __typename: 'StoreHealth', index: 'READY', postgres: { up: true } });
  });

  it('refuses every one of them to a game-server key and to anonymous callers', async () => {
    const documents: [string, Record<string, unknown>][] = [
      [BUCKETS, { id: BOARD }],
      [START_REBUILD, { board: BOARD, period: 'ALL_TIME' }],
      [REBUILD, { id: 'x' }],
      [SEARCH, { text: 'p', first: 5 }],
      [FLAGGED, {}],
      [KEYS, {}],
      [CREATE_KEY, { name: 'sneaky', role: 'ADMIN' }],
      [REVOKE_KEY, { key: 'x' }],
      [HEALTH, {}],
    ];
    for (const [document, variables] of documents) {
      expect((await t.server(document, variables)).errors?.[0]?.extensions?.code, document).toBe('FORBIDDEN');
      expect((await t.gql(document, variables)).errors?.[0]?.extensions?.code, document).toBe('UNAUTHENTICATED');
    }
    // A player read by anyone works as before; only the admin fields on it are refused.
    const anonymous = await t.gql<{ player: { id: string } }>(`query { player(id: "p-ada") { __typename id flag { reason } } }`);
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect((await t.gql(`query { player(id: "p-ada") { __typename id } }`)).data).toEqual({ player: { __typename: 'Player', id: 'p-ada' } });
    expect(ADMIN_KEY).not.toBe(SERVER_KEY);
  });
});
