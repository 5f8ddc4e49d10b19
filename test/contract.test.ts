import { readFileSync } from 'node:fs';
import { buildSchema, findBreakingChanges } from 'graphql';
import { describe, expect, it } from 'vitest';
import { printServedSchema, schema } from '../src/schema/index.js';

const contractPath = process.env.CONTRACT_PATH ?? new URL('../../shared/api.graphql', import.meta.url);

describe('the public contract', () => {
  it('the served schema breaks nothing in ../shared/api.graphql', () => {
    const contract = buildSchema(readFileSync(contractPath, 'utf8'));
    expect(findBreakingChanges(contract, schema)).toEqual([]);
  });

  it('schema.graphql is what the code builds (run `npm run schema:print` after a change)', () => {
    const committed = readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(printServedSchema());
  });
});
