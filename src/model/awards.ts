/**
 * Awards (issue 58): the players each reward band of a board names at the close of one of its
 * lists (db/awards.ts). What an award is called, the same in the `awards` read and in BUCKET_CLOSED.
 */

/** Where an award is: a closed list of a board, a band, a player. */
export interface AwardKey {
  boardId: string;
  period: string;
  bucket: string;
  /** null: the global list. */
  region: string | null;
  band: string;
  playerId: string;
}

/**
 * An award's id: base64url of the JSON array [board, period, bucket, region, band, player]. The
 * same for the same award however often it is read or sent (a receiver grants each id once), and
 * different for any other: the parts are written as JSON strings, so no part's text can pass for
 * another's. O(length).
 */
export function awardId(key: AwardKey): string {
  return Buffer.from(JSON.stringify([key.boardId, key.period, key.bucket, key.region, key.band, key.playerId])).toString('base64url');
}
