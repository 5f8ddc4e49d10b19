import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { type RedisTarget, createRedisClient, mastersOf } from '../src/redis.js';
import { startRedisClusterEarly } from './helpers/redis-cluster.js';
import { TEST_REDIS_URL } from './helpers/redis-keys.js';
import { type GraphQLResponse, type TestApp, SERVER_KEY, codeOf, startTestApp } from './helpers/test-app.js';
import { TRANSPORTS, type Transport } from './helpers/transports.js';
import { until } from './helpers/wait.js';

/**
 * deleteBoard (issue 60): a board deleted leaves nothing of it in PostgreSQL (every table with a
 * board_id column but the entry_removals audit, its webhooks) nor in Redis (a SCAN of the test's
 * key prefix on every master, one node and a Cluster); topChanged watchers of it, in either
 * process, end with NOT_FOUND; another process answers NOT_FOUND at once; a live key scoped to it
 * refuses the deletion, changing nothing; the id made again starts empty; submissions racing the
 * deletion leave nothing behind. The oracles are the stores themselves, read directly.
 */

const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`;
const DELETE = `mutation($id: ID!) { deleteBoard(id: $id) }`;
const SUBMIT = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }`;
const SUBMIT_MANY = `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`;
const TOP = `query($board: ID!, $period: Period!, $region: String) { top(board: $board, period: $period, region: $region, limit: 10) { size entries { player { id } score } } }`;
const WATCH = `subscription($board: ID!) { topChanged(board: $board, period: ALL_TIME, limit: 5) { __typename boardId size entries { player { id } } } }`;

/** A board with every kind of key: 8 shards, a region, seasons, DENSE counts, tie-break columns wide enough that the time goes in the member (`#members`). */
const wideBoard = (id: string) => ({
  id,
  title: id,
  maxScore: 2 ** 30,
  shards: 8,
  regions: ['EU'],
  periods: ['ALL_TIME', 'SEASON', 'DAILY'],
  rankStyle: 'DENSE',
  tieBreaks: [
    { name: 'laps', order: 'HIGH_FIRST', max: 2 ** 12 - 1 },
    { name: 'ms', order: 'LOW_FIRST', max: 2 ** 9 - 1 },
  ],
});

/** `count` results of players p0..p(n-1) on a wide board, half of them in EU. */
const wideResults = (board: string, count: number, tag: string) =>
  Array.from({ length: count }, (_, i) => ({
    board,
    playerId: `p${i % 11}`,
    matchId: `${tag}-${i}`,
    score: 1_000 + ((i * 7919) % 5_000),
    tieBreakValues: [i % 4_096, i % 512],
    region: i % 2 === 0 ? 'EU' : null,
  }));

async function ok<T>(answer: Promise<GraphQLResponse<T>>): Promise<T> {
  const { data, errors } = await answer;
  expect(errors).toBeUndefined();
  return data!;
}

/** Every key under `prefix` on every master (the prefix taken off), each set's members with it: what the board may have left. */
async function keysUnder(target: RedisTarget, prefix: string): Promise<{ key: string; members: string[] }[]> {
  const plain = createRedisClient(target);
  await plain.connect();
  try {
    const found: { key: string; members: string[] }[] = [];
    for (const node of mastersOf(plain)) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        for (const key of keys) {
          const members = (await node.type(key)) === 'set' ? await node.smembers(key) : [];
          found.push({ key: key.slice(prefix.length), members });
        }
        cursor = next;
      } while (cursor !== '0');
    }
    return found;
  } finally {
    await plain.quit();
  }
}

/** A board's index keys alone (its TOP_CHANGED windows come and go by themselves). */
const indexOf = (keys: string[]) => keys.filter((key) => !key.includes('#top-webhook')).sort();

/** The keys (and set members) naming one board's tag: `lb:{<board>:` or `lb:{<board>#`. */
const ofBoard = (keys: { key: string; members: string[] }[], board: string) => {
  const names = (text: string) => text.includes(`{${board}:`) || text.includes(`{${board}#`);
  return keys.filter(({ key, members }) => names(key) || members.some(names)).map(({ key }) => key);
};

