import { z } from 'zod';

/** Ids (players, matches) are short, printable strings. */
export const idSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(128, 'must be at most 128 characters')
  .regex(/^[^\p{C}]+$/u, 'must hold printable characters only');

/** Board ids double as part of Redis keys, so they keep to a plain alphabet. */
export const boardIdSchema = z.string().regex(/^[a-z0-9_-]{1,64}$/, 'must be 1 to 64 characters of a-z, 0-9, _ and -');

export const regionSchema = z.string().regex(/^[a-z0-9-]{1,32}$/, 'must be 1 to 32 characters of a-z, 0-9 and -');

export const intRange = (min: number, max: number, name: string) =>
  z.number().int(`${name} must be a whole number`).min(min, `${name} must be at least ${min}`).max(max, `${name} must be at most ${max}`);
