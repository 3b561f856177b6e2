import { getServices } from '@/server/main/web-services';
import { checkHealth } from '@/server/platform/health';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** db and kafka reachability; 200 when both answer, 503 otherwise. Never cached: a stale "ok" hides an outage. */
export async function GET(): Promise<Response> {
  const health = await checkHealth(getServices());
  return Response.json(health, { status: health.status === 'ok' ? 200 : 503, headers: { 'cache-control': 'no-store' } });
}
