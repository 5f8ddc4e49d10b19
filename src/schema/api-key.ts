import { z } from 'zod';
import * as admin from '../resolvers/admin.js';
import type { IssuedKey, StoredKey } from '../resolvers/admin.js';
import { builder } from './builder.js';
import { idSchema, textSchema } from './validation.js';
import { MAX_KEY_BOARDS } from '../model/contract.js';

const ApiKeyRoleEnum = builder.enumType('ApiKeyRole', {
  values: {
    SERVER: { value: 'server', description: 'Game servers: submit results, write profiles and friends.' },
    ADMIN: { value: 'admin', description: 'Operators: everything, boards, seasons, moderation and keys included.' },
  } as const,
});

export const ApiKeyRef = builder.objectRef<StoredKey>('ApiKey');

ApiKeyRef.implement({
  description: 'An API key made with the console or the CLI. The key itself is shown once, when it is made; only its SHA-256 digest is stored.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    role: t.expose('role', { type: ApiKeyRoleEnum }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true, description: 'Set once revoked; every process refuses it from then on.' }),
    boards: t.exposeIDList('boards', { description: 'Game-server keys: the boards this key may write to (results, joins); empty, every board.' }),
  }),
});

const CreatedApiKeyRef = builder.objectRef<IssuedKey>('CreatedApiKey').implement({
  fields: (t) => ({
    apiKey: t.field({ type: ApiKeyRef, resolve: (issued) => issued.stored }),
    key: t.exposeString('key', { description: 'The key, shown this once: it is stored nowhere, and cannot be read again.' }),
  }),
});

builder.queryFields((t) => ({
  apiKeys: t.field({
    type: [ApiKeyRef],
    description: 'Admin. Every key made with the console or the CLI, oldest first, revoked ones included (never the keys themselves).',
    authScopes: { admin: true },
    resolve: (_root, _args, ctx) => admin.apiKeys(ctx),
  }),
}));

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: CreatedApiKeyRef,
    description: 'Admin. Makes an API key; every process accepts it at once. The answer carries the key, this once.',
    authScopes: { admin: true },
    args: {
      name: t.arg.string({ required: true, validate: textSchema(100) }),
      role: t.arg({ type: ApiKeyRoleEnum, required: true }),
      boards: t.arg.idList({
        required: true,
        defaultValue: [],
        description: 'Game-server keys only: the boards this key may write to (results, joins); empty, every board.',
        validate: z.array(idSchema).max(MAX_KEY_BOARDS, `must name at most ${MAX_KEY_BOARDS} boards`),
      }),
    },
    resolve: (_root, args, ctx) => admin.createApiKey(args, ctx),
  }),
  revokeApiKey: t.field({
    type: [ApiKeyRef],
    description: 'Admin. Revokes the live keys with this id (or name); every process refuses them at once. NOT_FOUND when no live key has it.',
    authScopes: { admin: true },
    args: { key: t.arg.id({ required: true, validate: idSchema }) },
    resolve: (_root, args, ctx) => admin.revokeApiKey(args, ctx),
  }),
}));
