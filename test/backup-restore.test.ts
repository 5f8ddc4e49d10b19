import { describe, expect, it } from 'vitest';
import type { SourceMark } from '../src/model/source-mark.js';
import { createIndexGeneration } from '../src/ranking/generation.js';
import { defineRankingScripts } from '../src/ranking/scripts/index.js';
import { operatorSession } from './helpers/operator-session.js';
import { rankScores } from './helpers/oracle.js';
import { scratchRedis } from './helpers/redis-keys.js';
import type { TestApp } from './helpers/test-app.js';
import { settle, until } from './helpers/wait.js';

/**
 * Backup and restore, as the README tells it: PostgreSQL dumped, more results submitted, PostgreSQL
 * restored from the dump. The index (Redis) is then ahead of the truth: the service must notice by
 * itself and rebuild, so that every read equals the restored truth (an oracle of the results
 * submitted before the dump), never a rank PostgreSQL no longer backs. And `rebuild --all`.
 */

const SUBMIT = `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`;
const PERIODS = ['ALL_TIME', 'MONTHLY', 'WEEKLY', 'DAILY'] as const;
const READ = `query($period: Period!, $player: ID!) {
  top(board: "global", period: $period, limit: 100) { size entries { rank score player { id } } }
  standing(board: "global", period: $period, playerId: $player) { rank score }
}`;

interface Read {
  top: { size: number; entries: { rank: number; score: number; player: { id: string } }[] };
  standing: { rank: number; score: number } | null;
}

/** The board as a plain sort of the best score per player would have it (global: BEST, highest first; scores distinct). */
function oracle(best: Map<string, number>) {
  const entries = rankScores(best).map(([id, score], i) => ({ rank: i + 1, score, player: { id } }));
  return { size: entries.length, entries };
}

