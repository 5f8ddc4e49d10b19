import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/** The transports and the schema, which turn requests into calls: only the entries import them. */
const TRANSPORTS = ['**/schema/**', '**/http/**', '**/app.js', 'graphql-yoga', 'graphql-ws', '@pothos/*'];
/** The layers that call the stores' layers, and GraphQL itself: no store layer imports them. */
const OUTER = ['**/reads/**', '**/writes/**', '**/resolvers/**', '**/services/**', '**/jobs/**', ...TRANSPORTS, 'graphql', 'graphql-*'];

/** Refuses, in `files`, every import matching one of `patterns`, saying why. */
function layer(files, why, patterns) {
  return [{ files: [files], rules: { 'no-restricted-imports': ['error', { patterns: [{ group: patterns, message: `${why} (docs/architecture.md).` }] }] } }];
}

/** The layers above the index and the record: neither imports any of them. */
const ABOVE_THE_STORES = ['src/reads', 'src/writes', 'src/resolvers'];
/** Where the stores' layers live: the schema and the transports reach them only through the resolvers, the read side and the write side. */
const STORES = ['src/db', 'src/ranking', 'src/profiles'];

/**
 * The arrows of issue 55's layout (docs/architecture.md), as [files, folders they never import, why].
 * Only src/model/ (the contract's limits and enums, src/model/contract.ts) is shared downward with
 * the schema and the transports.
 */
const ISSUE_55_ARROWS = [
  ['src/ranking/**', ['src/profiles', ...ABOVE_THE_STORES], 'the ranking index imports nothing above it'],
  ['src/db/**', ['src/profiles', ...ABOVE_THE_STORES], 'the record knows no Redis and nothing above it'],
  ['src/{profiles,auth}/**', ABOVE_THE_STORES, 'the names kept in Redis and the keys import nothing above the stores'],
  ['src/services/**', [...ABOVE_THE_STORES, 'src/pubsub'], 'the per-process services sit below the read and write sides and the live tops'],
  [
    'src/schema/**',
    [...STORES, 'src/writes', 'src/reads', 'src/pubsub', 'src/services', 'src/auth'],
    'the schema reaches everything below it only through src/resolvers/ (limits and enums: src/model/contract.ts)',
  ],
  [
    'src/http/**',
    [...STORES, 'src/writes'],
    'the transports reach the stores only through the resolvers and the read side (limits and enums: src/model/contract.ts)',
  ],
  ['src/pubsub/**', ['src/db', 'src/writes', 'src/resolvers'], 'the live tops read through the read side, never the record'],
  [
    'src/{reads,writes}/**',
    ['src/resolvers', 'src/jobs', 'src/schema', 'src/http', 'src/app.ts', 'src/main.ts'],
    'the read and write sides know no transport, resolver or job',
  ],
];

/** import-x/no-restricted-paths zones for `arrows`: one zone for each folder a target may not import. */
function arrows(rules) {
  const zones = rules.flatMap(([target, folders, why]) => folders.map((from) => ({ target, from, message: `${why} (issue 55; docs/architecture.md).` })));
  return [
    {
      files: ['src/**/*.ts'],
      plugins: { 'import-x': importX },
      settings: {
        'import-x/extensions': ['.ts', '.js'],
        'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
        'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
      },
      rules: { 'import-x/no-restricted-paths': ['error', { zones, basePath: import.meta.dirname }] },
    },
  ];
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
  // No two modules import each other: .dependency-cruiser.js, which counts type-only imports too
  // (import-x/no-cycle skips them), run by `npm run lint` after ESLint.
  // The arrows issue 55 adds, checked on the file each import resolves to (type-only imports included).
  ...arrows(ISSUE_55_ARROWS),
  // The arrows of the layout (docs/architecture.md): the inner folders never import the outer ones.
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
  // The live tops sit above the read side and the services (issue 55): the record they may not reach is in ISSUE_55_ARROWS.
  ...layer('src/pubsub/**', 'the live feed knows no GraphQL, no transport and no job', [
    '**/resolvers/**',
    '**/jobs/**',
    ...TRANSPORTS,
    'graphql',
    'graphql-*',
    'postgres',
    'drizzle-orm*',
  ]),
  ...layer('src/auth/**', 'keys are checked without GraphQL, Redis or the index', [...OUTER, '**/ranking/**', '**/pubsub/**', 'ioredis']),
  ...layer('src/services/**', 'the per-process services are built before the read and write sides: they call neither, and no job or transport', [
    '**/reads/**',
    '**/writes/**',
    '**/jobs/**',
    ...TRANSPORTS,
  ]),
  ...layer('src/jobs/**', 'the background jobs call the write side, never a transport', TRANSPORTS),
  ...layer('src/schema/**', 'the schema turns requests into resolver calls; it knows no transport and no job', [
    '**/http/**',
    '**/app.js',
    '**/jobs/**',
    'graphql-yoga',
    'graphql-ws',
  ]),
);
