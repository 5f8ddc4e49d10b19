import type { ArgBuilder } from '@pothos/core';
import { z } from 'zod';
import type { builder } from './builder.js';
import { PeriodEnum } from './enums.js';
import { idSchema, regionSchema } from './validation.js';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** The arguments every read of one board bucket takes: board, period, bucket, region. Their rules are bucketArgsSchema. */
export function bucketArgs(arg: ArgBuilder<Types>) {
  return {
    board: arg.id({ required: true }),
    period: arg({ type: PeriodEnum, required: true, defaultValue: 'ALL_TIME' }),
    bucket: arg.string({ description: 'The bucket label; the current bucket when left out.' }),
    region: arg.string(),
  };
}

/**
 * The rules of bucketArgs, as the `validate` of a field taking them (extended with the rules of the
 * field's own arguments): the arguments are checked as one object, with the same messages and
 * paths (`playerId: must not be empty`) as a rule on each argument would give.
 *
 * Why one object: the validation plugin maps each argument that has a rule of its own through a
 * chain of closures, copies and path arrays, where one zod object schema is one compiled check,
 * several times cheaper a result (bench/RESULTS.md). These fields are every read a client makes. Loose, so arguments without a rule pass
 * as they came.
 */
export const bucketArgsSchema = z.looseObject({ board: idSchema, region: regionSchema.nullish() });
