import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The lint keeps the arrows of the layout (docs/architecture.md): a folder never imports one above
 * it, and no modules import each other. Checked on files written for the purpose into the real
 * folders, linted with the project's own config: a rule whose settings stop resolving imports
 * (the issue 55 arrows need the TypeScript resolver) reports nothing at all, and this test fails.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src/');

describe('the lint refuses imports against the layout', () => {
  const written: string[] = [];
  // A stem of its own, so that two runs at once (or files left by a killed run) never collide.
  const stem = `lint-fixture-${randomUUID().slice(0, 8)}`;
  let eslint: ESLint;

  /** Writes `text` as `name` into `src/<dir>/` for the test, removed after it. */
  async function fixture(dir: string, name: string, text: string): Promise<string> {
    const path = join(SRC, dir, name);
    await writeFile(path, text);
    written.push(path);
    return path;
  }

  /** What the lint says of `paths`: each message's file, rule and, for a refused import, what it imports. */
  async function messagesOf(paths: string[]): Promise<{ file: string; rule: string | null; refused: string | null }[]> {
    const results = await eslint.lintFiles(paths);
    return results.flatMap((result) =>
      result.messages.map((m) => ({
        file: basename(result.filePath),
        rule: m.ruleId,
        refused: (/^'([^']+)' import is restricted/.exec(m.message) ?? /^Unexpected path "([^"]+)"/.exec(m.message))?.[1] ?? null,
      })),
    );
  }

  beforeAll(async () => {
    eslint = new ESLint({ cwd: ROOT });
    // The first file linted starts TypeScript's project service over the whole tree (tens of
    // seconds on a busy machine): paid here once, so that each test times only its own files.
    await eslint.lintFiles([join(SRC, 'model/contract.ts')]);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(written.map((path) => rm(path, { force: true })));
  });

  it('refuses a service importing a use case, and a use case importing what builds the transports', async () => {
    const service = await fixture('services', `${stem}-service.ts`, "import { submitScores } from '../writes/submit.js';\nexport const x = submitScores;\n");
    const write = await fixture('writes', `${stem}-write.ts`, "import { buildApp } from '../app.js';\nexport const y = buildApp;\n");
    const messages = await messagesOf([service, write]);
    expect(messages).toContainEqual({ file: basename(service), rule: 'import-x/no-restricted-paths', refused: '../writes/submit.js' });
    expect(messages).toContainEqual({ file: basename(write), rule: 'import-x/no-restricted-paths', refused: '../app.js' });
  });

  it('refuses the database layer importing the index', async () => {
    const db = await fixture('db', `${stem}-db.ts`, "import { bucketKey } from '../ranking/keys.js';\nexport const z = bucketKey;\n");
    expect(await messagesOf([db])).toEqual([{ file: basename(db), rule: 'no-restricted-imports', refused: '../ranking/keys.js' }]);
  });

  it('refuses the schema naming a type of the record, and a transport importing a use case', async () => {
    const schema = await fixture('schema', `${stem}-schema.ts`, "import type { Player } from '../db/players.js';\nexport type P = Player;\n");
    const http = await fixture('http', `${stem}-http.ts`, "import { flagPlayer } from '../writes/flags.js';\nexport const h = flagPlayer;\n");
    const messages = await messagesOf([schema, http]);
    expect(messages).toContainEqual({ file: basename(schema), rule: 'import-x/no-restricted-paths', refused: '../db/players.js' });
    expect(messages).toContainEqual({ file: basename(http), rule: 'import-x/no-restricted-paths', refused: '../writes/flags.js' });
  });

  it('refuses the index importing the names kept in Redis (profiles/ is above it)', async () => {
    const ranking = await fixture(
      'ranking',
      `${stem}-ranking.ts`,
      "import { createProfileStore } from '../profiles/store.js';\nexport const r = createProfileStore;\n",
    );
    expect(await messagesOf([ranking])).toEqual([{ file: basename(ranking), rule: 'import-x/no-restricted-paths', refused: '../profiles/store.js' }]);
  });

  it('accepts the schema and a transport taking the contract limits from src/model/contract.ts', async () => {
    const schema = await fixture('schema', `${stem}-limits.ts`, "import { MAX_FRIENDS } from '../model/contract.js';\nexport const most = MAX_FRIENDS;\n");
    const http = await fixture('http', `${stem}-limits.ts`, "import { MAX_REGIONS } from '../model/contract.js';\nexport const most = MAX_REGIONS;\n");
    expect(await messagesOf([schema, http])).toEqual([]);
  });

  it('accepts the same imports in the direction the layout allows', async () => {
    const write = await fixture(
      'writes',
      `${stem}-ok.ts`,
      "import { createBoardDirectory } from '../services/board-directory.js';\nexport const ok = createBoardDirectory;\n",
    );
    expect(await messagesOf([write])).toEqual([]);
  });
});

/**
 * The circles `npm run lint` refuses (dependency-cruiser with .dependency-cruiser.js; ESLint's
 * import-x/no-cycle skips type-only imports and has no setting to count them), over the fixtures in
 * test/fixtures/import-circles/: each module in a circle, by folder and file name.
 */
async function circlesIn(fixture: string, overrides: { tsPreCompilationDeps?: boolean } = {}): Promise<string[]> {
  return (await circlesUnder(join('test/fixtures/import-circles', fixture), overrides)).map((path) => path.split('/').slice(-2).join('/'));
}

/** Each module in a circle under `dir` (relative to the project), as a path from there. */
async function circlesUnder(dir: string, overrides: { tsPreCompilationDeps?: boolean } = {}): Promise<string[]> {
  const options = await extractDepcruiseOptions(join(ROOT, '.dependency-cruiser.js'));
  const result = await cruise([dir], { ...options, ...overrides }, {}, { tsConfig: extractTSConfig(join(ROOT, 'tsconfig.json')) });
  if (typeof result.output === 'string') throw new Error('dependency-cruiser answered a report, not its result');
  const modules = result.output.summary.violations
    .filter((violation) => violation.rule.name === 'no-circular')
    .flatMap((violation) => [violation.from, ...(violation.cycle ?? []).map((step) => step.name)]);
  return [...new Set(modules)].sort();
}

describe('the lint refuses modules that import each other', () => {
  it('refuses a circle closed by a type-only import', async () => {
    expect(await circlesIn('type-only')).toEqual(['type-only/board.ts', 'type-only/bucket.ts']);
  });

  it('sees that circle only because it reads the imports before TypeScript erases the type-only ones', async () => {
    // The fixture is a circle of types: with tsPreCompilationDeps off, as import-x/no-cycle, nothing.
    expect(await circlesIn('type-only', { tsPreCompilationDeps: false })).toEqual([]);
  });

  it('refuses two modules that import each other’s values', async () => {
    expect(await circlesIn('values')).toEqual(['values/score.ts', 'values/standing.ts']);
  });

  it('accepts the same modules with the arrow one way', async () => {
    expect(await circlesIn('no-circle')).toEqual([]);
  });

  it('finds no circle in src/', async () => {
    expect(await circlesUnder('src')).toEqual([]);
  }, 60_000);
});
