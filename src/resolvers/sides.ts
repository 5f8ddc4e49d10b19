/**
 * The sides the resolvers call, as the request context carries them (schema/context.ts): the
 * schema names them through here, never the write side itself.
 */
export type { AdminSide } from '../writes/admin.js';
export type { WriteSide } from '../writes/index.js';
export type { Records } from '../writes/records.js';
