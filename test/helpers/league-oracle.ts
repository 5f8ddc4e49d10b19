/**
 * An oracle of a league (issue 57), worked out from what a test sent and nothing the service
 * answered: who each round placed in which cohort (first come first served, a cohort of a tier
 * filled to cohortSize before the next opens, a player's first result of the round placing them),
 * each cohort ranked within itself (best score first; an equal score reached earlier first, then
 * the player id), its zones, each player's outcome, and the tier a closed round leaves each player
 * in (a player who sat a round out keeps theirs; a newcomer starts in the last tier).
 *
 * For HIGH_FIRST BEST boards, results of one round sent in the order they arrive, with no two
 * equal scores reached at the same millisecond, and no flagged player among them.
 */

export interface LeagueRules {
  tiers: readonly string[];
  cohortSize: number;
  promote: number;
  demote: number;
  /** The board's rank style: how equal scores share ranks within a cohort. */
  rankStyle: 'ORDINAL' | 'COMPETITION';
}

/** One result as sent, in arrival order. */
export interface SentResult {
  playerId: string;
  score: number;
  achievedAt: Date;
}

export type Outcome = 'PROMOTED' | 'STAYED' | 'DEMOTED';

export interface OracleEntry {
  playerId: string;
  score: number;
  rank: number;
  percentile: number;
}

export interface OracleCohort {
  bucket: string;
  tier: string;
  number: number;
  entries: OracleEntry[];
  promotedThrough: number;
  demotedFrom: number | null;
  outcomes: Map<string, Outcome>;
}

export interface OracleRound {
  bucket: string;
  cohorts: OracleCohort[];
  /** Each tier, best first, with its cohorts and players. */
  tiers: { tier: string; cohorts: number; players: number }[];
  /** The cohort of a player, if this round placed them. */
  cohortOf(playerId: string): OracleCohort | undefined;
  /** Each player's tier index after this round's close. */
  tierAfter: Map<string, number>;
}

/** UTF-8 byte order, as the index orders equal packed scores by member. */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * A round of the league: `results` its results in arrival order, `tierBefore` each player's tier
 * index going in (a player missing from it is new: the last tier).
 */
export function leagueRound(rules: LeagueRules, bucket: string, results: readonly SentResult[], tierBefore: ReadonlyMap<string, number>): OracleRound {
  const last = rules.tiers.length - 1;
  const members: string[][][] = rules.tiers.map(() => []);
  const placed = new Map<string, { tier: number; number: number }>();
  const best = new Map<string, { score: number; at: number }>();
  for (const result of results) {
    if (!placed.has(result.playerId)) {
      const tier = tierBefore.get(result.playerId) ?? last;
      const cohorts = members[tier]!;
      if (cohorts.length === 0 || cohorts.at(-1)!.length >= rules.cohortSize) cohorts.push([]);
      cohorts.at(-1)!.push(result.playerId);
      placed.set(result.playerId, { tier, number: cohorts.length });
    }
    const held = best.get(result.playerId);
    if (!held || result.score > held.score) best.set(result.playerId, { score: result.score, at: result.achievedAt.getTime() });
  }
  const cohorts = members.flatMap((ofTier, tier) =>
    ofTier.map((ids, i): OracleCohort => {
      const ordered = ids
        .map((playerId) => ({ playerId, ...best.get(playerId)! }))
        .sort((a, b) => b.score - a.score || a.at - b.at || byBytes(a.playerId, b.playerId));
      const n = ordered.length;
      const entries = ordered.map((row, j) => {
        const rank = rules.rankStyle === 'ORDINAL' ? j + 1 : ordered.findIndex((other) => other.score === row.score) + 1;
        return { playerId: row.playerId, score: row.score, rank, percentile: (100 * (n - rank)) / n };
      });
      // Zones count places, 1..n in the board's order, whatever the rank style shows.
      const promotedThrough = tier === 0 ? 0 : Math.min(rules.promote, n);
      const demotedFrom = tier === last || rules.demote === 0 || n <= rules.promote + rules.demote ? null : n - rules.demote + 1;
      const outcomes = new Map(
        ordered.map((row, j): [string, Outcome] => [
          row.playerId,
          j + 1 <= promotedThrough ? 'PROMOTED' : demotedFrom !== null && j + 1 >= demotedFrom ? 'DEMOTED' : 'STAYED',
        ]),
      );
      return { bucket, tier: rules.tiers[tier]!, number: i + 1, entries, promotedThrough, demotedFrom, outcomes };
    }),
  );
  const tierAfter = new Map(tierBefore);
  for (const [playerId, { tier, number }] of placed) {
    const outcome = cohorts.find((c) => c.tier === rules.tiers[tier] && c.number === number)!.outcomes.get(playerId)!;
    tierAfter.set(playerId, outcome === 'PROMOTED' ? tier - 1 : outcome === 'DEMOTED' ? tier + 1 : tier);
  }
  return {
    bucket,
    cohorts,
    tiers: rules.tiers.map((tier, i) => ({ tier, cohorts: members[i]!.length, players: members[i]!.reduce((total, ids) => total + ids.length, 0) })),
    cohortOf: (playerId) => cohorts.find((cohort) => cohort.outcomes.has(playerId)),
    tierAfter,
  };
}
