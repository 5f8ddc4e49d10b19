import { describe, expect, it } from 'vitest';
import { type BucketCloser, startBucketCloser } from '../src/jobs/bucket-closer.js';
import { submit } from './helpers/bucket-history.js';
import { movableClock } from './helpers/clock.js';
import { type LeagueRules, leagueRound } from './helpers/league-oracle.js';
import { seeded } from './helpers/random.js';
import { type GraphQLResponse, type TestApp, codeOf, startTestApp } from './helpers/test-app.js';

/**
 * Rewards and awards (issue 58), against an oracle written here from the results sent (never the
 * service's own output): each rank style's bands with ties (fromRank/toRank, topPercent, bands that
 * overlap), a region's list, a day closed by the bucket closer on an injected clock, a season
 * closed by closeSeason, a league round; the awards read page by page; BUCKET_CLOSED and
 * LEAGUE_ROUND_CLOSED as written to the outbox (webhook_events), none without a webhook, none and
 * no awards from a close that rolls back; retention and erasure; the bands' input checks.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
type Style = 'ORDINAL' | 'COMPETITION' | 'DENSE';
interface Band {
  name: string;
  fromRank?: number;
  toRank?: number;
  topPercent?: number;
}
interface Sent {
  playerId: string;
  score: number;
  at: number;
  region: string | null;
}
interface Expected {
  band: string;
  playerId: string;
  rank: number;
  score: number;
}

const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id rewards { name fromRank toRank topPercent } } }`;
const UPDATE = `mutation($input: UpdateBoardInput!) { updateBoard(input: $input) { id rewards { name fromRank toRank topPercent } } }`;
const BOARD = `query($id: ID!) { board(id: $id) { rewards { name fromRank toRank topPercent } } }`;
const AWARDS = `query($board: ID!, $period: Period!, $bucket: String!, $region: String, $first: Int!, $after: String) {
  awards(board: $board, period: $period, bucket: $bucket, region: $region, first: $first, after: $after) {
    edges { cursor node { id band standing { rank score player { id } } } } pageInfo { hasNextPage endCursor } } }`;

const BANDS: Band[] = [
  { name: 'Gold', fromRank: 1, toRank: 1 },
  { name: 'Podium', fromRank: 1, toRank: 3 },
  { name: 'Top 10%', topPercent: 10 },
  { name: 'Middle', fromRank: 4, toRank: 7 },
  { name: 'Top 35%', topPercent: 35 },
];

// ---------------------------------------------------------------------------------------------
// The oracle: the list each close ranks, its rank styles and its bands, shared with nothing in src/.
// ---------------------------------------------------------------------------------------------

/** A list's standings: each player's best (one result each here), best score first, then the earlier, then the larger id in bytes. */
function ranked(sent: readonly Sent[], region: string | null): Sent[] {
  return sent
    .filter((s) => region === null || s.region === region)
    .sort((a, b) => b.score - a.score || a.at - b.at || Buffer.compare(Buffer.from(b.playerId), Buffer.from(a.playerId)));
}

/** Each standing's rank in `style`: its place; 1 + the players with a better score; 1 + the better distinct scores. */
function styleRanks(list: readonly Sent[], style: Style): number[] {
  return list.map((s, i) => {
    if (style === 'ORDINAL') return i + 1;
    const better = list.filter((o) => o.score > s.score);
    return 1 + (style === 'COMPETITION' ? better.length : new Set(better.map((o) => o.score)).size);
  });
}

/** The awards of a list: band by band, the players whose style rank is in the band's range (a percent: 1..ceil(size·p/100)), in rank order. */
function expectedAwards(list: readonly Sent[], style: Style, bands: readonly Band[]): Expected[] {
  const ranks = styleRanks(list, style);
  return bands.flatMap((band) => {
    const [from, to] = band.topPercent !== undefined ? [1, Math.ceil((list.length * band.topPercent) / 100)] : [band.fromRank!, band.toRank!];
    return list.flatMap((s, i) => (ranks[i]! >= from && ranks[i]! <= to ? [{ band: band.name, playerId: s.playerId, rank: ranks[i]!, score: s.score }] : []));
  });
}

