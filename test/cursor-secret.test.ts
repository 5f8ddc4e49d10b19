import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * Page cursors are signed with a random secret the deployment keeps in PostgreSQL: every process of
 * it accepts the others' cursors, another deployment does not, and nothing about the admin key can
 * be tested against a cursor (it was once HMAC-SHA256 over "cursor:" + the admin key).
 */
const PAGE = `query($after: String) { standings(board: "global", first: 2, after: $after) { edges { node { rank player { id } } } pageInfo { endCursor } } }`;
type Page = { standings: { edges: { node: { rank: number; player: { id: string } } }[]; pageInfo: { endCursor: string | null } } };

describe('the cursor secret', () => {
  let first: TestApp;
  let second: TestApp;
  let other: TestApp;
  beforeAll(async () => {
    first = await startTestApp();
    second = await startTestApp({ shareStoresOf: first });
    other = await startTestApp();
    const inputs = ['ana', 'bo', 'cy', 'di', 'ed'].map((playerId, i) => ({ board: 'global', playerId, score: 100 - i, matchId: `m${i}` }));
    expect((await first.server(`mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`, { inputs })).errors).toBeUndefined();
  });

  it("one process's cursor pages on another of the same deployment, and is refused by another deployment", async () => {
    const page = await first.gql<Page>(PAGE);
    const cursor = page.data!.standings.pageInfo.endCursor!;
    const next = await second.gql<Page>(PAGE, { after: cursor });
    expect(next.errors).toBeUndefined();
    expect(next.data!.standings.edges.map((edge) => edge.node.player.id)).toEqual(['cy', 'di']);
    const elsewhere = await other.gql(PAGE, { after: cursor });
    expect(elsewhere.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('is not derived from the admin key', async () => {
    const cursor = (await first.gql<Page>(PAGE)).data!.standings.pageInfo.endCursor!;
    const [payload, signature] = cursor.split('.') as [string, string];
    const fromAdminKey = createHmac('sha256', `cursor:${ADMIN_KEY}`).update(payload).digest('base64url').slice(0, signature.length);
    expect(signature).not.toBe(fromAdminKey);
  });
});
