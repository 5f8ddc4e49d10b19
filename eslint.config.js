import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/** The transports and the schema, which turn requests into calls: only the entries import them. */
const TRANSPORTS = ['**/schema/**', '**/http/**', '**/app.js', 'graphql-yoga', 'graphql-ws', '@pothos/*'];
/** The layers that call the stores' layers, and GraphQL itself: no store layer imports them. */
const OUTER = ['**/operations/**', '**/services/**', '**/jobs/**', ...TRANSPORTS, 'graphql', 'graphql-*'];

/** Refuses, in `files`, every import matching one of `patterns`, saying why. */
function layer(files, why, patterns) {
  return [{ files: [files], rules: { 'no-restricted-imports': ['error', { patterns: [{ group: patterns, message: `${why} (DESIGN.md).` }] }] } }];
}

export default tseslint.config(
  { ignores: ['dist/', 'client/dist/', 'node_modules/', 'coverage/', 'drizzle/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  // No two modules import each other, however far round (type imports included: a cycle of types
  // is still two modules that cannot be read one without the other).
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  // The arrows of the design (DESIGN.md): the inner folders never import the outer ones.
  ...layer('src/model/**', 'the model is plain data and rules: it imports nothing of the service', [
    '**/../**',
    'postgres',
    'ioredis',
    'graphql',
    'graphql-*',
    'drizzle-orm*',
  ]),
  ...layer('src/ranking/**', 'the ranking index knows no GraphQL and no database', [...OUTER, '**/db/**', '**/pubsub/**', 'postgres', 'drizzle-orm*']),
  ...layer('src/db/**', 'the database layer knows no GraphQL and no Redis', [...OUTER, '**/ranking/**', '**/pubsub/**', '**/redis.js', 'ioredis']),
  ...layer('src/profiles/**', 'the profiles kept in Redis know no GraphQL and no database', [...OUTER, '**/db/**', 'postgres', 'drizzle-orm*']),
  ...layer('src/pubsub/**', 'the live feed knows no GraphQL and no database', [...OUTER, '**/db/**', 'postgres', 'drizzle-orm*']),
  ...layer('src/auth/**', 'keys are checked without GraphQL, Redis or the index', [...OUTER, '**/ranking/**', '**/pubsub/**', 'ioredis']),
  ...layer('src/services/**', 'the per-process services are built before any operation: they call none, and no job or transport', [
    '**/operations/**',
    '**/jobs/**',
    ...TRANSPORTS,
  ]),
  ...layer('src/operations/**', 'operations take their services and know no transport and no job', ['**/jobs/**', ...TRANSPORTS]),
  ...layer('src/jobs/**', 'the background jobs call operations, never a transport', TRANSPORTS),
  ...layer('src/schema/**', 'the schema turns requests into operations; it knows no transport and no job', [
    '**/http/**',
    '**/app.js',
    '**/jobs/**',
    'graphql-yoga',
    'graphql-ws',
  ]),
);
