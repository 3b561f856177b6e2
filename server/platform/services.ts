import { createDatabase, type Database } from './db';
import { loadEnv, type Env } from './env';
import { createLogger, type Logger } from './logger';
import { bindOutboxMetrics } from './outbox/relay';
import { bindCatalogMetrics } from '../catalog/retention-metrics';
import { bindHoldExpirationMetrics } from '../chessboard/metrics';
// every metric of the system is registered before /api/metrics renders its first scrape
import './metric-modules';

/** Process-wide singletons for the web app (route handlers are stateless otherwise). */
export interface Services {
  env: Env;
  database: Database;
  logger: Logger;
}

const g = globalThis as unknown as { __pinServices?: Services };

export function getServices(): Services {
  if (!g.__pinServices) {
    const env = loadEnv();
    const database = createDatabase(env.DATABASE_URL, { max: 20, applicationName: 'pin-web' });
    bindOutboxMetrics(database);
    bindCatalogMetrics(database, env.DELISTED_RETENTION_PERIOD_MS);
    bindHoldExpirationMetrics(database, env.HOLD_EXPIRATION_GRACE_MS);
    g.__pinServices = { env, database, logger: createLogger('web', { level: env.LOG_LEVEL }) };
  }
  return g.__pinServices;
}
