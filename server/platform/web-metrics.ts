import { timingSafeEqual } from 'node:crypto';

/**
 * Who may read the web's Prometheus scrape (the scrape itself: server/main/web-services.ts). It is not
 * public: the web server (server/main/web-server.ts) serves it on WEB_METRICS_PORT (127.0.0.1) by passing the request to the /api/metrics route with a secret header
 * that only this process knows; on the public port the route answers 404 unless WEB_METRICS_TOKEN is
 * set and the request carries it as a bearer token.
 */
export const METRICS_PORT_HEADER = 'x-pin-metrics-port';
const SECRET = Symbol.for('pin.web.metrics-port-secret');

export function setMetricsPortSecret(secret: string | undefined): void {
  (globalThis as Record<symbol, unknown>)[SECRET] = secret;
}

const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** May this request read the metrics? (the metrics port's secret header, or the configured bearer token) */
export function metricsAllowed(headers: Headers, token: string | undefined): boolean {
  const secret = (globalThis as Record<symbol, unknown>)[SECRET];
  const viaPort = headers.get(METRICS_PORT_HEADER);
  if (typeof secret === 'string' && viaPort !== null && same(viaPort, secret)) return true;
  const bearer = /^Bearer (\S+)$/.exec(headers.get('authorization') ?? '')?.[1];
  return !!token && !!bearer && same(bearer, token);
}
