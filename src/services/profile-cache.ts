import type { Logger } from 'pino';
import type { Player } from '../db/players.js';
import type { Storage } from '../db/storage.js';
import { type Held, type Profile, type ProfileStoreOptions, createProfileStore } from '../profiles/store.js';
import type { RedisClient } from '../redis.js';
import { MAX_BATCH_LOADS, createBatchLoader } from './batch-loader.js';
import { freshSingleFlight } from './fresh-single-flight.js';
import { type RememberedProfilesOptions, createRememberedProfiles } from './remembered-profiles.js';

export type ProfileCacheOptions = ProfileStoreOptions & {
  /** The profiles remembered from what Redis answered (see remembered-profiles.ts). Default: its defaults. */
  remembered?: RememberedProfilesOptions;
};

const noProfile = (id: string): Player => ({ id, displayName: null, avatarUrl: null });

/**
 * Player profiles (names, avatars) for the reads that name players, from the profile hashes every
 * process shares in Redis (profiles/store.ts), with PostgreSQL only the fallback: a read of names
 * is one Redis script call, and a query only for the ids Redis does not hold.
 *
 * It never shows a profile older than the last rename or erasure answered anywhere:
 * - a change marks its players' profiles pending in Redis before it commits (refused, changing
 *   nothing, when Redis does not take the mark), and replaces the marks with the committed
 *   profiles after; while a mark stands, readers ask PostgreSQL and keep nothing. A process that
 *   dies between the two leaves the mark: reads stay exact, from PostgreSQL, until the hash
 *   expires;
 * - a profile read from PostgreSQL is kept only if the id's hash still has the epoch read before
 *   the query and holds nothing for the id (no mark, no newer profile): a change after the query
 *   wins, and a Redis emptied meanwhile (new epochs) keeps nothing read before;
 * - two changes of one player that cross drop its entry (see settleProfilesLua);
 * - a profile taken as this process last saw it in Redis, without asking again, is taken only while
 *   a Redis read sent after the asking request came in answered the changes token it was seen
 *   under, which every change rewrites (remembered-profiles.ts).
 * When Redis does not answer, profiles are read from PostgreSQL and nothing is kept.
 */