/** How many rows name the board in every table with a board_id column (entry_removals, the audit, excepted), plus its boards row and webhooks. */
async function rowsOf(databaseUrl: string, board: string): Promise<Record<string, number>> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const tables = await sql<{ table_name: string }[]>`
      select c.table_name from information_schema.columns c join information_schema.tables t using (table_schema, table_name)
      where c.table_schema = 'public' and c.column_name = 'board_id' and t.table_type = 'BASE TABLE' and c.table_name <> 'entry_removals'
        and c.table_name not like 'results\\_%'`;
    const counts: Record<string, number> = {};
    for (const { table_name: table } of tables) {
      const [row] = await sql<{ n: number }[]>`select count(*)::int as n from ${sql(table)} where board_id = ${board}`;
      counts[table] = row!.n;
    }
    const [boards] = await sql<{ n: number }[]>`select count(*)::int as n from boards where id = ${board}`;
    const [backlog] = await sql<{ n: number }[]>`select count(*)::int as n from index_backlog where ${board} = any(board_ids)`;
    const [webhooks] = await sql<{ n: number }[]>`select count(*)::int as n from webhooks where ${board} = any(boards)`;
    return { ...counts, boards: boards!.n, backlogPairs: backlog!.n, webhooks: webhooks!.n };
  } finally {
    await sql.end();
  }
}

const total = (rows: Record<string, number>) => Object.values(rows).reduce((a, b) => a + b, 0);
const nothing = (rows: Record<string, number>) => Object.fromEntries(Object.keys(rows).map((table) => [table, 0]));

/** The next result of a subscription, within `ms`. */
async function nextWithin(results: AsyncIterableIterator<GraphQLResponse>, ms: number): Promise<IteratorResult<GraphQLResponse, undefined>> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      results.next() as Promise<IteratorResult<GraphQLResponse, undefined>>,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no subscription result within ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The size a topChanged result shows. */
const sizeOf = (result: IteratorResult<GraphQLResponse, undefined>) =>
  (result.value as GraphQLResponse<{ topChanged: { size: number } }>).data!.topChanged.size;

const transport = (url: string, name: string): Transport => TRANSPORTS.map((make) => make(url)).find((t) => t.name === name)!;

// Comes up while the one-node tests run (most of a start is waiting for the nodes to agree).
const redisCluster = startRedisClusterEarly({ masters: 3 });

