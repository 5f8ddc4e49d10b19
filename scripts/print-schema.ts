/** Writes schema.graphql from the code; a test fails when the committed copy drifts. */
import { writeFileSync } from 'node:fs';
import { printServedSchema } from '../src/schema/index.js';

writeFileSync(new URL('../schema.graphql', import.meta.url), printServedSchema());
