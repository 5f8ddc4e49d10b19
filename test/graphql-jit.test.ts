import { GraphQLError } from 'graphql';
import { compileQuery } from 'graphql-jit';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useGraphqlJit } from '../src/http/graphql-jit.js';
import { until } from './helpers/wait.js';

/**
 * The compiled plans (src/http/graphql-jit.ts) on a small schema of the same shapes as the
 * service's (lists of objects, nested objects, an input object with a non-null defaulted field, a
 * coded error, a mutation of two steps, which is never compiled), in stock Yoga. The oracle is Yoga's own executor (graphql-js's algorithm, as
 * @graphql-tools/executor runs it): a document's first run is not compiled, so each compiled answer
 * is compared with the answer that executor gave the same request. The service's own
 * documents, sent the way client libraries send them, are compared the same way in
 * client-libraries.test.ts (each library's second and later sends of a query run compiled), and
 * byte for byte there against a first run of the same text.
 */

const HEROES = [
  { id: '英雄-1', name: 'Ärwen', friendIds: ['h2', 'h3'] },
  { id: 'h2', name: null, friendIds: ['英雄-1'] },
  { id: 'h3', name: 'Zed', friendIds: [] },
];
type Hero = (typeof HEROES)[number];
const byId = (id: string) => HEROES.find((hero) => hero.id === id);

function testYoga() {
  const compiled: string[] = [];
  /** What the step mutations did, in order, and the steps started and not yet let finish. */
  const steps: string[] = [];
  const waiting = new Map<string, () => void>();
  const schema = createSchema({
    typeDefs: /* GraphQL */ `
      type Query {
        hero(id: ID!): Hero
        heroes(limit: Int = 2): [Hero!]!
        heroesByIds(ids: [ID!]!): [Hero!]!
        refused: Hero
      }
      type Hero {
        id: ID!
        name: String
        friends: [Hero!]!
      }
      enum Order {
        HIGH_FIRST
        LOW_FIRST
      }
      input MakeInput {
        name: String!
        order: Order! = HIGH_FIRST
      }
      type Mutation {
        make(input: MakeInput!): String!
        step(name: String!): String!
      }
    `,
    resolvers: {
      Query: {
        hero: (_root: unknown, { id }: { id: string }) => byId(id) ?? null,
        heroes: (_root: unknown, { limit }: { limit: number | null }) => HEROES.slice(0, limit ?? HEROES.length),
        heroesByIds: (_root: unknown, { ids }: { ids: string[] }) => ids.flatMap((id) => byId(id) ?? []),
        refused: () => {
          throw new GraphQLError('not yours', { extensions: { code: 'FORBIDDEN' } });
        },
      },
      Hero: { friends: (hero: Hero) => hero.friendIds.map((id) => byId(id)!) },
      Mutation: {
        make: (_root: unknown, { input }: { input: { name: string; order: string } }) => `${input.name} ${input.order}`,
        step: async (_root: unknown, { name }: { name: string }) => {
          steps.push(`start ${name}`);
          await new Promise<void>((resolve) => waiting.set(name, resolve));
          waiting.delete(name);
          steps.push(`end ${name}`);
          return name;
        },
      },
    },
  });
  const yoga = createYoga({
    schema,
    maskedErrors: false,
    plugins: [
      useGraphqlJit({
        log: { warn: () => {} },
        compile: ((...args: Parameters<typeof compileQuery>) => {
          compiled.push(args[2] ?? '');
          return compileQuery(...args);
        }) as typeof compileQuery,
      }),
    ],
  });
  const postText = async (query: string, variables?: Record<string, unknown>, operationName?: string) =>
    (
      await yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables, operationName }),
      })
    ).text();
  const post = async (...args: Parameters<typeof postText>) => JSON.parse(await postText(...args)) as { data?: unknown; errors?: unknown[] };
  return { post, postText, compiled, steps, waiting };
}

/** The same request three times: graphql-js, then compiled (on its second run), then compiled again. */
async function thrice(post: ReturnType<typeof testYoga>['post'], query: string, variables?: Record<string, unknown>) {
  return [await post(query, variables), await post(query, variables), await post(query, variables)];
}

