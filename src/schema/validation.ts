import { z } from 'zod';
import { jsonProblem } from '../model/json-depth.js';

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
  .regex(/^[^\p{C}]+$/u, 'must hold printable characters only (no control, format or bidirectional-override characters)')
  .refine(
    isNfc,
    'must be in Unicode normalization form C (NFC), as String.prototype.normalize() gives it: ids are compared as sent, so another form would name another player',
  );

/**
 * Whether an id is in normalization form C. An id that is not is refused, never normalised: "Jürgen"
 * sent precomposed (NFC) and decomposed (NFD) would otherwise either be two players or, normalised,
 * one player whose id comes back different from what one of the clients sent. Ids are opaque keys,
 * compared code unit for code unit everywhere (PostgreSQL, Redis, the friend lists), so the one
 * form clients must send is said in the message. Plain ASCII (nearly every id) is NFC as it is.
 */
function isNfc(id: string): boolean {
  return /^[\x20-\x7e]*$/.test(id) || id.normalize('NFC') === id;
}

/**
 * The characters no text the service keeps or looks up may hold, wherever it comes from (titles,
 * names, reasons, URLs, search text, metadata): control characters (C0, DEL, C1; NUL cannot even
 * reach PostgreSQL's text), the bidirectional controls (U+061C, U+200E, U+200F, U+202A-U+202E,
 * U+2066-U+2069), which make one string display as another, and unpaired surrogates (\p{Cs} under
 * the u flag matches only those), which are no Unicode text: UTF-8 cannot carry them, and
 * PostgreSQL would keep U+FFFD instead of what was sent.
 */
const PLAIN_TEXT = /^[^\p{Cc}\p{Cs}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]*$/u;

/** The rule PLAIN_TEXT states, as a refusal names it. */
export const PLAIN_TEXT_RULE = 'must hold no control, bidirectional-override or unpaired surrogate characters';

/** Whether a string passes PLAIN_TEXT: for checks that are not a zod schema (entry metadata's keys and strings). */
export const isPlainText = (text: string): boolean => PLAIN_TEXT.test(text);

/**
 * The one check of a string the service keeps or looks up (ids have their own, stricter one):
 * PLAIN_TEXT, checked before anything is trimmed, so a control character is refused wherever it
 * stands. Build a field's rule on it (textSchema, or .max() and the like for a URL).
 */
export const plainTextSchema = () => z.string().regex(PLAIN_TEXT, PLAIN_TEXT_RULE);

/** Text a person writes (a board title, a season name, a key's name, a flag's reason, search text): plain text, trimmed, 1 to `max` characters. */
export const textSchema = (max: number) =>
  plainTextSchema()
    .trim()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max.toLocaleString('en-US')} characters`);

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
 * 👩‍💻 holds a format character, so the id rule is too strict here), but plain text only (see
 * PLAIN_TEXT): no bidirectional control would make one name display as another.
 */
export const displayNameSchema = textSchema(64);

/** An avatar's address: plain text (a URL parser would drop a newline or percent-encode U+202E, keeping the rest), an http(s) URL, up to 2,048 characters. */
export const avatarUrlSchema = plainTextSchema()
  .max(2048, 'must be at most 2048 characters')
  .refine((url) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol), 'must be an http(s) URL');

/**
 * The most levels of objects and arrays entry metadata may nest, the object itself the first. What
 * games attach (a car, a deck, a replay id) is a level or two; 1,024 bytes could nest some 500, and
 * a check that walks them recursively is what overflowed. Not a setting: it is part of what the
 * contract accepts.
 * @default 32
 */
export const MAX_METADATA_DEPTH = 32;

/** What entry metadata may not hold: a key or string that is not plain text, or a number JSON cannot write (1e400 overflows to Infinity, which would be kept as null). */
function metadataScalarProblem(scalar: unknown): string | undefined {
  if (typeof scalar === 'string' && !isPlainText(scalar)) return `a key or string in it ${PLAIN_TEXT_RULE}`;
  if (typeof scalar === 'number' && !Number.isFinite(scalar)) return `holds a number out of range (${scalar}); JSON numbers must be finite doubles`;
  return undefined;
}

/**
 * Entry metadata's shape, before anything else reads it: at most MAX_METADATA_DEPTH levels, walked
 * without recursion (see model/json-depth.ts), plain text in its keys and strings, finite numbers.
 * That it is an object of at most 1,024 bytes is the write path's check (writes/submit.ts).
 */
export const metadataSchema = z.unknown().superRefine((metadata, ctx) => {
  const problem = jsonProblem(metadata, MAX_METADATA_DEPTH, metadataScalarProblem);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

export const intRange = (min: number, max: number, name: string) =>
  z.number().int(`${name} must be a whole number`).min(min, `${name} must be at least ${min}`).max(max, `${name} must be at most ${max}`);
