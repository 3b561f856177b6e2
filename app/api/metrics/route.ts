import { getServices, webMetricsResponse } from '@/server/main/web-services';
import { metricsAllowed } from '@/server/platform/web-metrics';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** Not public: the web metrics port (WEB_METRICS_PORT) or WEB_METRICS_TOKEN as a bearer token; anyone else gets 404. */
export async function GET(req: Request): Promise<Response> {
  const services = getServices();
  if (!metricsAllowed(req.headers, services.env.WEB_METRICS_TOKEN)) return new Response('Not found', { status: 404, headers: { 'cache-control': 'no-store' } });
  return webMetricsResponse();
}
