import { describe, expect, it } from 'vitest';
import { registry } from '../platform/metrics';
import { observeTrpcRequest } from './http-metrics';
import { appRouter } from '../main/app-router';

const KNOWN = new Set(Object.keys(appRouter._def.procedures));

const series = async () => (await registry.metrics()).split('\n').filter((l) => l.startsWith('pin_http_request_duration_seconds_count{'));

describe('HTTP request metrics', () => {
  it('observes each procedure of a batch with its status', async () => {
    observeTrpcRequest('http://x/api/trpc/booking.create,booking.byId?batch=1', 200, 0.02, KNOWN);
    observeTrpcRequest('http://x/api/trpc/booking.confirm', 409, 0.01, KNOWN);
    const text = await registry.metrics();
    expect(text).toMatch(/pin_http_request_duration_seconds_count\{procedure="booking.create",status="200"\} 1/);
    expect(text).toMatch(/pin_http_request_duration_seconds_count\{procedure="booking.byId",status="200"\} 1/);
    expect(text).toMatch(/pin_http_request_duration_seconds_count\{procedure="booking.confirm",status="409"\} 1/);
  });

  it('label values come from a closed set: unknown procedures are one `unknown` series, odd statuses `other`', async () => {
    const before = (await series()).length;
    // an 800-byte URL of invented procedure names (the probe added ~650 series with one of these)
    const invented = Array.from({ length: 120 }, (_, i) => `x${i}`).join(',');
    observeTrpcRequest(`http://x/api/trpc/${invented}?batch=1`, 404, 0.001, KNOWN);
    observeTrpcRequest(`http://x/api/trpc/${'a'.repeat(70)}%ZZ`, 404, 0.001, KNOWN);
    observeTrpcRequest('http://x/api/trpc/booking.confirm', 418, 0.001, KNOWN);
    const after = await series();
    expect(after.length - before).toBeLessThanOrEqual(2);
    expect(after.some((l) => l.startsWith('pin_http_request_duration_seconds_count{procedure="unknown",status="404"}'))).toBe(true);
    expect(after.some((l) => l.includes('procedure="booking.confirm",status="other"'))).toBe(true);
    expect(after.some((l) => /procedure="x\d+"/.test(l))).toBe(false);
  });
});
