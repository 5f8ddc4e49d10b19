import type { RewardBand } from './board.js';

/**
 * Reward bands (issue 58): a board's prize bands, computed once at every close of one of its
 * buckets from the final standings (db/awards.ts). The rules, as pure functions.
 */

/** @default 20 bands a board. */
export const MAX_REWARD_BANDS = 20;
/** @default 40 characters a band's name. */
export const MAX_BAND_NAME_LENGTH = 40;
/** The highest rank a band may name: a board's buckets rank at most this many players, by far. */
export const MAX_BAND_RANK = 100_000_000;

/** A band as given: any of its fields may be missing; rewardsProblem says what is wrong. */
export interface RewardBandInput {
  name: string;
  fromRank?: number | null | undefined;
  toRank?: number | null | undefined;
  topPercent?: number | null | undefined;
}

/**
 * What is wrong with a board's bands, or null: at most {@link MAX_REWARD_BANDS}, each named (1 to
 * {@link MAX_BAND_NAME_LENGTH} characters, no control character, no two alike in case), with
 * exactly one of (fromRank and toRank, 1 ≤ fromRank ≤ toRank ≤ {@link MAX_BAND_RANK}) or topPercent
 * (above 0, at most 100). Bands may overlap: a player in two bands gets both awards. O(bands).
 */
export function rewardsProblem(bands: readonly RewardBandInput[]): string | null {
  if (bands.length > MAX_REWARD_BANDS) return `rewards: ${bands.length} bands; a board has at most ${MAX_REWARD_BANDS}.`;
  const seen = new Set<string>();
  for (const [i, band] of bands.entries()) {
    const at = `rewards[${i}]`;
    const { name } = band;
    if (name.trim() === '' || name !== name.trim()) return `${at}.name: a band's name is not empty and has no leading or trailing space.`;
    if ([...name].length > MAX_BAND_NAME_LENGTH) return `${at}.name: a band's name has at most ${MAX_BAND_NAME_LENGTH} characters.`;
    if (/[\p{Cc}\p{Cf}]/u.test(name)) return `${at}.name: "${name}" holds a control or format character.`;
    if (seen.has(name.toLowerCase())) return `${at}.name: "${name}" is named twice (names differing only in case count as one).`;
    seen.add(name.toLowerCase());
    const ranked = band.fromRank != null || band.toRank != null;
    const percent = band.topPercent != null;
    if (ranked === percent) return `${at}: a band has exactly one of (fromRank and toRank) or topPercent.`;
    if (percent) {
      const p = band.topPercent!;
      if (!Number.isFinite(p) || p <= 0 || p > 100) return `${at}.topPercent: ${p} is not above 0 and at most 100.`;
      continue;
    }
    const { fromRank, toRank } = band;
    if (fromRank == null || toRank == null) return `${at}: a band by rank has both fromRank and toRank.`;
    if (!Number.isInteger(fromRank) || fromRank < 1 || fromRank > MAX_BAND_RANK)
      return `${at}.fromRank: ${fromRank} is not a whole rank from 1 to ${MAX_BAND_RANK.toLocaleString('en-US')}.`;
    if (!Number.isInteger(toRank) || toRank < fromRank || toRank > MAX_BAND_RANK)
      return `${at}.toRank: ${toRank} is not a whole rank from fromRank (${fromRank}) to ${MAX_BAND_RANK.toLocaleString('en-US')}.`;
  }
  return null;
}

/** Bands as a board keeps them: every field present, null where not given. Call after rewardsProblem. */
export function rewardBandsOf(bands: readonly RewardBandInput[]): RewardBand[] {
  return bands.map((band) => ({
    name: band.name,
    fromRank: band.fromRank ?? null,
    toRank: band.toRank ?? null,
    topPercent: band.topPercent ?? null,
  }));
}

/**
 * The ranks, by the board's rank style, a band covers in a closed list of `size` ranked players:
 * fromRank..toRank, or 1..⌈size × topPercent / 100⌉ (a band by percent of an empty list covers
 * nothing: null). Every player whose rank is in the range is awarded, so players tied on a rank
 * share the band. O(1).
 */
export function bandRanks(band: RewardBand, size: number): { from: number; to: number } | null {
  if (band.topPercent !== null) {
    const to = Math.ceil((size * band.topPercent) / 100);
    return to >= 1 ? { from: 1, to } : null;
  }
  return { from: band.fromRank!, to: band.toRank! };
}
