import { z } from 'zod';
import { MAX_TIE_BREAKS, type ResultRate, type TieBreak } from '../model/board.js';
import { builder } from './builder.js';
import { ScoreOrderEnum } from './enums.js';
import { intRange, textSchema } from './validation.js';

/** A board's tie-break columns and result rate (issue 59): the objects Board answers and the inputs createBoard and updateBoard take. */

export const TieBreakRef = builder.objectRef<TieBreak>('TieBreak');

TieBreakRef.implement({
  description: 'Added (issue 24): a column that decides between equal scores, before the time a score was reached.',
  fields: (t) => ({
    name: t.exposeString('name'),
    order: t.expose('order', { type: ScoreOrderEnum }),
    max: t.exposeFloat('max', { description: 'Values are whole numbers from 0 to max.' }),
  }),
});

/** The largest `max` a column may have: a whole number a double holds exactly (the packing then checks the columns together). */
export const MAX_TIE_BREAK_MAX = Number.MAX_SAFE_INTEGER;

export const TieBreakInput = builder.inputType('TieBreakInput', {
  // Each column's form here; the columns together (distinct names, what the index can hold) by createBoard.
  fields: (t) => ({
    name: t.string({ required: true, validate: textSchema(50) }),
    order: t.field({ type: ScoreOrderEnum, required: true, defaultValue: 'HIGH_FIRST' }),
    max: t.float({
      required: true,
      validate: z.number().int('must be a whole number').positive('must be positive').max(MAX_TIE_BREAK_MAX, `must be at most ${MAX_TIE_BREAK_MAX}`),
    }),
  }),
});

/** A board's columns: bounded before anything walks them. */
export const tieBreaksSchema = z.array(z.unknown()).max(MAX_TIE_BREAKS, `at most ${MAX_TIE_BREAKS} tie-break columns`);

export const ResultRateRef = builder.objectRef<ResultRate>('ResultRate');

ResultRateRef.implement({
  description: 'Added (issue 24): how many results one player may have recorded on one board in a window.',
  fields: (t) => ({
    results: t.exposeInt('results'),
    perSeconds: t.exposeInt('perSeconds'),
  }),
});

/** The most results a rate may allow in its window: each one counted is kept for the window's length. */
export const MAX_RATE_RESULTS = 10_000;
/** The longest window a rate may have: a day. */
export const MAX_RATE_SECONDS = 86_400;

export const ResultRateInput = builder.inputType('ResultRateInput', {
  fields: (t) => ({
    results: t.int({ required: true, validate: intRange(1, MAX_RATE_RESULTS, 'results') }),
    perSeconds: t.int({ required: true, validate: intRange(1, MAX_RATE_SECONDS, 'perSeconds') }),
  }),
});