describe('backup and restore of PostgreSQL', () => {
  const session = operatorSession('restore');
  const truth = new Map<string, number>();
  let match = 0;

  async function submit(scores: [string, number][], into?: Map<string, number>) {
    const inputs = scores.map(([playerId, score]) => ({ board: 'global', playerId, score, matchId: `m${++match}` }));
    const answer = await session.api.server(SUBMIT, { inputs });
    expect(answer.errors).toBeUndefined();
    for (const [player, score] of scores) into?.set(player, Math.max(score, into.get(player) ?? 0));
  }

  /** Every period's top and one player's standing, or null while any answers UNAVAILABLE (a rebuild under way). */
  async function readAll(player: string) {
    const reads: Record<string, Read> = {};
    for (const period of PERIODS) {
      const answer = await session.api.gql<Read>(READ, { period, player });
      if (answer.errors?.some((error) => error.extensions?.code === 'UNAVAILABLE')) return null;
      expect(answer.errors).toBeUndefined();
      reads[period] = answer.data!;
    }
    return reads;
  }

  /** Polls (bounded) until every read equals `best`'s oracle, and answers the last reads. */
  async function untilReadsEqual(best: Map<string, number>, player: string) {
    const want = oracle(best);
    const wantStanding = want.entries.find((entry) => entry.player.id === player);
    return settle(
      () => readAll(player),
      (last) =>
        last !== null &&
        PERIODS.every(
          (period) =>
            JSON.stringify(last[period]!.top) === JSON.stringify(want) &&
            JSON.stringify(last[period]!.standing) === JSON.stringify(wantStanding ? { rank: wantStanding.rank, score: wantStanding.score } : null),
        ),
      15_000,
    );
  }

  it('dump, submit more, restore: the service notices and every read equals the restored truth', { timeout: 120_000 }, async () => {
    await submit(
      [
        ['ada', 500],
        ['bob', 400],
        ['cid', 300],
        ['dee', 200],
        ['eve', 100],
      ],
      truth,
    );
    await submit([['ünï', 250]], truth);
    expect(await untilReadsEqual(truth, 'eve')).not.toBeNull();
    // A board whose days take late results for two days (closeGraceSeconds): yesterday is still open on it.
    const created = await session.api.admin(
      `mutation { createBoard(input: { id: "late", title: "Late", maxScore: 1000, periods: [ALL_TIME, DAILY], closeGraceSeconds: 172800 }) { id } }`,
    );
    expect(created.errors).toBeUndefined();

    // The README's backup.
    await session.sh('pg_dump --format=custom --file=leaderboard.dump "$DATABASE_URL"');

    // After the backup: better scores, new players, so the index holds ranks the backup does not.
    const after = new Map(truth);
    await submit(
      [
        ['eve', 900],
        ['fay', 800],
        ['gus', 450],
      ],
      after,
    );
    await submit([['bob', 600]], after);
    const ahead = await untilReadsEqual(after, 'eve');
    expect(ahead!.ALL_TIME!.top).toEqual(oracle(after));
    expect(ahead!.ALL_TIME!.standing).toEqual({ rank: 1, score: 900 });
    // A bucket only results after the backup made: yesterday's on the late board, which the dump holds no score of.
    const yesterday = new Date(Date.now() - 86_400_000).toISOString();
    const answer = await session.api.server(SUBMIT, { inputs: [{ board: 'late', playerId: 'hal', score: 50, matchId: 'late', achievedAt: yesterday }] });
    expect(answer.errors).toBeUndefined();
    const DAY = `query($bucket: String) { top(board: "late", period: DAILY, bucket: $bucket) { size entries { player { id } } } }`;
    const day = yesterday.slice(0, 10);
    expect((await session.api.gql<{ top: { size: number } }>(DAY, { bucket: day })).data?.top.size).toBe(1);

    // The README's restore: every API process stopped, the database made again from the dump, the service started.
    await session.first.stop();
    const database = new URL(session.first.databaseUrl).pathname.slice(1);
    const maintenance = new URL(session.first.databaseUrl);
    maintenance.pathname = '/postgres';
    await session.sh(
      `psql -q "${maintenance.href}" -c 'drop database "${database}" with (force)' -c 'create database "${database}"' && pg_restore --dbname="$DATABASE_URL" leaderboard.dump`,
    );
    await session.restart();

    // Every read equals the restored truth: eve back to 100 and last, fay and gus gone.
    const restored = await untilReadsEqual(truth, 'eve');
    expect(restored!.ALL_TIME!.top).toEqual(oracle(truth));
    expect(restored!.ALL_TIME!.standing).toEqual({ rank: 6, score: 100 });
    const gone = await session.api.gql<Read>(READ, { period: 'ALL_TIME', player: 'fay' });
    expect(gone.data?.standing).toBeNull();

    // Yesterday's bucket, which PostgreSQL no longer backs, is gone from the index too.
    expect((await session.api.gql<{ top: { size: number } }>(DAY, { bucket: day })).data?.top).toEqual({ size: 0, entries: [] });

    // Submissions go on from the restored truth.
    await submit([['fay', 350]], truth);
    expect(await untilReadsEqual(truth, 'fay')).not.toBeNull();
  });

  it('rebuild --all rebuilds every live bucket from PostgreSQL', { timeout: 60_000 }, async () => {
    // An index gone wrong behind the service's back: a member PostgreSQL does not have, in every bucket.
    // KEYS patterns are not prefixed by ioredis; the keys come back with the prefix.
    const { redis, keyPrefix } = session.first;
    const keys = await redis.keys(`${keyPrefix}lb:{global:*}`);
    const bucketKeys = keys.map((key) => key.slice(keyPrefix.length)).filter((key) => /^lb:\{global:(ALL_TIME|MONTHLY|WEEKLY|DAILY):[^}]*\}$/.test(key));
    // One bucket a period: the buckets only results after the backup made went with the restore.
    expect(bucketKeys.map((key) => key.split(':')[2]).sort()).toEqual(['ALL_TIME', 'DAILY', 'MONTHLY', 'WEEKLY']);
    for (const key of bucketKeys) await redis.zadd(key, 1e15, 'ghost');
    expect((await session.api.gql<Read>(READ, { period: 'ALL_TIME', player: 'ghost' })).data?.standing).not.toBeNull();

    const { stdout } = await session.cli('rebuild', '--all');
    expect(stdout).toMatch(/rebuilt \d+ buckets/);
    // The top cache serves at most about a second: poll until every read is the truth again.
    const reads = await untilReadsEqual(truth, 'ghost');
    expect(reads!.ALL_TIME!.standing).toBeNull();
    expect(reads!.ALL_TIME!.top).toEqual(oracle(truth));
  });
});

