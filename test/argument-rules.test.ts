import { type GraphQLArgument, type GraphQLField, GraphQLInputObjectType, GraphQLObjectType, getNamedType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../src/schema/index.js';

/**
 * Arguments and input fields that name something the service keys Redis and PostgreSQL by: each
 * must have a rule, either its own (`validate` on the argument or input field) or in its field's
 * one object (`validate` on the field, see schema/bucket-args.ts). Why a test: since the bucket
 * reads give their rules as one object per field, a new field taking bucketArgs without its
 * `validate` would take any board id and region unchecked.
 */
const NAMING = new Set(['board', 'region', 'playerId', 'matchId']);

type Extended = { extensions?: { pothosOptions?: { validate?: { shape?: Record<string, unknown> } } } | null };
const ownRule = (item: Extended) => item.extensions?.pothosOptions?.validate !== undefined;
const fieldRule = (field: Extended) => field.extensions?.pothosOptions?.validate?.shape;

function unruled(): string[] {
  const missing: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!(type instanceof GraphQLObjectType) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields()) as GraphQLField<unknown, unknown>[]) {
      const shape = fieldRule(field as Extended);
      for (const arg of field.args as GraphQLArgument[]) {
        const where = `${type.name}.${field.name}(${arg.name})`;
        if (NAMING.has(arg.name) && !ownRule(arg) && !shape?.[arg.name]) missing.push(where);
        const input = getNamedType(arg.type);
        if (!(input instanceof GraphQLInputObjectType) || shape?.[arg.name]) continue;
        for (const inputField of Object.values(input.getFields())) {
          if (NAMING.has(inputField.name) && !ownRule(inputField as Extended)) missing.push(`${where}.${inputField.name}`);
        }
      }
    }
  }
  return missing;
}

describe('argument rules', () => {
  it('every argument and input field naming a board, a region, a player or a match has a rule', () => {
    expect(unruled()).toEqual([]);
  });
});
