import { describe, expect, it } from 'vitest';
import { hashedFieldLua } from '../src/ranking/scripts/read-around.js';
import { type Profile, PROFILE_KEYS_PREFIX, profileHashKey } from '../src/profiles/store.js';
import { createRememberedProfiles } from '../src/services/remembered-profiles.js';
import { scratchRedis } from './helpers/redis-keys.js';

const profile = (id: string, displayName: string | null = `Name of ${id}`): Profile => ({ id, displayName, avatarUrl: null });

/**
 * What a process may take as a player's profile without asking Redis (src/services/remembered-profiles.ts):
 * only a profile seen under the changes token that a Redis read sent since the asking read came in
 * answered too. Driven by an injected clock, so each case says exactly when each read was sent.
 */
describe('remembered profiles', () => {
  function remembered(options: { maxProfiles?: number; maxAgeMs?: number } = {}) {
    let clock = 0;
    const seen = createRememberedProfiles({ ...options, now: () => clock });
    return { seen, at: (t: number) => (clock = t) };
  }

  it('takes a profile only while a read sent since the asker came in answered the token it was seen under', () => {
    const { seen, at } = remembered();
    expect(seen.known(['ann'], 0)).toBeUndefined();
    at(10);
    seen.saw(10, 'A', [profile('ann')]);
    expect(seen.known(['ann', 'bo'], 5)).toEqual([profile('ann'), undefined]);
    // A read that came in after the last token was sent has nothing to take yet.
    expect(seen.known(['ann'], 11)).toBeUndefined();
    at(20);
    seen.saw(20, 'A', []);
    expect(seen.known(['ann'], 15)).toEqual([profile('ann')]);
    // A change rewrote the token: everything seen before it is gone.
    at(30);
    seen.saw(30, 'B', []);
    expect(seen.known(['ann'], 25)).toEqual([undefined]);
  });

  it('adds what an earlier read answers late only under the latest token', () => {
    const { seen, at } = remembered();
    at(30);
    seen.saw(30, 'B', [profile('ann')]);
    seen.saw(25, 'A', [profile('bo')]);
    expect(seen.known(['ann', 'bo'], 30)).toEqual([profile('ann'), undefined]);
    // The latest token stays the one sent last, whatever answers after it.
    seen.saw(28, 'B', [profile('cy')]);
    expect(seen.known(['cy'], 30)).toEqual([profile('cy')]);
  });

  it('takes nothing under no token (a Redis emptied), nor after the process changed profiles itself', () => {
    const { seen, at } = remembered();
    at(10);
    seen.saw(10, null, [profile('ann')]);
    expect(seen.known(['ann'], 0)).toBeUndefined();
    seen.saw(11, 'A', [profile('ann')]);
    expect(seen.known(['ann'], 0)).toEqual([profile('ann')]);
    at(20);
    seen.forget();
    expect(seen.known(['ann'], 0)).toBeUndefined();
    // A read sent before the forgetting, answering after it, brings back nothing.
    seen.saw(15, 'A', [profile('ann')]);
    expect(seen.known(['ann'], 0)).toBeUndefined();
    seen.saw(21, 'A', []);
    expect(seen.known(['ann'], 0)).toEqual([undefined]);
  });

  it('forgets a profile maxAgeMs after it was last seen, and the oldest past maxProfiles', () => {
    const { seen, at } = remembered({ maxAgeMs: 100, maxProfiles: 4 });
    at(0);
    seen.saw(0, 'A', [profile('ann')]);
    at(60);
    seen.saw(60, 'A', [profile('bo')]);
    at(101);
    seen.saw(101, 'A', []);
    expect(seen.known(['ann', 'bo'], 101)).toEqual([undefined, profile('bo')]);
    const many = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'].map((id) => profile(id));
    seen.saw(102, 'A', many);
    const known = seen.known(
      many.map(({ id }) => id),
      102,
    )!;
    expect(known.filter(Boolean).length).toBeLessThanOrEqual(4);
    expect(known.at(-1)).toEqual(profile('p6'));
  });
});

/**
 * The profile hash a script finds for an id in Lua (read-around.ts hashedFieldLua's fieldHash) is the one
 * JavaScript keeps it in (profileHashKey), for the ids studios use: ASCII, accented, CJK, and
 * characters beyond the BMP (two UTF-16 code units in JavaScript, four UTF-8 bytes in Redis). FNV-1a's
 * published test vectors are the oracle for both.
 */
describe('profile hashes found in Lua', () => {
  const { redis } = scratchRedis('profile-hash');
  const luaHash = async (id: string, hashes: number) =>
    Number(await redis.eval(`${hashedFieldLua}\nreturn fieldHash(ARGV[1], tonumber(ARGV[2]))`, 0, id, hashes));
  const jsHash = (id: string, hashes: number) => Number(profileHashKey(id, hashes).slice(PROFILE_KEYS_PREFIX.length));

  it('is FNV-1a over UTF-16 code units, as in JavaScript', async () => {
    // FNV-1a 32-bit: '' 0x811c9dc5, 'a' 0xe40c292c, 'foobar' 0xbf9cf968.
    for (const [id, fnv] of [
      ['', 0x811c9dc5],
      ['a', 0xe40c292c],
      ['foobar', 0xbf9cf968],
    ] as const) {
      expect(await luaHash(id, 2 ** 32), id).toBe(fnv);
      expect(jsHash(id, 2 ** 32), id).toBe(fnv);
    }
    const ids = ['player-0001234', 'Zoë', 'Ünïcode-玩家', 'Spieler-Ü7-玩家', '🎮-Gamer_42', 'ß😀€𝄞', 'EU:Race#1', 'x'.repeat(200)];
    for (const hashes of [65_536, 1_000, 7]) for (const id of ids) expect(await luaHash(id, hashes), `${id} of ${hashes}`).toBe(jsHash(id, hashes));
  });
});
