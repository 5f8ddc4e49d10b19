/**
 * The batch loader's former names, for the profile cache until it imports batch-loader.ts itself
 * (its owner's change); nothing else imports this file.
 */
export {
  type BatchLoader as TurnLoader,
  type BatchLoaderOptions as TurnLoaderOptions,
  createBatchLoader as createTurnLoader,
  MAX_BATCH_LOADS as MAX_TURN_BATCH,
} from './batch-loader.js';
