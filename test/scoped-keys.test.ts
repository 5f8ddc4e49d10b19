import { readFileSync } from 'node:fs';
import { buildSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { ADMIN_KEY, SERVER_KEY, type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * Keys scoped to boards (issue 59): a game-server key made with `boards` writes results and joins to
 * those boards only; any other board is refused FORBIDDEN with nothing recorded (PostgreSQL and
 * Redis compared whole, before and after), a batch naming one foreign board refused whole; board ids
 * are exact ("Race" is not "race"); upsertPlayer and setFriends stay open; keys made without boards
 * (and the environment's) write everywhere. Every "Game servers" mutation of the schema has a case
 * here, so a new one cannot be left unscoped unnoticed. The CLI's `keys create --boards`.
 */

type Answer = { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: { code?: string } }[] | undefined };

const SUBMIT = 'mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }';
const SUBMIT_MANY = 'mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }';
const JOIN = 'mutation($board: ID!, $playerId: ID!) { joinBoard(board: $board, playerId: $playerId) }';
const UPSERT = 'mutation($id: ID!) { upsertPlayer(input: { id: $id, displayName: "Kept" }) { id } }';
const FRIENDS = 'mutation($playerId: ID!, $friendIds: [ID!]!) { setFriends(playerId: $playerId, friendIds: $friendIds) }';
const CREATE_KEY =
  'mutation($name: String!, $role: ApiKeyRole!, $boards: [ID!]!) { createApiKey(name: $name, role: $role, boards: $boards) { key apiKey { id role boards } } }';

/** The boards: two that differ only in case, a third, and a board players must join. */
const RACE = 'Race';
const RACE_LOWER = 'race';
const PUZZLE = 'puzzle';
const CUP = 'Cup';
const BOARDS = [RACE, RACE_LOWER, PUZZLE, CUP];
/** The scoped key's boards. */
const SCOPE = [RACE, CUP];

const codeOf = (answer: Answer) => answer.errors?.[0]?.extensions?.code;

/** The mutations the schema marks "Game servers" (contract/api.graphql's convention), by name. */
function serverMutations(): string[] {
  const schema = buildSchema(readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8'));
  return Object.values(schema.getMutationType()!.getFields())
    .filter((field) => /Game servers\./.test(field.description ?? ''))
    .map((field) => field.name)
    .sort();
}

describe('API keys scoped to boards', () => {
  let t: TestApp;
  let scoped: string;
  let unscoped: string;
  let match = 0;
  const nextMatch = () => `m${++match}`;
  const as =
    (key: string) =>
    (query: string, variables: Record<string, unknown> = {}) =>
      t.gql(query, variables, { key }) as Promise<Answer>;
  const input = (board: string, playerId = 'p1', score = 10) => ({ board, playerId, score, matchId: nextMatch() });

  /**
   * Everything the service keeps, as text: every PostgreSQL table's rows (api_keys aside, which only
   * createApiKey writes) and every Redis key of the app's prefix with its value (DUMP). A refused
   * write must leave it equal.
   */
  async function store(): Promise<string> {
    const tables = await t.database.sql<{ name: string }[]>`
      select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition and c.relname not in ('api_keys', '__drizzle_migrations')
      order by c.relname`;
    const rows: string[] = [];
    for (const { name } of tables) {
      const [row] = await t.database.sql<{ rows: string | null }[]>`select string_agg(x::text, '|' order by x::text) as rows from ${t.database.sql(name)} x`;
      rows.push(`${name}: ${row?.rows ?? ''}`);
    }
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await t.redis.scan(cursor, 'MATCH', `${t.keyPrefix}*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
    keys.sort();
    // SCAN answers full names; the client prefixes what it is given. The index generation's record is
    // stamped by a background heartbeat (PostgreSQL's position and time), not by writes: left out.
    for (const key of keys.filter((name) => !name.includes(':{generation:')))
      rows.push(`${key}: ${(await t.redis.dumpBuffer(key.slice(t.keyPrefix.length)))?.toString('hex') ?? ''}`);
    return rows.join('\n');
  }

  /**
   * The store once the earlier writes' work after their answers is done (a backlog row is deleted once
   * its index write is confirmed; caches are filled): the same twice running, within a bounded wait.
   */
  async function settledStore(): Promise<string> {
    let last = await store();
    for (let tries = 0; tries < 100; tries++) {
      const now = await store();
      if (now === last && !/^index_backlog: ./m.test(now)) return now;
      last = now;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('the store did not settle');
  }

  /** Runs a write that must be refused FORBIDDEN, and shows the store unchanged by it. */
  async function expectForbidden(write: () => Promise<Answer>): Promise<string> {
    const before = await settledStore();
    const answer = await write();
    expect(codeOf(answer), JSON.stringify(answer)).toBe('FORBIDDEN');
    expect(answer.data ?? null).toBeNull();
    expect(await store()).toBe(before);
    return answer.errors![0]!.message;
  }

  const logged = async (board: string) => Number((await t.database.sql`select count(*)::int as n from results where board_id = ${board}`)[0]!.n);

  beforeAll(async () => {
    // No bucket closing in the background: the store must change only by the writes made here.
    t = await startTestApp({ seasonCloseIntervalMs: null });
    for (const id of BOARDS) {
      const created = await t.admin('mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }', {
        input: { id, title: id, maxScore: 1000, periods: ['ALL_TIME', 'DAILY'], ...(id === CUP && { joinRequired: true }) },
      });
      expect(created.errors).toBeUndefined();
    }
    const made = await t.admin<{ createApiKey: { key: string; apiKey: { role: string; boards: string[] } } }>(CREATE_KEY, {
      name: 'race-servers',
      role: 'SERVER',
      boards: SCOPE,
    });
    expect(made.errors).toBeUndefined();
    expect(made.data!.createApiKey.apiKey).toMatchObject({ role: 'SERVER', boards: SCOPE });
    scoped = made.data!.createApiKey.key;
    // Left out, `boards` is empty: every board.
    const open = await t.admin<{ createApiKey: { key: string; apiKey: { boards: string[] } } }>(
      'mutation { createApiKey(name: "all-servers", role: SERVER) { key apiKey { boards } } }',
    );
    expect(open.data!.createApiKey.apiKey.boards).toEqual([]);
    unscoped = open.data!.createApiKey.key;
  });
  afterAll(() => t?.close());

  it('every "Game servers" mutation has a case here', () => {
    // Board-scoped: submitScore, submitScores, joinBoard. Player-wide, open to every key: upsertPlayer, setFriends.
    expect(serverMutations()).toEqual(['joinBoard', 'setFriends', 'submitScore', 'submitScores', 'upsertPlayer']);
  });

  it('ApiKey.boards lists the scope; apiKeys shows it', async () => {
    const listed = await t.admin<{ apiKeys: { name: string; boards: string[] }[] }>('query { apiKeys { name boards } }');
    expect(listed.data!.apiKeys.map(({ name, boards }) => [name, boards])).toEqual([
      ['race-servers', SCOPE],
      ['all-servers', []],
    ]);
  });

  it('submitScore: a scoped key writes to its boards; any other board, the same id in another case, or no board at all is FORBIDDEN, nothing recorded', async () => {
    const key = as(scoped);
    expect((await key(SUBMIT, { input: input(RACE) })).errors).toBeUndefined();
    expect(await logged(RACE)).toBe(1);
    for (const board of [RACE_LOWER, PUZZLE, 'no-such-board']) {
      const message = await expectForbidden(() => key(SUBMIT, { input: input(board) }));
      expect(message).toContain(`not to "${board}"`);
    }
    // A replay of a recorded result on a foreign board is refused as well (it would answer that board's standings).
    const onPuzzle = input(PUZZLE, 'p2');
    expect((await as(unscoped)(SUBMIT, { input: onPuzzle })).errors).toBeUndefined();
    await expectForbidden(() => key(SUBMIT, { input: onPuzzle }));
  });

  it('submitScores: a batch on its boards is recorded; one foreign input refuses the whole batch, naming it, nothing recorded', async () => {
    const key = as(scoped);
    const before = await logged(RACE);
    expect((await key(SUBMIT_MANY, { inputs: [input(RACE, 'a'), input(RACE, 'b'), input(RACE, 'c')] })).errors).toBeUndefined();
    expect(await logged(RACE)).toBe(before + 3);
    const message = await expectForbidden(() => key(SUBMIT_MANY, { inputs: [input(RACE, 'd'), input(RACE, 'e'), input(RACE_LOWER, 'f'), input(RACE, 'g')] }));
    expect(message).toContain('inputs.2.board');
    expect(message).not.toContain('inputs.0.board');
    expect(await logged(RACE)).toBe(before + 3);
    // Every foreign input is named in the one answer.
    const both = await expectForbidden(() => key(SUBMIT_MANY, { inputs: [input(PUZZLE, 'h'), input(RACE, 'i'), input(RACE_LOWER, 'j')] }));
    expect(both).toMatch(/inputs\.0\.board: .*"puzzle".*inputs\.2\.board: .*"race"/);
  });

  it('joinBoard: a scoped key joins players to its boards only; others FORBIDDEN, nothing recorded', async () => {
    const key = as(scoped);
    expect((await key(JOIN, { board: CUP, playerId: 'p1' })).data).toEqual({ joinBoard: true });
    for (const board of [RACE_LOWER, PUZZLE, 'cup']) await expectForbidden(() => key(JOIN, { board, playerId: 'p9' }));
    // Joined, the player's results on the joinRequired board are taken from the scoped key.
    expect((await key(SUBMIT, { input: input(CUP, 'p1') })).errors).toBeUndefined();
  });

  it('upsertPlayer and setFriends are player-wide: open to a scoped key', async () => {
    const key = as(scoped);
    expect((await key(UPSERT, { id: 'p1' })).data).toEqual({ upsertPlayer: { id: 'p1' } });
    expect((await key(FRIENDS, { playerId: 'p1', friendIds: ['p2', 'a'] })).data).toEqual({ setFriends: 2 });
  });

  it('a key made without boards, the environment server key and the admin key write to every board', async () => {
    for (const key of [unscoped, SERVER_KEY, ADMIN_KEY]) {
      const write = as(key);
      for (const board of [RACE, RACE_LOWER, PUZZLE]) expect((await write(SUBMIT, { input: input(board, 'q') })).errors).toBeUndefined();
      expect((await write(SUBMIT_MANY, { inputs: [input(RACE, 'r'), input(PUZZLE, 'r')] })).errors).toBeUndefined();
      expect((await write(JOIN, { board: CUP, playerId: `joined-${key.slice(0, 12)}` })).data).toEqual({ joinBoard: true });
      expect((await write(UPSERT, { id: 'q' })).errors).toBeUndefined();
      expect((await write(FRIENDS, { playerId: 'q', friendIds: ['p1'] })).errors).toBeUndefined();
    }
  });

  it('createApiKey refuses boards on an admin key, an unknown board (another case of one too) and a repeat, BAD_USER_INPUT, making no key', async () => {
    const count = async () => Number((await t.database.sql`select count(*)::int as n from api_keys`)[0]!.n);
    const before = await count();
    for (const [role, boards, said] of [
      ['ADMIN', [RACE], 'only game-server keys'],
      ['SERVER', [RACE, 'RACE'], 'no board has the id "RACE"'],
      ['SERVER', [RACE, RACE], 'must not repeat'],
    ] as const) {
      const refused = (await t.admin(CREATE_KEY, { name: 'refused', role, boards })) as Answer;
      expect(codeOf(refused)).toBe('BAD_USER_INPUT');
      expect(refused.errors![0]!.message).toContain(said);
    }
    expect(await count()).toBe(before);
  });

  // The CLI's processes start in seconds each, longer on a loaded machine: more time than the default.
  it('the CLI: keys create --boards makes a scoped key, keys list shows its boards, a bad scope is refused', { timeout: 60_000 }, async () => {
    // Each CLI run is a process of its own (seconds to start): all run at once, `keys list` showing the keys made in beforeAll.
    const [created, asAdmin, listed] = await Promise.allSettled([
      runCli(t, ['keys', 'create', '--role', 'server', '--name', 'cli-puzzle', '--boards', ` ${PUZZLE} , ${CUP}`]),
      runCli(t, ['keys', 'create', '--role', 'admin', '--name', 'x', '--boards', RACE]),
      runCli(t, ['keys', 'list']),
    ]);
    expect(asAdmin.status).toBe('rejected');
    const refusal = (asAdmin as PromiseRejectedResult).reason as { code: number; stderr: string };
    expect(refusal.code).toBe(1);
    expect(refusal.stderr).toContain('only game-server keys');
    expect(created.status).toBe('fulfilled');
    const { stdout } = (created as PromiseFulfilledResult<{ stdout: string }>).value;
    expect(stdout).toContain(`(server, "cli-puzzle", boards ${PUZZLE},${CUP})`);
    const key = as(stdout.trim().split('\n').at(-1)!);
    expect((await key(SUBMIT, { input: input(PUZZLE) })).errors).toBeUndefined();
    await expectForbidden(() => key(SUBMIT, { input: input(RACE) }));
    const { stdout: list } = (listed as PromiseFulfilledResult<{ stdout: string }>).value;
    expect(list).toMatch(new RegExp(`\\trace-servers\\t.*\\tlive\\tboards ${SCOPE.join(',')}\\n`));
    expect(list).toMatch(/\tall-servers\t.*\tlive\tevery board\n/);
  });
});
