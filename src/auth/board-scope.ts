import { clientError } from '../errors.js';

/**
 * Keys scoped to boards (issue 59): a game-server key made with `boards` may write results and
 * joins to those boards only, so a studio running two games on one deployment keeps them apart.
 * Player-wide writes (upsertPlayer, setFriends) are not board-scoped and stay open to every key.
 */

/** The boards a key may write to; undefined or empty: every board (the environment's keys, the admin key, a key made without boards). */
export type BoardScope = readonly string[] | undefined;

/**
 * Refuses, FORBIDDEN, a write naming any board outside the scope; checked before anything is looked
 * up or recorded, so a scoped key learns nothing of other boards (not even whether they exist).
 * Board ids are compared exactly, as boards are looked up: "Race" is not "race". `boards` holds each
 * written board with the field that names it (`inputs.2.board` in a batch, '' alone); every one
 * outside the scope is named in the one answer. O(written × scope), both small.
 */
export function requireInScope(scope: BoardScope, boards: readonly { board: string; field: string }[]): void {
  if (!scope || scope.length === 0) return;
  const outside = boards.filter(({ board }) => !scope.includes(board));
  if (outside.length === 0) return;
  const allowed = scope.map((id) => `"${id}"`).join(', ');
  throw clientError(
    'FORBIDDEN',
    outside.map(({ board, field }) => `${field ? `${field}: ` : ''}this key may write only to boards ${allowed}, not to "${board}".`).join('; ') +
      ' Nothing was recorded.',
  );
}
