import SchemaBuilder from '@pothos/core';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import ValidationPlugin from '@pothos/plugin-validation';
import type { Context } from '../resolvers/context.js';
import { badInput, clientError } from '../errors.js';
import './auth-before-input.js';

/** The one schema builder. */
export const builder = new SchemaBuilder<{
  Context: Context;
  // GraphQL's ID parses every input (a string, or an integer a client sends) to a string.
  Scalars: { ID: { Input: string; Output: string }; DateTime: { Input: Date; Output: Date }; JSON: { Input: unknown; Output: unknown } };
  AuthScopes: { server: boolean; admin: boolean };
  DefaultFieldNullability: false;
}>({
  // authBeforeInput: a key is checked before the input, so a caller without one learns nothing of it.
  plugins: [ScopeAuthPlugin, 'authBeforeInput', ValidationPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authScopes: (ctx) => ({
      server: ctx.caller !== null,
      admin: ctx.caller?.role === 'admin',
    }),
    unauthorizedError: (_parent, ctx) =>
      ctx.caller
        ? clientError('FORBIDDEN', 'This key does not have the role this operation needs.')
        : clientError('UNAUTHENTICATED', 'This operation needs an API key: Authorization: Bearer <key>. None was given, or it is unknown or revoked.'),
  },
  validation: {
    validationError: (failure) =>
      badInput(
        failure.issues
          .map((issue) => {
            const path = (issue.path ?? []).map((part) => (typeof part === 'object' ? part.key : part)).join('.');
            return path ? `${path}: ${issue.message}` : issue.message;
          })
          .join('; '),
      ),
  },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
