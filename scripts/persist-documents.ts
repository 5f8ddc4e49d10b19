/**
 * Registers the typed client's operations by hash: writes client/persisted-documents.json, every
 * operation document of client/src/generated.ts as `{ "<sha256 of its printed text>": "<text>" }`,
 * which the service loads at start (src/http/persisted-documents.ts) and the client sends by
 * hash. Run by `npm run client:generate` after graphql-codegen; test/persisted-documents.test.ts
 * fails when the committed file drifts from what this makes.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { persistedManifest } from '../src/http/persisted-documents.js';
import * as generated from '../client/src/generated.js';

export const MANIFEST_PATH = fileURLToPath(new URL('../client/persisted-documents.json', import.meta.url));

/** The manifest of the client's documents, as committed. */
export const manifestText = () => `${JSON.stringify(persistedManifest(Object.values(generated)), null, 2)}\n`;

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) writeFileSync(MANIFEST_PATH, manifestText());
