import { beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * A document sent again and again answers and records exactly what its first run did. Every
 * operation runs on graphql-js (issue 53: graphql-jit, which ran repeats from a compiled plan,
 * dropped variables inside JSON literals of mutations and ordered merged fields differently).
 * Each check sends the same text several times, so a per-document plan made after the first
 * run would be the one answering the later ones.
 */
describe('a repeated operation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });

  it('stores the variables inside a JSON literal on every run, not only the first', async () => {
    const SUBMIT = `mutation Submit($board: ID!, $player: ID!, $match: ID!, $r: String!) {
      submitScore(input: { board: $board, playerId: $player, matchId: $match, score: 10, metadata: { replay: $r, tags: [$r, "fixed"] } }) {
        __typename duplicate
      }
    }`;
    const runs = ['ab', 'cd', 'ef', 'gh'];
    for (const [i, replay] of runs.entries()) {
      const answer = await t.server(SUBMIT, { board: 'global', player: `Jürgen-${i}`, match: `EU-m${i}`, r: replay });
      expect(answer.errors).toBeUndefined();
    }
    // What PostgreSQL holds, read directly: the oracle is the text each run sent.
    const rows = await t.database.sql<{ player_id: string; metadata: unknown }[]>`
      select player_id, metadata from results where board_id = 'global' and player_id like 'Jürgen-%' order by player_id`;
    expect(rows.map((row) => row.metadata)).toEqual(runs.map((replay) => ({ replay, tags: [replay, 'fixed'] })));
  });

  it('answers its fields in the order of the document, a skipped first copy of a merged field left out', async () => {
    await t.server(`mutation { submitScore(input: { board: "global", playerId: "order-1", matchId: "o1", score: 5 }) { duplicate } }`);
    const READ = `query Read($skip: Boolean!) { standing(board: "global", playerId: "order-1") { score @skip(if: $skip) rank score } }`;
    for (let run = 0; run < 4; run++) {
      const response = await fetch(`${t.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: READ, variables: { skip: true } }),
      });
      // GraphQL's CollectFields: the skipped `score` is not collected, so `rank` is the first key.
      expect(await response.text()).toMatch(/^\{"data":\{"standing":\{"rank":\d+,"score":5\}\}\}$/);
    }
  });
});
