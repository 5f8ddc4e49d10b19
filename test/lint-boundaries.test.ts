import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The lint keeps the arrows of the layout (README, "Layout"): a folder never imports one above
 * it, and no modules import each other. Checked on files written for the purpose into the real
 * folders, linted with the project's own config: a rule whose settings stop resolving imports
 * (the cycle check needs the TypeScript resolver) reports nothing at all, and this test fails.
 */
const SRC = fileURLToPath(new URL('../src/', import.meta.url));

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
        refused: /^'([^']+)' import is restricted/.exec(m.message)?.[1] ?? null,
      })),
    );
  }

  beforeAll(async () => {
    eslint = new ESLint({ cwd: fileURLToPath(new URL('..', import.meta.url)) });
  });

  afterAll(async () => {
    await Promise.all(written.map((path) => rm(path, { force: true })));
  });

  it('refuses a service importing an operation, and an operation importing a transport', async () => {
    const service = await fixture(
      'services',
      `${stem}-service.ts`,
      "import { submitScores } from '../operations/submit.js';\nexport const x = submitScores;\n",
    );
    const operation = await fixture('operations', `${stem}-op.ts`, "import { buildApp } from '../app.js';\nexport const y = buildApp;\n");
    const messages = await messagesOf([service, operation]);
    expect(messages).toContainEqual({ file: basename(service), rule: 'no-restricted-imports', refused: '../operations/submit.js' });
    expect(messages).toContainEqual({ file: basename(operation), rule: 'no-restricted-imports', refused: '../app.js' });
  });

  it('refuses the database layer importing the index', async () => {
    const db = await fixture('db', `${stem}-db.ts`, "import { bucketKey } from '../ranking/keys.js';\nexport const z = bucketKey;\n");
    expect(await messagesOf([db])).toEqual([{ file: basename(db), rule: 'no-restricted-imports', refused: '../ranking/keys.js' }]);
  });

  it('refuses two modules that import each other, within one folder too', async () => {
    const a = await fixture('operations', `${stem}-a.ts`, `import { b } from './${stem}-b.js';\nexport const a = (): unknown => b;\n`);
    const b = await fixture('operations', `${stem}-b.ts`, `import { a } from './${stem}-a.js';\nexport const b = (): unknown => a;\n`);
    const messages = await messagesOf([a, b]);
    expect(messages.filter((m) => m.rule === 'import-x/no-cycle').map((m) => m.file)).toEqual([basename(a), basename(b)]);
  });

  it('accepts the same imports in the direction the layout allows', async () => {
    const operation = await fixture(
      'operations',
      `${stem}-ok.ts`,
      "import { createBoardDirectory } from '../services/board-directory.js';\nexport const ok = createBoardDirectory;\n",
    );
    expect(await messagesOf([operation])).toEqual([]);
  });
});
