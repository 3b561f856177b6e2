import { createDatabase, type Database } from '../platform/db';
import { loadEnv, type Env } from './env';
import { createLogger, type Logger } from '../platform/logger';
import { collectProcessMetrics, renderMetrics } from '../platform/metrics';
import { bindOutboxMetrics } from '../platform/outbox/relay';
import { OUTBOX_NAMES } from './outboxes';
import { bindCatalogMetrics } from '../catalog/retention-metrics';
import { bindHoldExpirationMetrics } from '../chessboard/metrics';
// every metric of the system is registered before /api/metrics renders its first scrape
import './metric-modules';
// the lists and ports of the composition root, for every route that reaches a context through these services
import './registry';

/**
 * The web app's composition root (worker.ts is the worker's): its process-wide singletons, and the
 * contexts' metrics bound to its database. Lives outside platform/ because it names the contexts.
 */
export interface Services {
  env: Env;
  database: Database;
  /** DATABASE_READ_URL's replica, when set (the ops dashboard's reads) */
  readDatabase?: Database;
  logger: Logger;
}

const g = globalThis as unknown as { __pinServices?: Services };

export function getServices(): Services {
  if (!g.__pinServices) {
    const env = loadEnv();
    const database = createDatabase(env.DATABASE_URL, { max: 20, applicationName: 'pin-web' });
    bindOutboxMetrics(database, OUTBOX_NAMES);
    bindCatalogMetrics(database, env.DELISTED_RETENTION_PERIOD_MS);
    bindHoldExpirationMetrics(database, env.HOLD_EXPIRATION_GRACE_MS);
    const readDatabase = env.DATABASE_READ_URL ? createDatabase(env.DATABASE_READ_URL, { max: 5, applicationName: 'pin-web-read' }) : undefined;
    g.__pinServices = { env, database, ...(readDatabase ? { readDatabase } : {}), logger: createLogger('web', { level: env.LOG_LEVEL, format: env.LOG_FORMAT }) };
  }
  return g.__pinServices;
}

/** The web's Prometheus scrape (who may read it: platform/web-metrics.ts `metricsAllowed`). */
export async function webMetricsResponse(): Promise<Response> {
  getServices();
  collectProcessMetrics();
  const { body, contentType } = await renderMetrics();
  return new Response(body, { headers: { 'content-type': contentType, 'cache-control': 'no-store' } });
}
