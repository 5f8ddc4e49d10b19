import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GraphQLResponse, type TestApp, startTestApp } from './helpers/test-app.js';
import { TRANSPORTS } from './helpers/transports.js';
import { settle, until } from './helpers/wait.js';
import { WEBHOOKS_CHANGED_CHANNEL } from '../src/db/webhooks.js';

/**
 * Live events on a board with a tie-break column carry each standing's values, as every read's
 * Standing does: friendOvertook (over graphql-ws) when a friend passes on the column alone, and the
 * FRIEND_OVERTAKEN, TOP_CHANGED and BUCKET_CLOSED webhook events in the outbox. The expected values
 * are written here from what the test sends: one column, laps, most first.
 */

const BOARD = 'Kart-EU';
const FRIEND_OVERTOOK = `subscription($board: ID!, $playerId: ID!) {
  friendOvertook(board: $board, playerId: $playerId) {
    __typename period
    by { __typename rank score tieBreakValues player { __typename id } }
    you { __typename rank score tieBreakValues player { __typename id } }
  }
}`;

interface EventStanding {
  rank: number;
  playerId: string;
  score: number;
  tieBreakValues?: number[];
}

describe('events on a board with a tie-break column', () => {
  let t: TestApp;
  let matches = 0;
  const submit = async (playerId: string, score: number, laps: number) => {
    const answer = await t.server('mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }', {
      input: { board: BOARD, playerId, score, tieBreakValues: [laps], matchId: `m${++matches}` },
    });
    expect(answer.errors).toBeUndefined();
  };
  const events = async <T>(type: string) =>
    (await t.database.sql<{ data: T }[]>`select data from webhook_events where type = ${type} and board_id = ${BOARD} order by id`).map((row) => row.data);
  /** A standing as an event carries it, trimmed to what the test compares. */
  const trim = ({ rank, playerId, score, tieBreakValues }: EventStanding) => ({ rank, playerId, score, tieBreakValues });

  beforeAll(async () => {
    t = await startTestApp({ seasonCloseIntervalMs: null, topWebhooks: { windowMs: 200 } });
    await t.database.sql`insert into webhooks (id, url, events, boards, secret)
      values ('wh_kart', 'https://receiver.invalid/hook', '{FRIEND_OVERTAKEN,TOP_CHANGED,BUCKET_CLOSED}', '{}', 'whsec_a2FydA==')`;
    // As createWebhook tells every process; then the process's directory holds it.
    await t.database.sql`select pg_notify(${WEBHOOKS_CHANGED_CHANNEL}, 'wh_kart')`;
    await until(() => t.app.parts.webhookInterest.wants(BOARD, 'FRIEND_OVERTAKEN'), 10_000, 'the directory holding the webhook');
    const created = await t.admin('mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }', {
      input: { id: BOARD, title: 'Kart', maxScore: 1_000, periods: ['ALL_TIME', 'SEASON'], topSize: 3, tieBreaks: [{ name: 'laps', max: 99 }] },
    });
    expect(created.errors).toBeUndefined();
    const season = await t.admin('mutation($b: ID!) { startSeason(board: $b, name: "S1") { id } }', { b: BOARD });
    expect(season.errors).toBeUndefined();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('friendOvertook and FRIEND_OVERTAKEN name the values a friend passed on, the column alone deciding', async () => {
    const fan = await t.server('mutation { setFriends(playerId: "fan", friendIds: ["Star"]) }');
    expect(fan.errors).toBeUndefined();
    await submit('fan', 100, 5);
    await submit('Star', 100, 3);
    const ws = TRANSPORTS.find((f) => f('http://unused').name === 'graphql-ws')!(t.url);
    const results = ws.subscribe({ query: FRIEND_OVERTOOK, variables: { board: BOARD, playerId: 'fan' } }) as AsyncIterable<
      GraphQLResponse<{ friendOvertook: { period: string; by: { tieBreakValues: number[] }; you: { tieBreakValues: number[] } } }>
    >;
    const told: GraphQLResponse<{ friendOvertook: unknown }>[] = [];
    const pulling = (async () => {
      for await (const result of results) told.push(result);
    })().catch(() => undefined);
    await until(async () => (await t.app.parts.masterIndex.overtakenListeners(BOARD)) > 0, 10_000, 'the subscription');
    // The detection renews its count of listeners once a second.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await submit('Star', 100, 7);
    await until(() => told.length >= 2, 20_000, 'friendOvertook for ALL_TIME and the season');
    const standing = (id: string, rank: number, laps: number) => ({
      __typename: 'Standing',
      rank,
      score: 100,
      tieBreakValues: [laps],
      player: { __typename: 'Player', id },
    });
    expect(told.map((result) => result.data?.friendOvertook).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual(
      ['ALL_TIME', 'SEASON'].map((period) => ({ __typename: 'Overtaken', period, by: standing('Star', 1, 7), you: standing('fan', 2, 5) })),
    );
    await (results as AsyncGenerator).return?.(undefined);
    await pulling;
    await ws.close();
    const overtaken = await settle(
      () => events<{ period: string; by: EventStanding; passed: EventStanding[] }>('FRIEND_OVERTAKEN'),
      (rows) => rows.length >= 2,
      10_000,
    );
    expect(
      overtaken.map((row) => ({ period: row.period, by: trim(row.by), passed: row.passed.map(trim) })).sort((a, b) => a.period.localeCompare(b.period)),
    ).toEqual(
      ['ALL_TIME', 'SEASON'].map((period) => ({
        period,
        by: { rank: 1, playerId: 'Star', score: 100, tieBreakValues: [7] },
        passed: [{ rank: 2, playerId: 'fan', score: 100, tieBreakValues: [5] }],
      })),
    );
  });

  it('TOP_CHANGED and BUCKET_CLOSED carry each standing with its values', async () => {
    await submit('Ünal', 100, 6);
    const want = [
      { rank: 1, playerId: 'Star', score: 100, tieBreakValues: [7] },
      { rank: 2, playerId: 'Ünal', score: 100, tieBreakValues: [6] },
      { rank: 3, playerId: 'fan', score: 100, tieBreakValues: [5] },
    ];
    const tops = await settle(
      () => events<{ period: string; entries: EventStanding[] }>('TOP_CHANGED'),
      (rows) => rows.some((row) => row.period === 'ALL_TIME' && JSON.stringify(row.entries.map(trim)) === JSON.stringify(want)),
      20_000,
    );
    expect(
      tops
        .filter((row) => row.period === 'ALL_TIME')
        .at(-1)!
        .entries.map(trim),
    ).toEqual(want);
    const closed = await t.admin('mutation($b: ID!) { closeSeason(board: $b) { id } }', { b: BOARD });
    expect(closed.errors).toBeUndefined();
    const [bucketClosed] = await events<{ period: string; top: EventStanding[] }>('BUCKET_CLOSED');
    expect(bucketClosed!.period).toBe('SEASON');
    expect(bucketClosed!.top.map(trim)).toEqual(want);
  });
});
