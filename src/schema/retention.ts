import type { Retention } from '../model/board.js';
import { DEFAULT_RETENTION } from '../model/board.js';
import { builder } from './builder.js';
import { intRange } from './validation.js';

/** The most days a calendar bucket may be kept after it ends: ten years. */
const MAX_RETENTION_DAYS = 3_660;

export const RetentionRef = builder.objectRef<Retention>('Retention');

RetentionRef.implement({
  description: 'How many days each calendar bucket stays readable after it ends; after that, reads answer NOT_FOUND and its key expires.',
  fields: (t) => ({
    daily: t.exposeInt('DAILY'),
    weekly: t.exposeInt('WEEKLY'),
    monthly: t.exposeInt('MONTHLY'),
  }),
});

const days = (period: keyof Retention) =>
  `Days a ${period} bucket stays readable after it ends (default ${DEFAULT_RETENTION[period]}, at most ${MAX_RETENTION_DAYS}).`;

export const RetentionInput = builder.inputType('RetentionInput', {
  fields: (t) => ({
    daily: t.int({ description: days('DAILY'), validate: intRange(0, MAX_RETENTION_DAYS, 'daily').nullish() }),
    weekly: t.int({ description: days('WEEKLY'), validate: intRange(0, MAX_RETENTION_DAYS, 'weekly').nullish() }),
    monthly: t.int({ description: days('MONTHLY'), validate: intRange(0, MAX_RETENTION_DAYS, 'monthly').nullish() }),
  }),
});
