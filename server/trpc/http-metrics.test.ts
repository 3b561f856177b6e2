import { describe, expect, it } from 'vitest';
import { registry } from '../platform/metrics';
import { observeTrpcRequest } from './http-metrics';

describe('HTTP request metrics', () => {
  it('observes each procedure of a batch with its status', async () => {
    observeTrpcRequest('http://x/api/trpc/booking.create,booking.list?batch=1', 200, 0.02);
    observeTrpcRequest('http://x/api/trpc/booking.confirm', 409, 0.01);
    const text = await registry.metrics();
    expect(text).toMatch(/pin_http_request_duration_seconds_count\{procedure="booking.create",status="200"\} 1/);
    expect(text).toMatch(/pin_http_request_duration_seconds_count\{procedure="booking.list",status="200"\} 1/);
    expect(text).toMatch(/pin_http_request_duration_seconds_count\{procedure="booking.confirm",status="409"\} 1/);
  });
});