const DEEP = /* GraphQL */ `
  query Deep($id: ID!, $withFriends: Boolean! = false) {
    __typename
    hero(id: $id) {
      __typename
      ...HeroFields
    }
    heroes {
      ...HeroFields
    }
  }
  fragment HeroFields on Hero {
    __typename
    id
    name
    friends @include(if: $withFriends) {
      ... on Hero {
        __typename
        id
      }
    }
  }
`;

describe('compiled operations', () => {
  it('compile a query on its second run and answer what graphql-js answered it', async () => {
    const { post, compiled } = testYoga();
    const [first, second, third] = await thrice(post, DEEP, { id: '英雄-1', withFriends: true });
    expect(first!.errors).toBeUndefined();
    expect((first!.data as { hero: { friends: unknown[] } }).hero.friends).toHaveLength(2);
    expect(second).toEqual(first);
    expect(third).toEqual(first);
    expect(compiled).toHaveLength(1);
  });

  it('put a declared default in place of a variable not sent, and keep a null sent', async () => {
    const { post } = testYoga();
    // $withFriends: Boolean! = false, not sent: graphql-jit alone refuses it.
    const [first, ...compiled] = await thrice(post, DEEP, { id: 'h2' });
    expect(first!.errors).toBeUndefined();
    expect((first!.data as { hero: Record<string, unknown> }).hero).not.toHaveProperty('friends');
    for (const answer of compiled) expect(answer).toEqual(first);

    const LIMITED = 'query Limited($limit: Int = 1) { heroes(limit: $limit) { id } }';
    const [sentNull, ...compiledNull] = await thrice(post, LIMITED, { limit: null });
    expect((sentNull!.data as { heroes: unknown[] }).heroes).toHaveLength(3);
    for (const answer of compiledNull) expect(answer).toEqual(sentNull);
    const [notSent, ...compiledNotSent] = await thrice(post, LIMITED);
    expect((notSent!.data as { heroes: unknown[] }).heroes).toHaveLength(1);
    for (const answer of compiledNotSent) expect(answer).toEqual(notSent);
  });

  it('answer an error with the same message, path and code', async () => {
    const { post } = testYoga();
    const [first, ...compiled] = await thrice(post, 'query Refused { refused { id } hero(id: "h3") { name } }');
    expect(first).toMatchObject({
      data: { refused: null, hero: { name: 'Zed' } },
      errors: [{ message: 'not yours', path: ['refused'], extensions: { code: 'FORBIDDEN' } }],
    });
    for (const answer of compiled) expect(answer).toEqual(first);
  });

  it('answer the same bytes, compiled or not, errors included', async () => {
    const { postText, compiled } = testYoga();
    const query = 'query Refused { refused { id } hero(id: "英雄-1") { name friends { id } } }';
    const [first, second, third] = [await postText(query), await postText(query), await postText(query)];
    expect(first).toContain('"locations"');
    expect(second).toBe(first);
    expect(third).toBe(first);
    expect(compiled).toHaveLength(1);
  });

  it('leave to graphql-js a query merging a field with a copy under @skip, so its keys come in graphql-js’s order', async () => {
    const { postText, compiled } = testYoga();
    const query = 'query Merged($skip: Boolean!) { hero(id: "h3") { name @skip(if: $skip) id name } }';
    // CollectFields: the skipped first copy of `name` is not collected, so `id` comes first.
    for (const answer of [await postText(query, { skip: true }), await postText(query, { skip: true }), await postText(query, { skip: true })]) {
      expect(answer).toBe('{"data":{"hero":{"id":"h3","name":"Zed"}}}');
    }
    expect(compiled).toEqual([]);
  });

  it('leave to graphql-js a query with a variable inside a list literal', async () => {
    const { post, compiled } = testYoga();
    const answers = await thrice(post, 'query Some($id: ID!) { heroesByIds(ids: [$id, "h3"]) { id } }', { id: 'h2' });
    for (const answer of answers) expect(answer).toEqual({ data: { heroesByIds: [{ id: 'h2' }, { id: 'h3' }] } });
    expect(compiled).toEqual([]);
  });

  it('never compile a mutation, and fill in an input field’s default as graphql-js does', async () => {
    const { post, compiled } = testYoga();
    // order: Order! = HIGH_FIRST, not sent: graphql-jit alone refuses the variable.
    const answers = await thrice(post, 'mutation Make($input: MakeInput!) { make(input: $input) }', { input: { name: 'arena' } });
    for (const answer of answers) expect(answer).toEqual({ data: { make: 'arena HIGH_FIRST' } });
    const inline = await thrice(post, 'mutation Inline { make(input: { name: "arène", order: LOW_FIRST }) }');
    for (const answer of inline) expect(answer).toEqual({ data: { make: 'arène LOW_FIRST' } });
    expect(compiled).toEqual([]);
  });

  it('run a mutation’s fields one after another, a field of a fragment in its place', async () => {
    const { post, compiled, steps, waiting } = testYoga();
    const plain = 'mutation Steps($first: String!) { a: step(name: $first) b: step(name: "二") }';
    // As client libraries write it: the first field in a fragment, under @include (graphql-jit's #283).
    const spread = /* GraphQL */ `
      mutation Steps($first: String!, $withFirst: Boolean!) {
        __typename
        ...FirstStep
        b: step(name: "二")
      }
      fragment FirstStep on Mutation {
        __typename
        a: step(name: $first) @include(if: $withFirst)
      }
    `;
    for (const document of [plain, spread]) {
      for (const run of [1, 2]) {
        steps.length = 0;
        const answer = post(document, { first: `一${run}`, withFirst: true });
        await until(() => waiting.has(`一${run}`), 2_000, `step 一${run} started`, 1);
        // Oracle: the spec's serial execution; the second field has not started while the first runs.
        expect(steps).toEqual([`start 一${run}`]);
        waiting.get(`一${run}`)!();
        await until(() => waiting.has('二'), 2_000, 'step 二 started', 1);
        waiting.get('二')!();
        expect(await answer).toMatchObject({ data: { a: `一${run}`, b: '二' } });
        expect(steps).toEqual([`start 一${run}`, `end 一${run}`, 'start 二', 'end 二']);
      }
    }
    expect(compiled).toEqual([]);
  });

  it('answer a variable that does not coerce with the same bytes as graphql-js', async () => {
    const { postText, compiled } = testYoga();
    const send = (query: string, variables: Record<string, unknown>) => [1, 2, 3].map(() => () => postText(query, variables));
    for (const [query, variables] of [
      ['query Hero($id: ID!) { hero(id: $id) { name } }', { id: { not: 'an id' } }],
      ['mutation Make($input: MakeInput!) { make(input: $input) }', { input: { name: 'arena', order: 'SIDEWAYS' } }],
    ] as const) {
      const answers: string[] = [];
      for (const request of send(query, variables)) answers.push(await request());
      expect(JSON.parse(answers[0]!)).toMatchObject({ errors: [{ message: expect.stringContaining('got invalid value') as string }] });
      expect(answers[1]).toBe(answers[0]);
      expect(answers[2]).toBe(answers[0]);
    }
    expect(compiled).toEqual(['']);
  });

  it('compile each operation of a document on its own', async () => {
    const { post, compiled } = testYoga();
    const document = 'query One { hero(id: "h3") { name } } query Two { heroes(limit: 1) { id } }';
    const send = (operationName: string) => post(document, undefined, operationName);
    const one = [await send('One'), await send('One'), await send('One')];
    const two = [await send('Two'), await send('Two'), await send('Two')];
    for (const answer of one) expect(answer).toEqual({ data: { hero: { name: 'Zed' } } });
    for (const answer of two) expect(answer).toEqual({ data: { heroes: [{ id: '英雄-1' }] } });
    expect(compiled).toEqual(['One', 'Two']);
  });
});
