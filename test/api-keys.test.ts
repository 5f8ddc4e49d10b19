import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

const SUBMIT = `mutation($m: ID!) { submitScore(input: { board: "global", playerId: "keyed", score: 1, matchId: $m }) { duplicate } }`;

describe('API keys made with the CLI', () => {
  let t: TestApp;
  const cli = (...args: string[]) => runCli(t, args);

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('creates a key printed once and stored only as a digest; lists it; a revoked key is refused at once', async () => {
    const created = await cli('keys', 'create', '--role', 'server', '--name', 'eu-1');
    const key = created.stdout.trim().split('\n').at(-1)!;
    expect(key).toMatch(/^lb_server_[A-Za-z0-9_-]{43}$/);

    const stored = await t.database.sql`select * from api_keys`;
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(key);

    expect((await t.gql(SUBMIT, { m: 'k1' }, { key })).errors).toBeUndefined();
    const forbidden = await t.gql(`mutation { createBoard(input: { id: "by-server-key", title: "x", maxScore: 1 }) { id } }`, {}, { key });
    expect(forbidden.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    const listed = await cli('keys', 'list');
    expect(listed.stdout).toMatch(/key_[0-9a-f]{12}\tserver\teu-1\tcreated .*\tlive/);
    expect(listed.stdout).not.toContain(key);

    await cli('keys', 'revoke', '--key', 'eu-1');
    // The revocation reaches the running app through PostgreSQL NOTIFY: it lands a moment later.
    let tries = 0;
    await expect
      .poll(async () => (await t.gql(SUBMIT, { m: `k-after-${++tries}` }, { key })).errors?.[0]?.extensions?.code, { timeout: 5_000, interval: 25 })
      .toBe('UNAUTHENTICATED');
    expect((await cli('keys', 'list')).stdout).toMatch(/\trevoked /);
  });

  it('an admin key made with the CLI administers', async () => {
    const created = await cli('keys', 'create', '--role', 'admin', '--name', 'ops');
    const key = created.stdout.trim().split('\n').at(-1)!;
    const board = await t.gql<{ createBoard: { id: string } }>(
      `mutation { createBoard(input: { id: "by-admin-key", title: "x", maxScore: 1 }) { id } }`,
      {},
      { key },
    );
    expect(board.data?.createBoard.id).toBe('by-admin-key');
  });

  it('refuses bad usage with exit code 2', async () => {
    await expect(cli('keys', 'create', '--role', 'root', '--name', 'x')).rejects.toMatchObject({ code: 2 });
    await expect(cli('keys', 'revoke', '--key', 'no-such-key')).rejects.toMatchObject({ code: 2 });
  });
});
