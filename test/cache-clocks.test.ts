import { describe, expect, it } from 'vitest';
import { createKeyring } from '../src/auth/keys.js';
import type { Season } from '../src/db/seasons.js';
import type { Storage } from '../src/db/storage.js';
import { SEASON_CACHE_MAX_AGE_MS, createSeasonDirectory } from '../src/services/season-directory.js';
import { scratchRedis } from './helpers/redis-keys.js';

/**
 * The per-process caches age by the clock they are given: what they keep is reused until it is
 * as old as their bound by that clock, and read again after, with no wall-clock wait in the test.
 */
describe('caches aged by an injected clock', () => {
  const { redis } = scratchRedis('cache-clocks');

  it('the keyring trusts a stored key lookup for cacheMs, then looks the key up again', async () => {
    let clock = 0;
    const lookups: string[] = [];
    const keyring = createKeyring({
      stored: { find: async (digest) => (lookups.push(digest), { id: 'k1', role: 'server' }) },
      cacheMs: 30_000,
      clock: () => clock,
    });
    expect(await keyring.identify('lb_server_stored')).toMatchObject({ role: 'server' });
    clock = 29_999;
    await keyring.identify('lb_server_stored');
    expect(lookups).toHaveLength(1);
    clock = 30_000;
    await keyring.identify('lb_server_stored');
    expect(lookups).toHaveLength(2);
  });

  it("the season directory keeps a board's seasons for SEASON_CACHE_MAX_AGE_MS, then reads them again", async () => {
    let clock = 0;
    const reads: string[] = [];
    const season = { boardId: 'b', id: 's1', name: 'One', startsAt: new Date(0), endsAt: null, closedAt: null } as Season;
    const seasons = { findLive: async (boardId: string) => (reads.push(boardId), [season]) } as unknown as Storage['seasons'];
    const directory = createSeasonDirectory(seasons, redis, () => clock);
    // Nothing is kept until the tokens' epoch is set, which the first lookup does.
    await directory.live('b');
    reads.length = 0;
    expect(await directory.live('b')).toEqual([season]);
    clock = SEASON_CACHE_MAX_AGE_MS - 1;
    await directory.live('b');
    expect(reads).toEqual(['b']);
    clock = SEASON_CACHE_MAX_AGE_MS;
    await directory.live('b');
    expect(reads).toEqual(['b', 'b']);
  });
});
