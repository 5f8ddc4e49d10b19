import { z } from 'zod';

/**
 * Player and match ids: short, printable strings, unicode welcome (`Jürgen`, `玩家一`), since a
 * game names its players as it likes. No control, format (bidirectional overrides such as U+202E,
 * zero-width characters), private-use or unassigned characters, which could not be told apart or
 * would spoof another id on a leaderboard.
 */
export const idSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(128, 'must be at most 128 characters')
  .regex(/^[^\p{C}]+$/u, 'must hold printable characters only (no control, format or bidirectional-override characters)');

/**
 * The name rule for what a studio names its boards and regions with (`NA-Ranked`, `weeklyHighScore`,
 * `EU`): letters of either case, digits, `_`, `-` and `.`, case-sensitive. They are part of Redis
 * keys, so nothing else (no `:`, no braces, which are the cluster's hash tag).
 */
function nameSchema(max: number) {
  const rule = `must be 1 to ${max} characters of letters (A-Z, a-z), digits, _, - and . (case-sensitive)`;
  return z.string().regex(new RegExp(`^[A-Za-z0-9_.-]{1,${max}}$`), rule);
}

/**
 * A new board's id (createBoard), which becomes part of Redis keys. Every other argument naming a
 * board takes any id (idSchema): ids are opaque, so one that no board could have names none and is
 * answered NOT_FOUND, as an unknown one is, never refused for its form.
 */
export const boardIdSchema = nameSchema(64);

/** A region, wherever one is given. */
export const regionSchema = nameSchema(32);

/**
 * Display names: what players see beside ranks. Unicode and emoji welcome (a ZWJ sequence such as
 * 👩‍💻 holds a format character, so the id rule is too strict here), but never a control character or
 * a bidirectional control (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), which would make
 * one name display as another.
 */
export const displayNameSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(64, 'must be at most 64 characters')
  .regex(/^[^\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]+$/u, 'must hold no control or bidirectional-override characters');

export const intRange = (min: number, max: number, name: string) =>
  z.number().int(`${name} must be a whole number`).min(min, `${name} must be at least ${min}`).max(max, `${name} must be at most ${max}`);
