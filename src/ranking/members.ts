import type { BoardBucket } from './keys.js';
import { packingFor } from './packing.js';

/**
 * The members of a board whose time is in the member (packing.ts `timeInMember`: the score and its
 * tie-break columns take too many of a double's 53 bits to leave room for the time). The double
 * holds the (score, columns) order alone, and the member is the time, as ten lowercase hex digits
 * of 2^40 − 1 − t (t: milliseconds from the bucket's start, clamped to 0 .. 2^40 − 1), then the
 * player id. Fixed width, so in byte order a member with an earlier time is larger, and members of
 * one time are in the order of their player ids: members of equal doubles are ordered, as Redis
 * orders them in a REV read, by the earlier time, then by player id bytes descending, the order of
 * every other board.
 *
 * A player's member changes with the time of their result, so each sorted set of such a board has
 * a hash beside it, player id → member (memberHashKey in keys.ts), through which every script that
 * is given a player id finds the member. Members of every other board are the player ids.
 */

/** How many hex digits the time takes at the start of a member: 40 bits, 2^40 ms (about 34.8 years) from the bucket's start. */
export const TIME_DIGITS = 10;

const TIME_SLOTS = 2 ** 40;

/** Whether a bucket's members carry the time (see the module's comment). O(1). */
export function timeInMember(at: BoardBucket): boolean {
  return packingFor(at.board, at.bucket.period).timeInMember;
}

/** The member of `playerId` reaching a result at `reachedMs` in a bucket starting at `bucketStartMs` (both epoch ms). O(length of the id). */
export function timedMember(playerId: string, reachedMs: number, bucketStartMs: number): string {
  const t = Math.min(TIME_SLOTS - 1, Math.max(0, Math.floor(reachedMs - bucketStartMs)));
  return (TIME_SLOTS - 1 - t).toString(16).padStart(TIME_DIGITS, '0') + playerId;
}

/** The player id a timed member names. O(length). */
export function playerOfMember(member: string): string {
  return member.slice(TIME_DIGITS);
}

/** When the result a timed member holds was reached, to the millisecond (clamped to the bucket's 2^40 ms span). O(1). */
export function reachedAtOfMember(member: string, bucketStart: Date): Date {
  return new Date(bucketStart.getTime() + (TIME_SLOTS - 1 - Number.parseInt(member.slice(0, TIME_DIGITS), 16)));
}

/**
 * The player id of a position read from a bucket's sorted set (a page cursor's, say): the member
 * itself on most boards, the member without its time on a board whose time is in the member. O(1).
 */
export function playerOfPosition(at: BoardBucket, member: string): string {
  return timeInMember(at) ? playerOfMember(member) : member;
}
