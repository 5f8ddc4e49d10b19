import { type DocumentNode, GraphQLError } from 'graphql';
import { createLRUCache } from 'graphql-yoga';
import { type DocumentCache, boundedDocumentCache } from './document-limits.js';

/** The envelop pipeline's parse and validate, as a transport holds them for one operation. */
interface Pipeline {
  parse: (source: string) => unknown;
  validate: (schema: unknown, document: DocumentNode) => unknown;
  schema: unknown;
}

/** How many documents are kept, and how large. */
export interface ValidDocumentsOptions {
  /** Documents kept at most, the least recently used out first. Default 256. */
  entries?: number;
  /** The longest document kept, in UTF-8 bytes; a longer one goes through the pipeline every time. Default 4,096. */
  maxBytes?: number;
}

/** A document that parsed and validated, or the errors that say why it did not. */
export type Checked = { document: DocumentNode; errors?: undefined } | { document?: undefined; errors: readonly GraphQLError[] };

/**
 * The documents that parsed and passed validation through the envelop pipeline, by their text, so
 * that a transport runs a repeated query without walking every plugin's parse and validate hooks
 * again to reach the answer Yoga's own caches would give (that walk was about a tenth of a shared
 * `top`'s CPU). Sound because both steps depend on the text and the schema alone: every rule and
 * limit the pipeline holds (document-limits.ts; introspection off) reads the document and nothing
 * of the request (the validation budget reads the client, but only ever to refuse). Only what
 * passed is kept; refusals go through the pipeline every time, to be answered as it answers them
 * (document-limits.ts remembers them, so they are not validated again).
 *
 * At most `entries` documents (least recently used out first) of at most `maxBytes` each: what
 * clients repeat is short (the deepest a generated client writes is about 1.1 kB), and the
 * entries share their documents with Yoga's parse cache.
 */
export function createValidationCache({ entries = 256, maxBytes = 4_096 }: ValidDocumentsOptions = {}) {
  const valid: DocumentCache<DocumentNode> = boundedDocumentCache<DocumentNode>(createLRUCache<DocumentNode>({ max: entries }), maxBytes);
  return {
    /**
     * `source` parsed and validated by `pipeline`, or from the documents that passed before. A
     * parse error, or a GraphQL error thrown by validation, is answered as errors; anything else
     * the pipeline throws is thrown.
     */
    check(pipeline: Pipeline, source: string): Checked {
      const known = valid.get(source);
      if (known) return { document: known };
      let document: DocumentNode;
      try {
        document = pipeline.parse(source) as DocumentNode;
      } catch (error) {
        if (error instanceof GraphQLError) return { errors: [error] };
        throw error;
      }
      let errors: readonly GraphQLError[];
      try {
        errors = pipeline.validate(pipeline.schema, document) as readonly GraphQLError[];
      } catch (error) {
        // A refusal of the validation itself (its client's budget spent: validation-budget.ts), not of the document.
        if (error instanceof GraphQLError) return { errors: [error] };
        throw error;
      }
      if (errors.length > 0) return { errors };
      valid.set(source, document);
      return { document };
    },
  };
}
