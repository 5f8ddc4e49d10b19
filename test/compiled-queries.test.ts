import { GraphQLError } from 'graphql';
import { compileQuery } from 'graphql-jit';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useCompiledQueries } from '../src/http/compiled-queries.js';

/**
 * The compiled plans (src/http/compiled-queries.ts) on a small schema of the same shapes as the
 * service's (lists of objects, nested objects, an input object with a defaulted field, a coded
 * error), in stock Yoga. The oracle is Yoga's own executor (graphql-js's algorithm, as
 * @graphql-tools/executor runs it): a document's first run is not compiled, so each compiled answer
 * is compared with the answer that executor gave the same request. The service's own
 * documents, sent the way client libraries send them, are compared the same way in
 * client-libraries.test.ts (each library's second and later sends run compiled).
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
  const schema = createSchema({
    typeDefs: /* GraphQL */ `
      type Query {
        hero(id: ID!): Hero
        heroes(limit: Int = 2): [Hero!]!
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
        order: Order = HIGH_FIRST
      }
      type Mutation {
        make(input: MakeInput!): String!
      }
    `,
    resolvers: {
      Query: {
        hero: (_root: unknown, { id }: { id: string }) => byId(id) ?? null,
        heroes: (_root: unknown, { limit }: { limit: number | null }) => HEROES.slice(0, limit ?? HEROES.length),
        refused: () => {
          throw new GraphQLError('not yours', { extensions: { code: 'FORBIDDEN' } });
        },
      },
      Hero: { friends: (hero: Hero) => hero.friendIds.map((id) => byId(id)!) },
      Mutation: { make: (_root: unknown, { input }: { input: { name: string; order: string } }) => `${input.name} ${input.order}` },
    },
  });
  const yoga = createYoga({
    schema,
    maskedErrors: false,
    plugins: [
      useCompiledQueries({
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
  return { post, postText, compiled };
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

describe('compiled queries', () => {
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

  it('never compile a mutation, so an input field’s default is applied as graphql-js applies it', async () => {
    const { post, compiled } = testYoga();
    const answers = await thrice(post, 'mutation Make($input: MakeInput!) { make(input: $input) }', { input: { name: 'arena' } });
    for (const answer of answers) expect(answer).toEqual({ data: { make: 'arena HIGH_FIRST' } });
    expect(compiled).toEqual([]);
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
