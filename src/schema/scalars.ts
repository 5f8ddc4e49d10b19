import { builder } from './builder.js';
import { badInput } from '../resolvers/errors.js';

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

builder.scalarType('DateTime', {
  description: 'An ISO-8601 date-time in UTC, e.g. 2026-11-29T18:00:00.000Z.',
  serialize: (value) => value.toISOString(),
  parseValue: (value) => {
    if (typeof value === 'string' && ISO_DATE_TIME.test(value)) {
      const parsed = new Date(value);
      if (!Number.isNaN(parsed.getTime())) return parsed;
    }
    throw badInput(`${JSON.stringify(value)} is not an ISO-8601 date-time such as 2026-11-29T18:00:00.000Z.`);
  },
});
