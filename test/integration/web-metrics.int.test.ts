import { afterEach, describe, expect, it } from 'vitest';
import { resetRouteServices, testContextForRouteHandlers } from '../harness/harness';
import { METRICS_PORT_HEADER, setMetricsPortSecret } from '../../server/platform/web-metrics';

/**
 * /api/metrics is not public (app/api/metrics/route.ts): 404 on the public port by default; the web
 * server's metrics port (WEB_METRICS_PORT) reaches it with a secret of its process, and a configured
 * WEB_METRICS_TOKEN opens it to that bearer token only.
 */
// the route handlers run against this file's own database and topics
testContextForRouteHandlers();
afterEach(async () => {
  setMetricsPortSecret(undefined);
  delete process.env.WEB_METRICS_TOKEN;
  await resetRouteServices();
});

async function scrape(headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const { GET } = await import('@/app/api/metrics/route');
  const res = await GET(new Request('http://localhost/api/metrics', { headers }));
  return { status: res.status, text: await res.text() };
}

describe('web metrics off the public port', () => {
  it('default: 404 for anyone, whatever they send', async () => {
    expect(await scrape()).toEqual({ status: 404, text: 'Not found' });
    expect((await scrape({ authorization: 'Bearer x'.padEnd(40, 'x'), [METRICS_PORT_HEADER]: '' })).status).toBe(404);
  });

  it('through the metrics port: the secret header of this process opens it, a guessed one does not', async () => {
    setMetricsPortSecret('s'.repeat(64));
    expect((await scrape({ [METRICS_PORT_HEADER]: 'g'.repeat(64) })).status).toBe(404);
    const ok = await scrape({ [METRICS_PORT_HEADER]: 's'.repeat(64) });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('# TYPE pin_http_request_duration_seconds histogram');
  });

  it('WEB_METRICS_TOKEN: that bearer token and nothing else', async () => {
    process.env.WEB_METRICS_TOKEN = 't'.repeat(40);
    await resetRouteServices();
    expect((await scrape({ authorization: `Bearer ${'u'.repeat(40)}` })).status).toBe(404);
    expect((await scrape()).status).toBe(404);
    expect((await scrape({ authorization: `Bearer ${'t'.repeat(40)}` })).status).toBe(200);
  });
});
