/**
 * No two modules of src/ import each other, however far round, type-only imports included: a
 * circle of types is still two modules that cannot be read one without the other, and one value
 * import added to it later makes it a circle at run time. eslint-plugin-import-x's no-cycle skips
 * `import type` (it has no setting to count it), so `npm run lint` runs dependency-cruiser for the
 * circles, and ESLint for the arrows between folders (eslint.config.js).
 *
 * @type {import('dependency-cruiser').IConfiguration}
 */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules that import each other, type-only imports included: move what both need into a module below them.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    // Reads the imports as written, before TypeScript erases those that import only types.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: ['node_modules'] },
    // Only this project's own modules: a package is never part of a circle of ours.
    exclude: { path: ['node_modules'] },
  },
};