describe('deleteBoard on one Redis node, two processes', () => {
  let writer: TestApp;
  let reader: TestApp;

  it('frees every key and row of a wide, sharded, regional board with a season, ends its watchers in both processes with NOT_FOUND, and the other process answers NOT_FOUND at once', async () => {
    reader = await startTestApp({ seasonCloseIntervalMs: null });
    // Webhooks to a loopback address (never called: no event is delivered in this test).
    writer = await startTestApp({
      shareStoresOf: { databaseUrl: reader.databaseUrl, keyPrefix: reader.keyPrefix },
      webhooks: { allowPrivate: true, intervalMs: null },
    });
    const board = 'Wide-Del.1';
    const bystander = 'Kept';
    await ok(writer.admin(CREATE, { input: wideBoard(board) }));
    await ok(writer.admin(CREATE, { input: { id: bystander, title: bystander, maxScore: 1e6, shards: 2 } }));
    await ok(writer.admin(`mutation($b: ID!) { startSeason(board: $b, name: "S1") { id } }`, { b: board }));
    // A webhook of this board alone goes; one of this board and another keeps the other.
    await ok(
      writer.admin(`mutation($i: CreateWebhookInput!) { createWebhook(input: $i) { webhook { id } } }`, {
        i: { url: 'http://127.0.0.1:9/a', events: ['TOP_CHANGED'], boards: [board] },
      }),
    );
    const both = await ok(
      writer.admin<{ createWebhook: { webhook: { id: string } } }>(`mutation($i: CreateWebhookInput!) { createWebhook(input: $i) { webhook { id } } }`, {
        i: { url: 'http://127.0.0.1:9/b', events: ['TOP_CHANGED'], boards: [board, bystander] },
      }),
    );
    await ok(writer.server(SUBMIT_MANY, { inputs: wideResults(board, 40, 'a') }));
    await ok(writer.server(SUBMIT_MANY, { inputs: [{ board: bystander, playerId: 'k1', matchId: 'k', score: 5 }] }));

    // Watchers in both processes, over two transports.
    const ws = transport(reader.url, 'graphql-ws');
    const sse = transport(writer.url, 'SSE (graphql-sse)');
    const watchers = [ws.subscribe({ query: WATCH, variables: { board } }), sse.subscribe({ query: WATCH, variables: { board } })];
    for (const watcher of watchers) expect(sizeOf(await nextWithin(watcher, 10_000))).toBe(11);

    const before = await keysUnder(TEST_REDIS_URL, reader.keyPrefix);
    const kinds = ofBoard(before, board);
    // What the board had: shard sets, member hashes, DENSE counts, a regional list, a season's.
    expect(kinds.some((key) => key.endsWith('#members'))).toBe(true);
    expect(kinds.some((key) => key.includes('#dense'))).toBe(true);
    expect(kinds.some((key) => key.includes(':EU#'))).toBe(true);
    expect(kinds.some((key) => key.includes(':SEASON:s1'))).toBe(true);
    expect(kinds.some((key) => key.includes('#7}'))).toBe(true);
    const bystanderKeys = indexOf(ofBoard(before, bystander));
    expect(bystanderKeys.length).toBeGreaterThan(0);
    expect(total(await rowsOf(reader.databaseUrl, board))).toBeGreaterThan(0);

    // The reader has just read the board: it would serve it from its directory for half a second.
    expect(codeOf(await reader.gql(TOP, { board, period: 'ALL_TIME' }))).toBeUndefined();
    expect(await ok(writer.admin(DELETE, { id: board }))).toEqual({ deleteBoard: true });
    const answeredAt = Date.now();
    // The other process: NOT_FOUND at once (told by PostgreSQL's notification, not its half-second refresh).
    const waited = await until(async () => codeOf(await reader.gql(TOP, { board, period: 'ALL_TIME' })) === 'NOT_FOUND', 200, 'reader answers NOT_FOUND', 10);
    expect(waited).toBeLessThan(1_000);
    expect(Date.now() - answeredAt).toBeLessThan(1_000);
    for (const app of [reader, writer]) {
      for (const period of ['ALL_TIME', 'SEASON', 'DAILY']) expect(codeOf(await app.gql(TOP, { board, period, region: 'EU' }))).toBe('NOT_FOUND');
      expect((await ok(app.gql<{ board: unknown }>(`query($b: ID!) { board(id: $b) { id } }`, { b: board }))).board).toBeNull();
    }
    // Every watcher's last result is a NOT_FOUND error, then the subscription completes.
    for (const watcher of watchers) {
      let last: IteratorResult<GraphQLResponse, undefined>;
      do last = await nextWithin(watcher, 5_000);
      while (!last.done && !last.value.errors);
      expect(last.done).toBe(false);
      expect(codeOf(last.value ?? {})).toBe('NOT_FOUND');
      expect((await nextWithin(watcher, 5_000)).done).toBe(true);
    }
    await ws.close();
    await sse.close();

    const after = await keysUnder(TEST_REDIS_URL, reader.keyPrefix);
    expect(ofBoard(after, board)).toEqual([]);
    expect(indexOf(ofBoard(after, bystander))).toEqual(bystanderKeys);
    const rows = await rowsOf(reader.databaseUrl, board);
    expect(rows).toEqual(nothing(rows));
    // The other board's webhook keeps that board; the bystander still reads.
    const hooks = await ok(writer.admin<{ webhooks: { id: string; boards: string[] }[] }>(`{ webhooks { id boards } }`));
    expect(hooks.webhooks).toEqual([{ id: both.createWebhook.webhook.id, boards: [bystander] }]);
    expect((await ok(reader.gql<{ top: { size: number } }>(TOP, { board: bystander, period: 'ALL_TIME' }))).top.size).toBe(1);
    // Unknown now: false, nothing else.
    expect(await ok(writer.admin(DELETE, { id: board }))).toEqual({ deleteBoard: false });
  });

  it('made again under the same id, starts empty in both processes: top, standings, size, seasons', async () => {
    const board = 'Wide-Del.1';
    await ok(writer.admin(CREATE, { input: { ...wideBoard(board), shards: 4 } }));
    const fresh = { top: { size: 0, entries: [] } };
    for (const app of [writer, reader]) {
      for (const region of [null, 'EU']) {
        for (const period of ['ALL_TIME', 'DAILY']) expect(await ok(app.gql(TOP, { board, period, region }))).toEqual(fresh);
      }
      expect(codeOf(await app.gql(TOP, { board, period: 'SEASON' }))).toBe('NOT_FOUND');
      const read = await ok(
        app.gql<{ board: { shards: number; seasons: unknown[] }; standings: { edges: unknown[] } }>(
          `query($b: ID!) { board(id: $b) { shards seasons { id } } standings(board: $b, period: ALL_TIME, first: 10) { edges { cursor } } }`,
          { b: board },
        ),
      );
      expect(read).toEqual({ board: { shards: 4, seasons: [] }, standings: { edges: [] } });
    }
    // A new result counts alone.
    await ok(writer.server(SUBMIT, { input: { board, playerId: 'new', matchId: 'n1', score: 9, tieBreakValues: [1, 1] } }));
    await until(
      async () =>
        JSON.stringify(await ok(reader.gql(TOP, { board, period: 'ALL_TIME' }))) ===
        JSON.stringify({ top: { size: 1, entries: [{ player: { id: 'new' }, score: 9 }] } }),
      3_000,
      'the new board holds its one result',
    );
    // A replay of an old matchId is new on the new board (the idempotency keys went too).
    expect(await ok(writer.server(SUBMIT, { input: { ...wideResults(board, 1, 'a')[0], region: null } }))).toEqual({ submitScore: { duplicate: false } });
  });

  it('refuses while a live key is scoped to the board, naming it, and changes nothing; deletes once it is revoked', async () => {
    const board = 'Scoped';
    await ok(writer.admin(CREATE, { input: { id: board, title: board, maxScore: 1e6, shards: 2, periods: ['ALL_TIME', 'DAILY'] } }));
    const created = await ok(
      writer.admin<{ createApiKey: { apiKey: { id: string } } }>(
        `mutation { createApiKey(name: "scoped-writer", role: SERVER, boards: ["${board}"]) { apiKey { id } } }`,
      ),
    );
    await ok(writer.server(SUBMIT, { input: { board, playerId: 'a', matchId: 'm', score: 3 } }));
    // Once the result's index write is confirmed (its backlog row deleted), nothing moves by itself.
    await until(async () => (await rowsOf(writer.databaseUrl, board)).backlogPairs === 0, 5_000, 'the backlog row confirmed', 20);
    const keys = ofBoard(await keysUnder(TEST_REDIS_URL, writer.keyPrefix), board).sort();
    const rows = await rowsOf(writer.databaseUrl, board);
    const refused = await writer.admin(DELETE, { id: board });
    expect(codeOf(refused)).toBe('BAD_USER_INPUT');
    expect(refused.errors![0]!.message).toContain('scoped-writer');
    expect(refused.errors![0]!.message).toContain(created.createApiKey.apiKey.id);
    expect(ofBoard(await keysUnder(TEST_REDIS_URL, writer.keyPrefix), board).sort()).toEqual(keys);
    expect(await rowsOf(writer.databaseUrl, board)).toEqual(rows);
    expect((await ok(reader.gql<{ top: { size: number } }>(TOP, { board, period: 'ALL_TIME' }))).top.size).toBe(1);

    await ok(writer.admin(`mutation($k: ID!) { revokeApiKey(key: $k) { id } }`, { k: created.createApiKey.apiKey.id }));
    expect(await ok(writer.admin(DELETE, { id: board }))).toEqual({ deleteBoard: true });
    expect(ofBoard(await keysUnder(TEST_REDIS_URL, writer.keyPrefix), board)).toEqual([]);
  });

  it('`global` is deleted like any other board, and made again at once serves no view of the old one', async () => {
    await ok(writer.server(SUBMIT, { input: { board: 'global', playerId: 'g', matchId: 'g1', score: 1 } }));
    // Both processes hold a fresh view of its top (their top caches serve one up to a second old).
    for (const app of [reader, writer]) {
      await until(
        async () => (await ok(app.gql<{ top: { size: number } }>(TOP, { board: 'global', period: 'ALL_TIME' }))).top.size === 1,
        3_000,
        'the top read',
        20,
      );
    }
    expect(await ok(writer.admin(DELETE, { id: 'global' }))).toEqual({ deleteBoard: true });
    // The other process is told on the deletion's commit, a few milliseconds away.
    await until(async () => codeOf(await reader.gql(TOP, { board: 'global', period: 'ALL_TIME' })) === 'NOT_FOUND', 200, 'reader answers NOT_FOUND', 10);
    expect(ofBoard(await keysUnder(TEST_REDIS_URL, writer.keyPrefix), 'global')).toEqual([]);
    const rows = await rowsOf(writer.databaseUrl, 'global');
    expect(rows).toEqual(nothing(rows));
    await ok(writer.admin(CREATE, { input: { id: 'global', title: 'Global', maxScore: 1e9, periods: ['ALL_TIME'] } }));
    for (const app of [writer, reader]) expect(await ok(app.gql(TOP, { board: 'global', period: 'ALL_TIME' }))).toEqual({ top: { size: 0, entries: [] } });
  });

  it('made again, serves no close marker of the old board: a closed day of the old one is not closed in the new one', async () => {
    const board = 'Closed';
    await ok(writer.admin(CREATE, { input: { id: board, title: board, maxScore: 1e6, periods: ['ALL_TIME', 'DAILY'] } }));
    const day = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    // The old board's yesterday, frozen with three standings (as the bucket closer leaves one).
    const sql = postgres(writer.databaseUrl, { max: 1, onnotice: () => {} });
    const starts = `${day}T00:00:00Z`;
    await sql`insert into frozen_buckets (board_id, period, bucket, region, starts_at, ends_at, closed_at, size)
      values (${board}, 'DAILY', ${day}, '', ${starts}::timestamptz, ${starts}::timestamptz + interval '1 day', now(), 3)`;
    await sql`insert into frozen_standings (board_id, period, bucket, region, rank, player_id, score, reached_at)
      select ${board}, 'DAILY', ${day}, '', r, 'f' || r, 100 - r, ${starts}::timestamptz from generate_series(1, 3) as r`;
    await sql.end();
    const DAY_TOP = `query($b: ID!, $d: String!) { top(board: $b, period: DAILY, bucket: $d, limit: 10) { size } }`;
    // Both processes remember the marker once found.
    for (const app of [reader, writer]) expect(await ok(app.gql(DAY_TOP, { b: board, d: day }))).toEqual({ top: { size: 3 } });
    expect(await ok(writer.admin(DELETE, { id: board }))).toEqual({ deleteBoard: true });
    await until(async () => codeOf(await reader.gql(DAY_TOP, { b: board, d: day })) === 'NOT_FOUND', 200, 'reader answers NOT_FOUND', 10);
    await ok(writer.admin(CREATE, { input: { id: board, title: board, maxScore: 1e6, periods: ['ALL_TIME', 'DAILY'] } }));
    for (const app of [reader, writer]) expect(await ok(app.gql(DAY_TOP, { b: board, d: day }))).toEqual({ top: { size: 0 } });
  });

  it('waits for the index write of a group committed before it (its backlog row), and frees the keys it brought back', async () => {
    const board = 'Late';
    await ok(writer.admin(CREATE, { input: { id: board, title: board, maxScore: 1e6 } }));
    await ok(writer.server(SUBMIT, { input: { board, playerId: 'a', matchId: 'm', score: 3 } }));
    await until(async () => (await rowsOf(writer.databaseUrl, board)).backlogPairs === 0, 5_000, 'the backlog row confirmed', 20);
    // A group committed just before the deletion, its index write still on its way: its backlog
    // row (dated ahead, so that no catch-up pass takes it meanwhile).
    const sql = postgres(writer.databaseUrl, { max: 1, onnotice: () => {} });
    const [row] = await sql<{ id: string }[]>`
      insert into index_backlog (board_ids, player_ids, enqueued_at) values (array[${board}], array['late'], now() + interval '1 hour') returning id`;
    const deleting = writer.admin(DELETE, { id: board });
    await until(async () => ofBoard(await keysUnder(TEST_REDIS_URL, writer.keyPrefix), board).length === 0, 5_000, 'the keys freed once', 10);
    // The late write lands after the keys were freed, then the group confirms it.
    await writer.redis.zadd(`lb:{${board}:ALL_TIME:all}`, 1, 'late');
    await sql`delete from index_backlog where id = ${row!.id}`;
    await sql.end();
    expect(await ok(deleting)).toEqual({ deleteBoard: true });
    expect(ofBoard(await keysUnder(TEST_REDIS_URL, writer.keyPrefix), board)).toEqual([]);
  });

  it('submissions racing the deletion, in both processes, leave no row and no key behind, each answered or NOT_FOUND', async () => {
    const board = 'Race';
    await ok(writer.admin(CREATE, { input: { id: board, title: board, maxScore: 1e6, shards: 4, regions: ['EU'], periods: ['ALL_TIME', 'DAILY'] } }));
    await ok(writer.server(SUBMIT, { input: { board, playerId: 'first', matchId: 'm0', score: 1 } }));
    let stop = false;
    const codes = new Map<string, number>();
    const pound = async (app: TestApp, lane: number) => {
      for (let i = 0; !stop; i++) {
        const answer = await app.gql(
          SUBMIT,
          { input: { board, playerId: `r${lane}-${i % 7}`, matchId: `${lane}-${i}`, score: i, region: i % 2 ? 'EU' : null } },
          { key: SERVER_KEY },
        );
        const code = codeOf(answer) ?? 'OK';
        codes.set(code, (codes.get(code) ?? 0) + 1);
        if (code === 'NOT_FOUND' && i > 0) break;
      }
    };
    const lanes = [0, 1, 2, 3, 4, 5].map((lane) => pound(lane % 2 ? reader : writer, lane));
    await until(() => (codes.get('OK') ?? 0) > 30, 10_000, 'submissions under way', 5);
    expect(await ok(writer.admin(DELETE, { id: board }))).toEqual({ deleteBoard: true });
    stop = true;
    await Promise.all(lanes);
    expect([...codes.keys()].sort()).toEqual(['NOT_FOUND', 'OK']);
    expect(ofBoard(await keysUnder(TEST_REDIS_URL, writer.keyPrefix), board)).toEqual([]);
    const rows = await rowsOf(writer.databaseUrl, board);
    expect(rows).toEqual(nothing(rows));
  });
});