export function createProfileCache(redis: RedisClient, players: Pick<Storage['players'], 'find'>, log: Logger, options: ProfileCacheOptions = {}) {
  const store = createProfileStore(redis, options);
  const remembered = createRememberedProfiles(options.remembered);

  /** What Redis holds for the ids (the settled profiles among it remembered); every id a miss (kept under no epoch) when Redis does not answer. */
  async function held(ids: readonly string[]): Promise<Held[]> {
    const sentAt = remembered.now();
    try {
      const { held: found, token } = await store.read(ids);
      remembered.saw(
        sentAt,
        token,
        found.flatMap((entry) => ('profile' in entry ? [entry.profile] : [])),
      );
      return found;
    } catch {
      return ids.map(() => ({ epoch: null }));
    }
  }

  /** The profiles of the ids, and (settled once Redis answered) the keeping of those read from PostgreSQL. */
  async function lookUp(ids: readonly string[]): Promise<{ players: Player[]; kept: Promise<void> }> {
    const found = await held(ids);
    const missing = new Map<string, string | null>();
    found.forEach((entry, i) => {
      if (!('profile' in entry)) missing.set(ids[i]!, entry.epoch);
    });
    if (missing.size === 0) return { players: found.map((entry) => (entry as { profile: Profile }).profile), kept: Promise.resolve() };
    const read = new Map((await players.find([...missing.keys()])).map((player) => [player.id, player]));
    const keep = [...missing].flatMap(([id, epoch]) => (epoch === null ? [] : [{ profile: read.get(id) ?? noProfile(id), epoch }]));
    return {
      players: found.map((entry, i) => ('profile' in entry ? entry.profile : (read.get(ids[i]!) ?? noProfile(ids[i]!)))),
      kept: store.fill(keep),
    };
  }

  /**
   * Every load of one turn of the event loop as one look-up of their distinct ids
   * (createBatchLoader): a board's top is named by nearly every request. A load is one call's ids,
   * not one id, so a request's names (its loader's batch) cost one promise here rather than two an
   * id. The distinct ids go in look-ups of at most MAX_BATCH_LOADS, sent at once: a burst is several
   * short script calls, none holding Redis long. Reading later than asked never shows a profile
   * older than a change answered before the ask. Each request's own loader keeps what it read.
   */
  const together = createBatchLoader<readonly string[], Player[]>(async (calls) => {
    const ids = [...new Set(calls.flat())];
    const lookUps: ReturnType<typeof lookUp>[] = [];
    for (let from = 0; from < ids.length; from += MAX_BATCH_LOADS) lookUps.push(lookUp(ids.slice(from, from + MAX_BATCH_LOADS)));
    const profiles = (await Promise.all(lookUps)).flatMap((lookedUp) => {
      // The answer does not wait on keeping: a failed keep only means the next read asks PostgreSQL again.
      lookedUp.kept.catch((error: unknown) => log.debug({ err: error }, 'player profiles read from PostgreSQL not kept in Redis'));
      return lookedUp.players;
    });
    const byId = new Map(profiles.map((profile, i) => [ids[i]!, profile]));
    return calls.map((call) => call.map((id) => byId.get(id)!));
  });

  /**
   * Brings the profiles of `ids` into Redis where it holds nothing for them, a player without one
   * remembered as having none: read from PostgreSQL and kept under the epoch read before, as a
   * read's miss is. Nothing when Redis does not answer (a read asks PostgreSQL then anyway). O(k).
   */
  async function keepMissing(ids: readonly string[]): Promise<void> {
    const { held: found } = await store.read(ids);
    const missing = ids.flatMap((id, i) => {
      const entry = found[i]!;
      return 'profile' in entry || entry.epoch === null ? [] : [{ id, epoch: entry.epoch }];
    });
    if (missing.length === 0) return;
    const read = new Map((await players.find(missing.map(({ id }) => id))).map((player) => [player.id, player]));
    await store.fill(missing.map(({ id, epoch }) => ({ profile: read.get(id) ?? noProfile(id), epoch })));
  }

  /** The ids `remember` was given this turn, kept together at its end; undefined when none is waiting. */
  let toRemember: Set<string> | undefined;

  return {
    /**
     * Players the index just placed in a bucket they were not in (RankingIndexOptions.placed: a new
     * player's first result, say): their profiles are brought into Redis off the read path, where
     * it holds nothing for them, and a player without a profile is remembered as having none, as a
     * name is. Their first read, on any process, then asks PostgreSQL nothing, whether they are
     * named or not. The ids of one turn go together at its end (setImmediate): one Redis script call
     * per MAX_BATCH_LOADS of them, and one PostgreSQL query only for those Redis did not hold.
     * Returns at once; a failure only leaves the first read to ask PostgreSQL. O(k).
     */
    remember(ids: readonly string[]): void {
      if (ids.length === 0) return;
      if (!toRemember) {
        const waiting = (toRemember = new Set());
        setImmediate(() => {
          toRemember = undefined;
          const all = [...waiting];
          for (let from = 0; from < all.length; from += MAX_BATCH_LOADS) {
            keepMissing(all.slice(from, from + MAX_BATCH_LOADS)).catch((error: unknown) =>
              log.debug({ err: error }, 'player profiles of newly placed players not brought into Redis'),
            );
          }
        });
      }
      for (const id of ids) toRemember.add(id);
    },

    /**
     * The profiles of these ids, in their order; a player without a profile has nulls. One Redis
     * script call for the loads of one turn of the event loop (a call per MAX_BATCH_LOADS distinct
     * ids: see `together`), plus one PostgreSQL query for the ids it does not hold (kept for the
     * next read). For a read that came in at `since` (on `clock`), the ids whose
     * profiles may be taken as last seen in Redis are not asked again (remembered-profiles.ts).
     * Throws what PostgreSQL throws. O(k).
     */
    async load(ids: readonly string[], since?: number): Promise<Player[]> {
      const known = since === undefined ? undefined : remembered.known(ids, since);
      if (!known) return together.load(ids);
      const unknown = ids.filter((_, i) => known[i] === undefined);
      if (unknown.length === 0) return known as Player[];
      const loaded = await together.load(unknown);
      let next = 0;
      return known.map((profile) => profile ?? loaded[next++]!);
    },

    /** The clock `load`'s `since` is read on. O(1). */
    clock: remembered.now,

    /**
     * For a place read that names its players in the same script step (the ranking index's
     * standingsNamed and aroundsNamed): where their profiles are (ranking/index.ts PlayerFields:
     * the changes token's key, the hashes, the hash key of each id), and `seen`, which takes what
     * it answered: the profiles of its ids (undefined where Redis held none to take), and the
     * token for the reads after it. Null on a Redis Cluster (see ProfileStore.naming).
     */
    naming: store.naming && {
      ...store.naming,
      /** The clock to read the script's `sentAt` on. */
      clock: remembered.now,
      /**
       * The script was sent at `sentAt` (on `clock`) and answered `token` and `values` for `ids`.
       * Only the token is remembered: the profiles go with the places read, to the reads that
       * asked for them (players around one are seldom asked about again soon). O(k).
       */
      seen(sentAt: number, token: string | null, ids: readonly string[], values: readonly (string | null)[]): (Profile | undefined)[] {
        remembered.saw(sentAt, token, []);
        return store.profilesIn(ids, values);
      },
    },

    /**
     * Loads these profiles into Redis if it does not hold them (what reads would do, waited for):
     * for a deployment's first start, or a benchmark. Throws what the stores throw. O(k).
     */
    async warm(ids: readonly string[]): Promise<void> {
      await (
        await lookUp(ids)
      ).kept;
    },

    /**
     * The token of the last profile change anywhere (see ProfileStore.changes); null when it
     * cannot be trusted now. Concurrent callers share the GET, each one sent after they asked
     * (fresh-single-flight.ts): what every shared answer asks stays one GET per round trip, not per request.
     */
    changes: freshSingleFlight(() => store.changes()),

    /**
     * Runs a change of these players' profiles (a rename, an erasure) so that no process shows
     * the old profiles once it answered: marks them in Redis first (throws, before `commit`
     * runs, when Redis does not take the marks), then commits, then keeps the committed profiles
     * (`after`: the profiles of the ids as committed; an id it leaves out has none). O(k).
     */
    async change<T>(ids: readonly string[], commit: () => Promise<T>, after: (committed: T) => readonly Player[]): Promise<T> {
      const marks = await store.mark(ids);
      const committed = await commit();
      // What this process saw before the change is not current for its reads after it, even before
      // another token is read (a request that renames, then reads the name).
      remembered.forget();
      const profiles = new Map(after(committed).map((player) => [player.id, player]));
      // Left pending when Redis fails now: reads stay exact (from PostgreSQL) until the hash expires.
      await store
        .settle(marks, profiles)
        .catch((error: unknown) => log.warn({ err: error, players: marks.ids }, 'changed player profiles left pending in Redis'));
      return committed;
    },
  };
}

export type ProfileCache = ReturnType<typeof createProfileCache>;
