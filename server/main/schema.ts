/**
 * Every table of every context: what drizzle-kit generates migrations from (drizzle/drizzle.config.ts).
 * A composition root like worker.ts: platform/ never imports it (nor any context).
 */
export * from '../crm/schema';
export * from '../chessboard/schema';
export * from '../catalog/schema';
export * from '../ops/schema';
export * from '../auth/schema';
export * from '../profile/schema';
export * from '../messenger/schema';
export * from '../notifications/schema';
export * from '../rewards/schema';
