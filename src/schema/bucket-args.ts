import type { ArgBuilder } from '@pothos/core';
import type { builder } from './builder.js';
import { PeriodEnum } from './enums.js';
import { boardIdSchema, regionSchema } from './validation.js';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** The arguments every read of one board bucket takes: board, period, bucket, region. */
export function bucketArgs(arg: ArgBuilder<Types>) {
  return {
    board: arg.id({ required: true, validate: boardIdSchema }),
    period: arg({ type: PeriodEnum, required: true, defaultValue: 'ALL_TIME' }),
    bucket: arg.string({ description: 'The bucket label; the current bucket when left out.' }),
    region: arg.string({ validate: regionSchema.nullish() }),
  };
}