const dayLabel = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const idOf = (parts: unknown[]) => Buffer.from(JSON.stringify(parts)).toString('base64url');

// The day played: two days from now (UTC), so the index's keys are kept by Redis's own clock too.
const D = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 2);
const LABEL = dayLabel(D);

type AwardPage = {
  awards: {
    edges: { cursor: string; node: { id: string; band: string; standing: { rank: number; score: number; player: { id: string } } } }[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
};

/** Every award of a list, walking pages of `first`; each page's cursors checked to go on where the last stopped. */
async function readAwards(t: TestApp, args: { board: string; period: string; bucket: string; region?: string | null }, first: number) {
  const all: { id: string; band: string; playerId: string; rank: number; score: number }[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 10_000; pages += 1) {
    const answer: GraphQLResponse<AwardPage> = await t.gql<AwardPage>(AWARDS, { ...args, first, after });
    expect(answer.errors).toBeUndefined();
    const { edges, pageInfo } = answer.data!.awards;
    expect(edges.length).toBeLessThanOrEqual(first);
    all.push(
      ...edges.map(({ node }) => ({ id: node.id, band: node.band, playerId: node.standing.player.id, rank: node.standing.rank, score: node.standing.score })),
    );
    if (!pageInfo.hasNextPage) return all;
    expect(edges.length).toBe(first);
    after = pageInfo.endCursor;
  }
  throw new Error('endless pages');
}

async function events(t: TestApp, board: string, type: string) {
  return t.database.sql<{ data: Record<string, unknown>; deliveries: number }[]>`
    select e.data, (select count(*)::int from webhook_deliveries d where d.event_id = e.id) as deliveries
    from webhook_events e where e.board_id = ${board} and e.type = ${type} order by e.id`;
}

async function addWebhook(t: TestApp, id: string, events: string[], boards: string[]) {
  await t.database.sql`
    insert into webhooks (id, url, events, boards, secret) values (${id}, 'https://receiver.invalid/hook', ${events}, ${boards}, 'whsec_dGVzdHRlc3R0ZXN0dGVzdA==')`;
}

async function createBoard(t: TestApp, input: Record<string, unknown>) {
  const answer = await t.admin(CREATE, { input: { title: String(input.id), maxScore: 1_000_000, closeGraceSeconds: 0, ...input } });
  expect(answer.errors).toBeUndefined();
}

/** A round of results: `n` players, scores from a few values (so ties), each at its own millisecond, some in region eu. */
function play(board: string, n: number, seed: number, prefix = 'p'): (Sent & { board: string })[] {
  const random = seeded(seed);
  return Array.from({ length: n }, (_, i) => ({
    board,
    playerId: `${prefix}${i}`,
    score: 100 * Math.floor(random() * 6),
    at: D + 60_000 + i * 1_000,
    region: random() < 0.5 ? 'eu' : null,
  }));
}

const toResults = (sent: readonly (Sent & { board: string })[]) =>
  sent.map((s) => ({ board: s.board, playerId: s.playerId, score: s.score, achievedAt: new Date(s.at), region: s.region }));

describe('awards at a close', () => {
  const clock = movableClock({ startsAt: new Date(D + 30 * 60_000) });
  let t: TestApp;
  let closer: BucketCloser;
  const played = new Map<string, (Sent & { board: string })[]>();
  const LEAGUE: LeagueRules = { tiers: ['Gold', 'Silver', 'Bronze'], cohortSize: 1_000, promote: 100, demote: 50, rankStyle: 'ORDINAL' };
  const leagueSent: (Sent & { board: string })[] = [];

  it('takes the results of a day on a board of each rank style, a league board and a board whose close fails', async () => {
    t = await startTestApp({ now: clock.now, seasonCloseIntervalMs: null });
    closer = startBucketCloser(t.app.parts, { intervalMs: null, settleMs: 0 });
    for (const [i, style] of (['ORDINAL', 'COMPETITION', 'DENSE'] as const).entries()) {
      const board = `aw-${style.toLowerCase()}`;
      await createBoard(t, { id: board, periods: ['DAILY'], regions: ['eu'], rankStyle: style, rewards: BANDS, topSize: 5 });
      played.set(board, play(board, 40, 7 + i));
      await submit(t, toResults(played.get(board)!));
    }
    // aw-ordinal's players have display names, but one: the events carry each as the profile has it.
    for (const s of played.get('aw-ordinal')!.slice(1)) {
      const named = await t.server(`mutation($id: ID!, $name: String) { upsertPlayer(input: { id: $id, displayName: $name }) { id } }`, {
        id: s.playerId,
        name: `Name ${s.playerId}`,
      });
      expect(named.errors).toBeUndefined();
    }
    await createBoard(t, { id: 'aw-fail', periods: ['DAILY'], rewards: [{ name: 'All', topPercent: 100 }] });
    played.set(
      'aw-fail',
      play('aw-fail', 10, 99).map((s) => ({ ...s, region: null })),
    );
    await submit(t, toResults(played.get('aw-fail')!));
    // A league of 1,050 players in one tier's two cohorts: two pages of outcomes; every player awarded (1,050 awards).
    await createBoard(t, {
      id: 'aw-league',
      periods: ['DAILY'],
      league: { tiers: LEAGUE.tiers, cohortSize: LEAGUE.cohortSize, promote: LEAGUE.promote, demote: LEAGUE.demote, period: 'DAILY' },
      rewards: [{ name: 'Everyone', topPercent: 100 }],
    });
    leagueSent.push(...play('aw-league', 1_050, 5, 'l').map((s) => ({ ...s, region: null })));
    await submit(t, toResults(leagueSent));
    await addWebhook(t, 'wh_awards', ['BUCKET_CLOSED', 'LEAGUE_ROUND_CLOSED'], ['aw-ordinal', 'aw-league', 'aw-fail', 'aw-season']);
  }, 120_000);

  it('answers BAD_USER_INPUT while the bucket is open, NOT_FOUND for an unknown board', async () => {
    const open = await t.gql(AWARDS, { board: 'aw-ordinal', period: 'DAILY', bucket: LABEL, first: 10 });
    expect(codeOf(open)).toBe('BAD_USER_INPUT');
    const unknown = await t.gql(AWARDS, { board: 'aw-nobody', period: 'DAILY', bucket: LABEL, first: 10 });
    expect(codeOf(unknown)).toBe('NOT_FOUND');
    const outOfBounds = await t.gql(AWARDS, { board: 'aw-ordinal', period: 'DAILY', bucket: LABEL, first: 1_001 });
    expect(codeOf(outOfBounds)).toBe('BAD_USER_INPUT');
  });

  it('a close that fails mid-freeze writes no awards and no event; the next pass closes it with both', async () => {
    await t.database.sql`
      create function aw_fail() returns trigger language plpgsql as $$
      begin if new.board_id = 'aw-fail' then raise exception 'provoked failure'; end if; return new; end $$`;
    await t.database.sql`create trigger aw_fail before insert on awards for each row execute function aw_fail()`;
    // cohort_members and players are never analyzed here, as in a new deployment before autovacuum's
    // first pass: the league round's close (1,050 members) takes seconds all the same, not minutes.
    clock.advance(D + DAY + 1_000 - clock.now().getTime());
    await closer.pass().catch(() => undefined);
    const failed = await t.database.sql`select 1 from frozen_buckets where board_id = 'aw-fail' and bucket = ${LABEL}`;
    expect(failed).toHaveLength(0);
    expect(await t.database.sql`select 1 from awards where board_id = 'aw-fail'`).toHaveLength(0);
    expect(await events(t, 'aw-fail', 'BUCKET_CLOSED')).toHaveLength(0);
    await t.database.sql`drop trigger aw_fail on awards`;
    await t.database.sql`drop function aw_fail()`;
    await closer.pass();
    const list = ranked(played.get('aw-fail')!, null);
    expect((await readAwards(t, { board: 'aw-fail', period: 'DAILY', bucket: LABEL }, 100)).map((a) => a.playerId)).toEqual(list.map((s) => s.playerId));
    const [event] = (await events(t, 'aw-fail', 'BUCKET_CLOSED')).filter((e) => e.data.bucket === LABEL);
    expect(event!.data.awardCount).toBe(list.length);
  }, 180_000);

  for (const style of ['ORDINAL', 'COMPETITION', 'DENSE'] as const) {
    it(`${style}: each band's awards, ties sharing a band, globally and in a region, page by page`, async () => {
      const board = `aw-${style.toLowerCase()}`;
      for (const region of [null, 'eu']) {
        const list = ranked(played.get(board)!, region);
        const expected = expectedAwards(list, style, BANDS);
        // Ties make a band hold more than its width (not for ORDINAL).
        if (style !== 'ORDINAL' && region === null) expect(expected.filter((a) => a.band === 'Podium').length).toBeGreaterThan(3);
        for (const first of [3, 100]) {
          const read = await readAwards(t, { board, period: 'DAILY', bucket: LABEL, region }, first);
          expect(read.map(({ band, playerId, rank, score }) => ({ band, playerId, rank, score }))).toEqual(expected);
          expect(read.map((a) => a.id)).toEqual(expected.map((a) => idOf([board, 'DAILY', LABEL, region, a.band, a.playerId])));
          expect(new Set(read.map((a) => a.id)).size).toBe(read.length);
        }
        // The rank kept with each award is the frozen (ordinal) one.
        const rows = await t.database.sql<{ band: string; rank: number; player_id: string }[]>`
          select band, rank, player_id from awards where board_id = ${board} and period = 'DAILY' and bucket = ${LABEL} and region = ${region ?? ''}
          order by band_index, rank`;
        expect(rows.map((row) => [row.band, row.player_id, row.rank])).toEqual(
          expected.map((a) => [a.band, a.playerId, list.findIndex((s) => s.playerId === a.playerId) + 1]),
        );
      }
    });
  }

  it('BUCKET_CLOSED: one event per list frozen, with the top and the awards; none for a board no webhook wants', async () => {
    for (const region of [null, 'eu']) {
      const list = ranked(played.get('aw-ordinal')!, region);
      const found = (await events(t, 'aw-ordinal', 'BUCKET_CLOSED')).filter((e) => e.data.bucket === LABEL && e.data.region === region);
      expect(found).toHaveLength(1);
      const { data, deliveries } = found[0]!;
      expect(deliveries).toBe(1);
      const expected = expectedAwards(list, 'ORDINAL', BANDS);
      expect(data).toMatchObject({ boardId: 'aw-ordinal', period: 'DAILY', bucket: LABEL, region, size: list.length, awardCount: expected.length });
      expect(data.top).toEqual(
        list.slice(0, 5).map((s, i) => ({
          rank: i + 1,
          playerId: s.playerId,
          displayName: s.playerId === 'p0' ? null : `Name ${s.playerId}`,
          score: s.score,
          achievedAt: new Date(s.at).toISOString(),
        })),
      );
      expect(
        (data.awards as { id: string; band: string; standing: { playerId: string; rank: number } }[]).map((a) => [
          a.id,
          a.band,
          a.standing.playerId,
          a.standing.rank,
        ]),
      ).toEqual(expected.map((a) => [idOf(['aw-ordinal', 'DAILY', LABEL, region, a.band, a.playerId]), a.band, a.playerId, a.rank]));
    }
    // Every earlier kept day was frozen too (empty): each its own event.
    expect((await events(t, 'aw-ordinal', 'BUCKET_CLOSED')).every((e) => e.data.bucket === LABEL || e.data.size === 0)).toBe(true);
    expect(await events(t, 'aw-competition', 'BUCKET_CLOSED')).toHaveLength(0);
    expect(await events(t, 'aw-dense', 'BUCKET_CLOSED')).toHaveLength(0);
  });

  it('a league round: its awards and BUCKET_CLOSED (the first 1,000 of 1,050), and LEAGUE_ROUND_CLOSED in pages of 1,000 outcomes', async () => {
    const list = ranked(leagueSent, null);
    const [closed] = (await events(t, 'aw-league', 'BUCKET_CLOSED')).filter((e) => e.data.bucket === LABEL);
    expect(closed!.data.awardCount).toBe(1_050);
    expect((closed!.data.awards as { standing: { playerId: string } }[]).map((a) => a.standing.playerId)).toEqual(list.slice(0, 1_000).map((s) => s.playerId));
    const read = await readAwards(t, { board: 'aw-league', period: 'DAILY', bucket: LABEL }, 1_000);
    expect(read.map((a) => a.playerId)).toEqual(list.map((s) => s.playerId));

    const round = leagueRound(
      LEAGUE,
      LABEL,
      leagueSent.map((s) => ({ playerId: s.playerId, score: s.score, achievedAt: new Date(s.at) })),
      new Map(),
    );
    const expected = round.cohorts.flatMap((cohort) =>
      cohort.entries.map((entry) => {
        const outcome = cohort.outcomes.get(entry.playerId)!;
        const tier = LEAGUE.tiers.indexOf(cohort.tier);
        const next = LEAGUE.tiers[tier + (outcome === 'PROMOTED' ? -1 : outcome === 'DEMOTED' ? 1 : 0)];
        return { playerId: entry.playerId, tier: cohort.tier, cohort: cohort.number, rank: entry.rank, outcome, nextTier: next };
      }),
    );
    expect(expected).toHaveLength(1_050);
    // The round played, in two pages; the earlier (empty) rounds the closer closed each in one page with no outcomes.
    const all = await events(t, 'aw-league', 'LEAGUE_ROUND_CLOSED');
    expect(all.filter((p) => p.data.round !== LABEL).every((p) => p.data.pages === 1 && (p.data.outcomes as unknown[]).length === 0)).toBe(true);
    const pages = all.filter((p) => p.data.round === LABEL);
    expect(pages.map((p) => [p.data.page, p.data.pages, (p.data.outcomes as unknown[]).length])).toEqual([
      [1, 2, 1_000],
      [2, 2, 50],
    ]);
    expect(pages.flatMap((p) => p.data.outcomes as unknown[])).toEqual(expected);
  });

  it('a season closed by closeSeason has its awards and its event', async () => {
    clock.advance(D + DAY + 2 * HOUR - clock.now().getTime());
    await createBoard(t, { id: 'aw-season', periods: ['SEASON'], rankStyle: 'COMPETITION', rewards: BANDS });
    const started = await t.admin<{ startSeason: { id: string } }>(`mutation($b: ID!) { startSeason(board: $b, name: "S") { id } }`, { b: 'aw-season' });
    expect(started.errors).toBeUndefined();
    const season = started.data!.startSeason.id;
    const from = clock.now().getTime() + 1_000;
    const sent = play('aw-season', 30, 11).map((s, i) => ({ ...s, at: from + i * 1_000, region: null }));
    await submit(t, toResults(sent));
    const open = await t.gql(AWARDS, { board: 'aw-season', period: 'SEASON', bucket: season, first: 10 });
    expect(codeOf(open)).toBe('BAD_USER_INPUT');
    expect((await t.admin(`mutation($b: ID!) { closeSeason(board: $b) { id } }`, { b: 'aw-season' })).errors).toBeUndefined();
    const expected = expectedAwards(ranked(sent, null), 'COMPETITION', BANDS);
    const read = await readAwards(t, { board: 'aw-season', period: 'SEASON', bucket: season }, 7);
    expect(read.map(({ band, playerId, rank, score }) => ({ band, playerId, rank, score }))).toEqual(expected);
    const [event] = await events(t, 'aw-season', 'BUCKET_CLOSED');
    expect(event!.data).toMatchObject({ bucket: season, period: 'SEASON', awardCount: expected.length });
  });

  it("an erased player's awards go; a list's awards go with it at its retention", async () => {
    const list = ranked(played.get('aw-dense')!, null);
    const gone = list[0]!.playerId;
    expect((await t.admin(`mutation($p: ID!) { deletePlayer(playerId: $p) }`, { p: gone })).errors).toBeUndefined();
    const read = await readAwards(t, { board: 'aw-dense', period: 'DAILY', bucket: LABEL }, 100);
    expect(read.map(({ band, playerId }) => [band, playerId])).toEqual(
      expectedAwards(list, 'DENSE', BANDS)
        .filter((a) => a.playerId !== gone)
        .map((a) => [a.band, a.playerId]),
    );
    expect(await t.database.sql`select 1 from awards where player_id = ${gone}`).toHaveLength(0);
    await t.app.parts.storage.frozen.drop([{ boardId: 'aw-dense', period: 'DAILY', bucket: LABEL, region: 'eu' }]);
    expect(await t.database.sql`select 1 from awards where board_id = 'aw-dense' and region = 'eu'`).toHaveLength(0);
    expect((await t.database.sql`select 1 from awards where board_id = 'aw-dense' and region = ''`).length).toBeGreaterThan(0);
  });
});

describe("rewards' input", () => {
  it('refuses bands out of bounds at createBoard and updateBoard, changing nothing; reads them back', async () => {
    const t = await startTestApp();
    const bad: unknown[][] = [
      [{ name: 'A', fromRank: 0, toRank: 3 }],
      [{ name: 'A', fromRank: 5, toRank: 4 }],
      [{ name: 'A', fromRank: 1, toRank: 100_000_001 }],
      [{ name: 'A', topPercent: 0 }],
      [{ name: 'A', topPercent: 100.5 }],
      [{ name: 'A', fromRank: 1, toRank: 2, topPercent: 5 }],
      [{ name: 'A', fromRank: 1 }],
      [{ name: 'A' }],
      [{ name: '', topPercent: 5 }],
      [{ name: 'x'.repeat(41), topPercent: 5 }],
      [
        { name: 'A', topPercent: 5 },
        { name: 'a', topPercent: 6 },
      ],
      Array.from({ length: 21 }, (_, i) => ({ name: `b${i}`, topPercent: 5 })),
    ];
    for (const [i, rewards] of bad.entries()) {
      const answer = await t.admin(CREATE, { input: { id: `rw-${i}`, title: 't', maxScore: 100, rewards } });
      expect(codeOf(answer), JSON.stringify(rewards)).toBe('BAD_USER_INPUT');
      expect((await t.gql<{ board: unknown }>(BOARD, { id: `rw-${i}` })).data?.board ?? null).toBeNull();
    }
    const good = [
      { name: 'Gold', fromRank: 1, toRank: 1, topPercent: null },
      { name: 'Top', fromRank: null, toRank: null, topPercent: 12.5 },
    ];
    const created = await t.admin<{ createBoard: { rewards: unknown } }>(CREATE, { input: { id: 'rw-good', title: 't', maxScore: 100, rewards: good } });
    expect(created.data?.createBoard.rewards).toEqual(good);
    for (const rewards of bad) {
      expect(codeOf(await t.admin(UPDATE, { input: { id: 'rw-good', rewards } }))).toBe('BAD_USER_INPUT');
    }
    expect((await t.gql<{ board: { rewards: unknown } }>(BOARD, { id: 'rw-good' })).data?.board.rewards).toEqual(good);
    const changed = [{ name: 'Silver', fromRank: 2, toRank: 5, topPercent: null }];
    expect((await t.admin<{ updateBoard: { rewards: unknown } }>(UPDATE, { input: { id: 'rw-good', rewards: changed } })).data?.updateBoard.rewards).toEqual(
      changed,
    );
    expect((await t.gql<{ board: { rewards: unknown } }>(BOARD, { id: 'rw-good' })).data?.board.rewards).toEqual(changed);
  });
});
