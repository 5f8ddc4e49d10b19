/**
 * The shapes the read side and the live tops answer, as the Pothos types expose them: the schema
 * names them through here, so that it reaches nothing below the resolvers.
 */
export type { PageInfo, PeriodStanding, Standing, StandingConnection, StandingEdge, TopBoard } from '../reads/views.js';
export type { TopEvent } from '../pubsub/top-changed.js';
