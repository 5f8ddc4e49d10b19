import type { DocumentNode } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useDocumentLimits } from '../src/http/document-limits.js';
import { createValidationCache } from '../src/http/validation-cache.js';

/** Issue 13: a repeated valid document is parsed and validated once per transport, a refused one every time. */

const yoga = createYoga({
  schema: createSchema({ typeDefs: 'type Query { hello(name: String): String }' }),
  plugins: [...useDocumentLimits({ aliases: 2 })],
});

/** The pipeline of one request, counting what it is asked. */
function counted() {
  const enveloped = yoga.getEnveloped({});
  const asked = { parse: 0, validate: 0 };
  const schema: unknown = enveloped.schema;
  const parse = (source: string): unknown => ((asked.parse += 1), enveloped.parse(source));
  const validate = (on: unknown, document: DocumentNode): unknown => ((asked.validate += 1), enveloped.validate(on, document));
  return { asked, pipeline: { schema, parse, validate } };
}

describe('valid documents', () => {
  it('a valid document is checked by the pipeline once, then answered from what passed', () => {
    const valid = createValidationCache();
    const first = counted();
    const checked = valid.check(first.pipeline, '{ hello }');
    expect(checked.errors).toBeUndefined();
    expect(first.asked).toEqual({ parse: 1, validate: 1 });
    const again = counted();
    expect(valid.check(again.pipeline, '{ hello }').document).toBe(checked.document);
    expect(again.asked).toEqual({ parse: 0, validate: 0 });
  });

  it('a refused document goes through the pipeline every time, with its errors', () => {
    const valid = createValidationCache();
    for (const source of ['{ hello(', '{ nothing }', '{ a: hello b: hello c: hello }']) {
      for (let i = 0; i < 2; i += 1) {
        const { asked, pipeline } = counted();
        const checked = valid.check(pipeline, source);
        expect(checked.document, source).toBeUndefined();
        expect(checked.errors?.length, source).toBeGreaterThan(0);
        expect(asked.parse, source).toBe(1);
      }
    }
    // The alias limit named, as the pipeline refuses it.
    expect(valid.check(counted().pipeline, '{ a: hello b: hello c: hello }').errors?.[0]?.extensions).toMatchObject({ limit: 'aliases', found: 3 });
  });

  it('keeps documents of at most maxBytes, and at most entries of them', () => {
    const valid = createValidationCache({ entries: 2, maxBytes: 40 });
    const long = `{ hello(name: "${'x'.repeat(40)}") }`;
    for (let i = 0; i < 2; i += 1) valid.check(counted().pipeline, long);
    const longAgain = counted();
    valid.check(longAgain.pipeline, long);
    expect(longAgain.asked.parse).toBe(1);
    for (const source of ['{ a: hello }', '{ b: hello }', '{ c: hello }']) valid.check(counted().pipeline, source);
    const oldest = counted();
    valid.check(oldest.pipeline, '{ a: hello }');
    expect(oldest.asked.parse).toBe(1);
    const newest = counted();
    valid.check(newest.pipeline, '{ c: hello }');
    expect(newest.asked.parse).toBe(0);
  });
});
