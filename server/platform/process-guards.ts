import type { Logger } from './logger';
import { isAbandonedSocketReset, isPostgresClosedConnectionWrite } from './db';
import { isDatabaseUnavailable } from './errors';

/**
 * A PostgreSQL restart must not end the worker. What it leaves behind, outside any of our awaits:
 * - postgres.js writes a transaction's next statement to the closed connection from a setImmediate
 *   (isPostgresClosedConnectionWrite) — the transaction already failed and is retried by its job / consumer;
 * - a reset of a socket its owner had already dropped (isAbandonedSocketReset);
 * - a rejected query promise nobody awaits any more, rejected with the connection's CONNECTION_CLOSED /
 *   ECONNRESET when the server went away (seen once in a fresh-clone CI run of the PostgreSQL-restart
 *   scenario: `write CONNECTION_CLOSED` from postgres.js's `closed()`, right after every consumer and job had
 *   failed with the same error and was retrying) — whatever issued it has already failed the same way.
 * The pool reconnects on the next query. Anything else still ends the process (fatal line, exit 1).
 */
export function installWorkerProcessGuards(logger: Logger): void {
  process.on('unhandledRejection', (reason) => {
    if (isDatabaseUnavailable(reason)) {
      logger.error({ err: { message: (reason as Error)?.message } }, 'a query of a closed database connection was not awaited (database restart?); going on');
      return;
    }
    throw reason; // → uncaughtException below: fatal
  });
  process.on('uncaughtException', (e) => {
    if (isPostgresClosedConnectionWrite(e)) {
      logger.error({ err: { message: (e as Error).message } }, 'postgres.js wrote to a closed connection (database restart?); the transaction failed, the pool reconnects');
      return;
    }
    if (isAbandonedSocketReset(e)) {
      logger.error({ err: { message: (e as Error).message } }, 'a connection its owner had already dropped was reset (database restart?); nothing reads it, going on');
      return;
    }
    logger.fatal({ err: { message: (e as Error)?.message, stack: (e as Error)?.stack } }, 'uncaught exception');
    logger.flush();
    process.exit(1);
  });
}
