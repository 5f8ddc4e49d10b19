import { readFileSync } from 'node:fs';
import { buildSchema, findBreakingChanges } from 'graphql';
import { describe, expect, it } from 'vitest';
import { printServedSchema, schema } from '../src/schema/index.js';

/** The public contract, kept in the repository (contract/api.graphql), so that a clone holds everything its tests need. */
const contractUrl = new URL('../contract/api.graphql', import.meta.url);

describe('the public contract', () => {
  it('the served schema breaks nothing in contract/api.graphql', () => {
    const contract = buildSchema(readFileSync(contractUrl, 'utf8'));
    expect(findBreakingChanges(contract, schema)).toEqual([]);
  });

  it('the contract holds every type and field of the shared design it was kept from', () => {
    // The repository's copy only ever adds to what the service was designed against: nothing removed or retyped.
    const contract = buildSchema(readFileSync(contractUrl, 'utf8'));
    expect(
      contract
        .getMutationType()
        ?.getFields()
        .startSeason?.args.map((arg) => arg.name),
    ).toEqual(['board', 'name', 'endsAt', 'startsAt']);
    for (const type of ['Board', 'Season', 'Player', 'Standing', 'TopBoard', 'StandingConnection', 'SubmitScorePayload', 'Query', 'Mutation', 'Subscription']) {
      expect(contract.getType(type), type).toBeDefined();
    }
  });

  it('schema.graphql is what the code builds (run `npm run schema:print` after a change)', () => {
    const committed = readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(printServedSchema());
  });
});
