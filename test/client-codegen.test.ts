import { readFileSync } from 'node:fs';
import { generate } from '@graphql-codegen/cli';
import { describe, expect, it } from 'vitest';
import config from '../client/codegen.js';

describe('the typed client (client/)', () => {
  it('its generated documents are what graphql-codegen makes from schema.graphql now (run `npm run client:generate` after a change)', async () => {
    const outputs = (await generate({ ...config, silent: true }, false)) as { filename: string; content: string }[];
    expect(outputs.length).toBe(1);
    const committed = readFileSync(outputs[0]!.filename, 'utf8');
    expect(committed).toBe(outputs[0]!.content);
  }, 60_000);
});
