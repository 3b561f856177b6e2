import { describe, expect, it } from 'vitest';
import { limitRequest } from './request-limits';

/** limitRequest's bodyWithinLimit (the node:http adapter has read the body already): no second Request, the batch limit still applies. */
describe('limitRequest with bodyWithinLimit', () => {
  const limits = { maxBodyBytes: 16, maxBatchCalls: 2 };
  const post = (path: string, body: string) => new Request(`http://127.0.0.1${path}`, { method: 'POST', body });

  it('passes the request on as it is, its body unread', async () => {
    const req = post('/api/trpc/a', '{"json":{}}');
    const limited = await limitRequest(req, limits, true);
    expect(limited).toEqual({ ok: true, req });
    expect(req.bodyUsed).toBe(false);
  });

  it('without it, the body is read into a new Request (the fetch route\'s path)', async () => {
    const req = post('/api/trpc/a', '{"json":{}}');
    const limited = await limitRequest(req, limits);
    expect(limited.ok && limited.req).not.toBe(req);
    expect(req.bodyUsed).toBe(true);
  });

  it('still refuses a batch over the limit', async () => {
    const limited = await limitRequest(post('/api/trpc/a,b,c?batch=1', '{}'), limits, true);
    expect(limited.ok).toBe(false);
    expect(!limited.ok && limited.response.status).toBe(400);
  });
});
