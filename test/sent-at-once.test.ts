import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { bucketAt } from '../src/model/buckets.js';
import { PLACE_LOADS_SENT_AT, createPlaceLoader } from '../src/reads/place-loader.js';
import { createProfileStore } from '../src/profiles/store.js';
import { type BoardBucket, createRankingIndex } from '../src/ranking/index.js';
import { indexTestBoard } from './helpers/board-views.js';
import { rankScores } from './helpers/oracle.js';
import { scratchRedis } from './helpers/redis-keys.js';

/**
 * The reads that are already one call for many requests (a turn's places and profiles, a bucket's
 * shared top) leave for Redis in the turn they are called in (redis.ts, sendAtOnce), not held by
 * ioredis's auto-pipelining for a setImmediate, which under load put a whole turn of other
 * requests' work in front of every read. Seen from the client's own socket: the command's bytes
 * are handed to it before the event loop turns, where an ordinary command (still auto-pipelined,
 * checked alongside) is not yet. Each answer is checked against a plain sort of the scores written.
 */

// A date to come (2037 has 2026's calendar): the index sets Redis expiries from this clock.
const NOW = new Date('2037-11-29T12:00:00.000Z');
const PLAYERS = ['Zoë', 'zoë', 'Spieler-Ü', '玩家', ...Array.from({ length: 12 }, (_, i) => `Pl-${i}`)];
const SCORES = new Map(PLAYERS.map((id, i) => [id, 5 + ((i * 7) % 40)] as const));
const RANKED = rankScores(SCORES);

describe('reads gathered per turn are sent in the turn they are called in', () => {
  const { redis } = scratchRedis('sent-at-once');
  const index = createRankingIndex(redis);
  const profiles = createProfileStore(redis);
  const board = indexTestBoard('Arena-EU', 1, 'HIGH_FIRST', 'BEST', 3, NOW);
  const at: BoardBucket = { board, bucket: bucketAt(board, 'ALL_TIME', NOW), region: null };

  /** Bytes this client has handed to its socket so far. */
  const written = () => (redis as Redis).stream.bytesWritten;
  /** Every promise job and process.nextTick callback queued now has run; the event loop has not turned. */
  const beforeTheTurn = () => new Promise<void>((resolve) => process.nextTick(resolve));

  /** Calls `read` and answers whether its command was on the socket before the event loop turned, with its answer. */
  async function sentBeforeTheTurn<T>(read: () => Promise<T>): Promise<{ sent: boolean; answer: T }> {
    const before = written();
    const answer = read();
    await beforeTheTurn();
    const sent = written() > before;
    return { sent, answer: await answer };
  }

  it('places, around runs, tops and profiles leave at once; an ordinary command waits for the turn, as auto-pipelined', async () => {
    await index.writeBoardScores([...SCORES].map(([playerId, score]) => ({ at, score: { playerId, score, reachedAt: NOW }, expiresAt: null })));
    const rankOf = (playerId: string) => RANKED.findIndex(([id]) => id === playerId) + 1;

    const standings = await sentBeforeTheTurn(() => index.standings(at, ['Spieler-Ü', 'nobody']));
    expect(standings.sent).toBe(true);
    expect(standings.answer.size).toBe(PLAYERS.length);
    expect(standings.answer.places.map((place) => place && [place.playerId, place.rank, place.score])).toEqual([
      ['Spieler-Ü', rankOf('Spieler-Ü'), SCORES.get('Spieler-Ü')],
      null,
    ]);

    const arounds = await sentBeforeTheTurn(() => index.arounds(at, [{ playerId: '玩家', radius: 1 }]));
    expect(arounds.sent).toBe(true);
    const own = rankOf('玩家');
    expect(arounds.answer[0]!.places.map((place) => place.playerId)).toEqual(RANKED.slice(own - 2, own + 1).map(([id]) => id));

    const top = await sentBeforeTheTurn(() => index.top(at, 3));
    expect(top.sent).toBe(true);
    expect(top.answer.places.map((place) => [place.playerId, place.score])).toEqual(RANKED.slice(0, 3));

    const held = await sentBeforeTheTurn(() => profiles.read(['Zoë', 'zoë']));
    expect(held.sent).toBe(true);
    // Nothing kept for them yet: each answers the epoch to keep one under.
    expect(held.answer.held.map((entry) => !('profile' in entry) && typeof entry.epoch === 'string')).toEqual([true, true]);

    // The measure can tell: a plain command is still held for the turn (ioredis's auto-pipelining).
    const plain = await sentBeforeTheTurn(() => redis.get('no-such-key'));
    expect(plain).toEqual({ sent: false, answer: null });
  });

  it(`a turn's place reads leave before the turn ends once ${PLACE_LOADS_SENT_AT} are asked, each screen's standing and run from one call`, async () => {
    await index.writeBoardScores([...SCORES].map(([playerId, score]) => ({ at, score: { playerId, score, reachedAt: NOW }, expiresAt: null })));
    const calls: string[] = [];
    const reads = createPlaceLoader({
      ...index,
      arounds: (...args) => (calls.push('arounds'), index.arounds(...args)),
      standings: (...args) => (calls.push('standings'), index.standings(...args)),
    });
    // One job, as a turn's requests: a lone standing, then screens (a standing and its run) past
    // sendAt, the last screen's two reads on either side of it.
    const screens = RANKED.slice(0, PLACE_LOADS_SENT_AT / 2).map(([playerId]) => playerId);
    const before = written();
    const last = RANKED.at(-1)![0];
    const lone = reads.standing(at, last);
    const asked = screens.map((playerId) => ({ me: reads.standing(at, playerId), run: reads.around(at, playerId, 1) }));
    await beforeTheTurn();
    expect(written()).toBeGreaterThan(before);
    const rankOf = (playerId: string) => RANKED.findIndex(([id]) => id === playerId) + 1;
    expect((await lone).places[0]?.rank).toBe(RANKED.length);
    for (const [i, { me, run }] of asked.entries()) {
      const own = i + 1;
      expect((await me).places.map((place) => place && [place.playerId, place.rank])).toEqual([[screens[i], own]]);
      expect((await run).places.map((place) => [place.playerId, place.rank])).toEqual(
        RANKED.slice(Math.max(0, own - 2), own + 1).map(([id]) => [id, rankOf(id)]),
      );
    }
    // Every screen's standing came from its own run, the last one's too: one around call.
    expect(calls.sort()).toEqual(['arounds', 'standings']);
  });
});
