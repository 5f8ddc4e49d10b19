import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The folders that turn requests into calls, and GraphQL itself: no inner layer imports them. */
const OUTER = ['**/resolvers/**', '**/schema/**', '**/http/**', '**/jobs/**', '**/app.js', '**/services.js', 'graphql', 'graphql-*', '@pothos/*'];

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
);
