import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.js';
import './scalars.js';
import './enums.js';
import './board.js';
import './player.js';
import './standing.js';
import './standing-connection.js';
import './season.js';
import './bucket.js';
import './top-board.js';
import './cohort.js';
import './cohort-changed.js';
import './overtaken.js';
import './tournament.js';
import './submission.js';
import './bucket-status.js';
import './rebuild.js';
import './player-flag.js';
import './entry-removal.js';
import './player-board-score.js';
import './player-result.js';
import './api-key.js';
import './store-health.js';
import './webhook.js';
import './award.js';

/** The served schema. Only the app imports it. */
export const schema = builder.toSchema();

/** The schema as committed in schema.graphql, for client code generation. */
export function printServedSchema(): string {
  return printSchema(lexicographicSortSchema(schema));
}
