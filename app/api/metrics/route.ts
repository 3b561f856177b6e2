import { renderMetrics, collectProcessMetrics } from '@/server/platform/metrics';
import { getServices } from '@/server/platform/services';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export async function GET(): Promise<Response> {
  getServices();
  collectProcessMetrics();
  const { body, contentType } = await renderMetrics();
  return new Response(body, { headers: { 'content-type': contentType } });
}
