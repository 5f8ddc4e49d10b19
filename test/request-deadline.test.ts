import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useRequestDeadline } from '../src/http/request-deadline.js';

/**
 * The backstop of every query and mutation (src/http/request-deadline.ts), in stock Yoga: a
 * resolver that never settles (a store that hangs) is answered UNAVAILABLE once the request's
 * bound has passed, a mutation's answer says whether it took effect is not known, and an
 * operation that settles in time is answered as it settled.
 */

const BOUND_MS = 150;

function served() {
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: 'type Query { hangs: String, quick: String! } type Mutation { hangs: String }',
      resolvers: {
        Query: { hangs: () => new Promise(() => undefined), quick: () => 'ça va' },
        Mutation: { hangs: () => new Promise(() => undefined) },
      },
    }),
    // What the deadline reads of the service's context: when the request came in.
    context: () => ({ startedAt: performance.now() }),
    plugins: [useRequestDeadline(BOUND_MS)],
    logging: false,
  });
  return async (query: string) => {
    const started = performance.now();
    const response = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    return {
      body: (await response.json()) as { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] },
      ms: performance.now() - started,
    };
  };
}

describe('the request deadline', () => {
  it('answers a query whose store hangs UNAVAILABLE once the bound has passed', async () => {
    const { body, ms } = await served()('query Hanging { __typename hangs }');
    expect(body.data).toBeNull();
    expect(body.errors?.map((error) => error.extensions?.code)).toEqual(['UNAVAILABLE']);
    expect(body.errors?.[0]?.message).toMatch(/within the request's bound of 150 ms.*Try again shortly/);
    // Not before the bound; well within a generous margin after it (a loaded machine is slow).
    expect(ms).toBeGreaterThanOrEqual(BOUND_MS - 5);
    expect(ms).toBeLessThan(BOUND_MS + 5_000);
  });

  it("says a mutation's effect is not known", async () => {
    const { body } = await served()('mutation Hanging { hangs }');
    expect(body.errors?.map((error) => error.extensions?.code)).toEqual(['UNAVAILABLE']);
    expect(body.errors?.[0]?.message).toMatch(/Whether the mutation took effect is not known/);
  });

  it('answers an operation that settles in time as it settled', async () => {
    const { body } = await served()('query Quick { __typename quick }');
    expect(body).toEqual({ data: { __typename: 'Query', quick: 'ça va' } });
  });
});