describe('a restore of the data alone, after moderation alone', () => {
  const session = operatorSession('restore-data');
  const TOP = `query { top(board: "global", limit: 100) { size entries { rank score player { id } } } }`;
  const topOf = async (app: TestApp) => {
    const answer = await app.gql<{ top: Read['top'] }>(TOP);
    return answer.errors ? null : answer.data!.top;
  };
  /** The index's kept mark of the outbox sequence, as the generation check last wrote it. */
  const keptWrites = async () => {
    const t = session.first;
    const [marker] = (await t.redis.keys(`${t.keyPrefix}lb:{generation:*`)).filter((key) => !key.endsWith(':pending'));
    // KEYS answers the keys with the prefix, which the client adds again.
    return marker ? Number(await t.redis.hget(marker.slice(t.keyPrefix.length), 'pg_writes')) : NaN;
  };

  it(
    'a flag and an erasure after the backup, then pg_restore --data-only into the same database: the index follows the restored truth',
    { timeout: 120_000 },
    async () => {
      const { first: t, sh } = session;
      const truth = new Map([
        ['ada', 500],
        ['bob', 400],
        ['çé', 300],
        ['dee', 200],
      ]);
      const inputs = [...truth].map(([playerId, score], i) => ({ board: 'global', playerId, score, matchId: `d${i}` }));
      expect((await t.server(`mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`, { inputs })).errors).toBeUndefined();
      await until(async () => (await topOf(t))?.size === 4, 10_000, 'the four players ranked');
      await sh('pg_dump --format=custom --file=data.dump "$DATABASE_URL"');
      const dumped = Number((await sh(`psql -tA "$DATABASE_URL" -c 'select last_value from index_backlog_id_seq'`)).stdout);

      // After the backup: moderation only, no submission.
      expect((await t.admin(`mutation { flagPlayer(playerId: "ada", reason: "cheat") { id } }`)).errors).toBeUndefined();
      expect((await t.admin(`mutation { deletePlayer(playerId: "çé") }`)).errors).toBeUndefined();
      await until(async () => (await topOf(t))?.size === 2, 10_000, 'ada hidden and çé erased');
      // The generation check keeps a mark at most a second old: wait for one taken after the moderation.
      await until(async () => (await keptWrites()) > dumped, 10_000, 'a mark taken after the moderation');

      // The data alone restored into the same database (its identity unchanged), every process stopped.
      await t.stop();
      await sh(
        `psql -q -v ON_ERROR_STOP=1 "$DATABASE_URL" -c "do \\$\\$ begin execute (select 'truncate ' || string_agg(format('%I.%I', schemaname, tablename), ', ') from pg_tables where schemaname in ('public', 'drizzle')); end \\$\\$" && pg_restore --data-only --disable-triggers --dbname="$DATABASE_URL" data.dump`,
      );
      const next = await session.restart();

      const want = oracle(truth);
      await until(async () => JSON.stringify(await topOf(next)) === JSON.stringify(want), 30_000, 'the top equals the restored truth, ada and çé back');
    },
  );
});

describe("the generation check's PostgreSQL mark", () => {
  const { redis } = scratchRedis('source-mark');
  const generation = createIndexGeneration(redis);
  const mark = (writes: number, lsn: number, at: number, identity = '1.2') => ({ identity, writes, lsn, at });
  const claimOf = async (source?: SourceMark) => (await generation.check(source))[0]!.claimed;

  defineRankingScripts(redis);

  it('sets a new generation when the database is another, or its counters went back while its clock went on', async () => {
    const t0 = Date.parse('2037-01-01T00:00:00Z');
    expect(await claimOf(mark(100, 5_000, t0))).toBe('empty');
    // Moving forward, read by processes a moment apart (a reading older than the kept one is never a step back).
    expect(await claimOf(mark(140, 6_000, t0 + 1_500))).toBe(null);
    expect(await claimOf(mark(120, 5_500, t0 + 1_200))).toBe(null);
    expect(await claimOf(mark(150, 6_500, t0 + 1_900))).toBe(null);
    expect(await claimOf()).toBe(null);
    // The outbox sequence back, more than a second after the kept mark: restored from a backup.
    expect(await claimOf(mark(110, 7_000, t0 + 3_000))).toBe('restored');
    expect(await claimOf(mark(115, 7_100, t0 + 4_500))).toBe(null);
    // The write-ahead log back (a physical restore).
    expect(await claimOf(mark(130, 100, t0 + 6_000))).toBe('restored');
    // Another database altogether.
    expect(await claimOf(mark(135, 200, t0 + 6_100, '9.9'))).toBe('restored');
    expect(await claimOf(mark(136, 300, t0 + 6_200, '9.9'))).toBe(null);
  });
});
