import { watchCommands } from './helpers/monitor.js';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { movableClock } from './helpers/clock.js';
import { rankScores } from './helpers/oracle.js';
import { type OwnRedis, startOwnRedis } from './helpers/redis-server.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';
import { DEFAULT_PROFILE_HASHES, profileHashKey } from '../src/profiles/store.js';

/**
 * Issue 54, part 5: a single submitScore on one Redis node costs at most four Redis commands, one
 * script writing every bucket of the result and answering its standings (it took one script call
 * a bucket, seven commands for a board of five periods, before). Counted by Redis itself: MONITOR
 * on a redis-server of the test's own, every command the app's connection sent while one
 * submission ran (the commands a script runs inside it, listed by MONITOR as `lua`, are not the
 * client's). The standings the call answers are checked against a plain sort of every result sent.
 */

// A date to come (2037 has 2026's calendar): the index sets Redis expiries from this clock.
const NOW = new Date('2037-06-10T12:00:00.000Z');
const PERIODS = ['ALL_TIME', 'SEASON', 'DAILY', 'WEEKLY', 'MONTHLY'];
const MAX_COMMANDS = 4;

interface Standing {
  period: string;
  bucket: string;
  standing: { rank: number; score: number; percentile: number } | null;
}

const SUBMIT = `mutation($input: SubmitScoreInput!) {
  submitScore(input: $input) { duplicate improved standings { period bucket standing { rank score percentile } } }
}`;

describe('a single submitScore on one Redis node', () => {
  let redis: OwnRedis;
  let t: TestApp;
  const clock = movableClock({ startsAt: NOW });
  beforeAll(async () => {
    redis = await startOwnRedis();
    // The background jobs that read Redis on a timer are slowed down, so that what the window sees is the call's.
    t = await startTestApp({
      redisUrl: redis.url,
      now: clock.now,
      indexRecovery: { intervalMs: 600_000 },
      indexCatchUp: { intervalMs: 600_000 },
      seasonCloseIntervalMs: null,
    });
    const created = await t.admin(`mutation { createBoard(input: { id: "solo", title: "Solo", maxScore: 1000000, periods: [${PERIODS.join(', ')}] }) { id } }`);
    expect(created.errors).toBeUndefined();
    expect((await t.admin(`mutation { startSeason(board: "solo", name: "S1") { id } }`)).errors).toBeUndefined();
  });
  afterAll(async () => {
    await t?.close();
    await redis?.kill();
  });

  /** The best score of each player sent so far (BEST, HIGH_FIRST; every result falls in every bucket). */
  const best = new Map<string, number>();
  let match = 0;
  /** The percentage of ranked players a rank is ahead of, as Standing.percentile is defined. */
  const percentileOf = (rank: number) => (100 * (best.size - rank)) / best.size;
  const submit = async (playerId: string, score: number) => {
    const answer = await t.server<{ submitScore: { duplicate: boolean; improved: boolean; standings: Standing[] } }>(SUBMIT, {
      input: { board: 'solo', playerId, score, matchId: `m${match++}` },
    });
    expect(answer.errors).toBeUndefined();
    best.set(playerId, Math.max(best.get(playerId) ?? -Infinity, score));
    return answer.data!.submitScore;
  };

  /** The commands the app's own connection sent, as MONITOR lists them, while `run` ran. */
  async function commandsOf<T>(run: () => Promise<T>): Promise<{ commands: string[]; answer: T }> {
    const port = (t.redis as Redis).stream.localPort;
    const commands: string[] = [];
    // A MONITOR socket of its own (helpers/monitor.ts): ioredis's monitor mode throws "Command queue
    // state error" when a line arrives as it disconnects.
    const monitor = await watchCommands(redis.port, (args, source) => {
      if (source === `127.0.0.1:${port}`) commands.push(args.map((arg) => arg.slice(0, 40)).join(' '));
    });
    try {
      // MONITOR lists every command run after it answered. Every command the call sent ran before
      // its answer came back (the flag check's token read too: it is sent once the write was
      // answered, before the call answers); a moment more lets MONITOR deliver the last of them.
      const answer = await run();
      await new Promise((resolve) => setTimeout(resolve, 200));
      return { commands, answer };
    } finally {
      monitor.close();
    }
  }

  it(`writes every bucket and answers its standings in at most ${MAX_COMMANDS} commands, the standings the oracle's`, async () => {
    // Others on the board first, and the player's own earlier result; one call each.
    for (const [i, id] of ['ana', 'ben', 'cem', 'dia', 'eli', 'fay'].entries()) await submit(id, 100 * (i + 1));
    await submit('gus', 250);
    // Their profiles (none) are brought into Redis just after each answer (ProfileCache.remember, after a
    // PostgreSQL read): waited for here, so that none of it lands in a window below.
    await until(
      async () =>
        (await Promise.all(['ana', 'ben', 'cem', 'dia', 'eli', 'fay', 'gus'].map((id) => t.redis.hget(profileHashKey(id, DEFAULT_PROFILE_HASHES), id)))).every(
          (held) => held !== null,
        ),
      10_000,
      'the profiles of the players placed before the windows, kept in Redis',
    );

    for (const [playerId, score] of [
      ['gus', 450],
      ['hal', 50],
      ['ana', 700],
    ] as const) {
      const { commands: all, answer } = await commandsOf(() => submit(playerId, score));
      // A player new to a bucket (hal, the first time) has their profile, or that they have none,
      // brought into Redis at the end of the turn (ProfileCache.remember), so that their first read
      // asks PostgreSQL nothing: one read of the profiles and, when Redis did not hold it, one keep.
      // Those are the profile cache's, sent after the answer; the submission's own are the rest.
      const profiles = all.filter((command) => command.includes(':lb:{prof'));
      const commands = all.filter((command) => !profiles.includes(command));
      expect(profiles.length, `the profile cache's commands:\n${profiles.join('\n')}`).toBeLessThanOrEqual(playerId === 'hal' ? 2 : 0);
      expect(commands.length, `the commands of one submitScore:\n${commands.join('\n')}`).toBeLessThanOrEqual(MAX_COMMANDS);
      // One script call wrote every bucket.
      expect(commands.filter((command) => /^(evalsha|eval) /i.test(command))).toHaveLength(1);

      const ranked = rankScores(best);
      const rank = ranked.findIndex(([id]) => id === playerId) + 1;
      const expected = { rank, score: best.get(playerId)!, percentile: percentileOf(rank) };
      expect(answer.duplicate).toBe(false);
      expect(answer.standings.map((s) => s.period).sort()).toEqual([...PERIODS].sort());
      for (const standing of answer.standings) expect(standing.standing, standing.period).toEqual(expected);
    }

    // A replay answers as the first call would now, from the index.
    const replay = await t.server<{ submitScore: { duplicate: boolean; standings: Standing[] } }>(SUBMIT, {
      input: { board: 'solo', playerId: 'hal', score: 50, matchId: `m${match - 2}` },
    });
    expect(replay.data?.submitScore.duplicate).toBe(true);
    const hal = rankScores(best).findIndex(([id]) => id === 'hal') + 1;
    expect(replay.data?.submitScore.standings.map((s) => s.standing)).toEqual(PERIODS.map(() => ({ rank: hal, score: 50, percentile: percentileOf(hal) })));
  });
});