describe('deleteBoard on a Redis Cluster of three masters', () => {
  it('frees the board on every master, ends its watchers, and the id starts empty again', async () => {
    const cluster = await redisCluster.started();
    {
      const t = await startTestApp({ redisCluster: cluster, seasonCloseIntervalMs: null });
      const board = 'Wide-Cluster';
      await ok(t.admin(CREATE, { input: wideBoard(board) }));
      await ok(t.admin(CREATE, { input: { id: 'Other', title: 'Other', maxScore: 1e6, shards: 8 } }));
      await ok(t.admin(`mutation($b: ID!) { startSeason(board: $b, name: "S1") { id } }`, { b: board }));
      await ok(t.server(SUBMIT_MANY, { inputs: wideResults(board, 60, 'c') }));
      await ok(t.server(SUBMIT_MANY, { inputs: [1, 2, 3].map((i) => ({ board: 'Other', playerId: `o${i}`, matchId: `o${i}`, score: i })) }));
      const target = { cluster: cluster.nodes };
      const before = await keysUnder(target, t.keyPrefix);
      // Spread over every master, whatever the slots.
      const plain = createRedisClient(target);
      await plain.connect();
      const mastersHolding = await Promise.all(
        mastersOf(plain).map(async (node) => (await node.scan('0', 'MATCH', `${t.keyPrefix}lb:{${board}*`, 'COUNT', 10_000))[1].length),
      );
      await plain.quit();
      expect(mastersHolding.filter((n) => n > 0).length).toBe(3);
      const other = ofBoard(before, 'Other').sort();

      const ws = transport(t.url, 'graphql-ws');
      const watcher = ws.subscribe({ query: WATCH, variables: { board } });
      expect(sizeOf(await nextWithin(watcher, 10_000))).toBe(11);
      expect(await ok(t.admin(DELETE, { id: board }))).toEqual({ deleteBoard: true });
      const last = await nextWithin(watcher, 5_000);
      expect(codeOf(last.value ?? {})).toBe('NOT_FOUND');
      expect((await nextWithin(watcher, 5_000)).done).toBe(true);
      await ws.close();

      const after = await keysUnder(target, t.keyPrefix);
      expect(ofBoard(after, board)).toEqual([]);
      expect(ofBoard(after, 'Other').sort()).toEqual(other);
      const rows = await rowsOf(t.databaseUrl, board);
      expect(rows).toEqual(nothing(rows));

      await ok(t.admin(CREATE, { input: wideBoard(board) }));
      expect(await ok(t.gql(TOP, { board, period: 'ALL_TIME', region: 'EU' }))).toEqual({ top: { size: 0, entries: [] } });
      await t.close();
    }
  });
});
