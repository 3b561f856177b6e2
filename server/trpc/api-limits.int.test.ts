import superjson from 'superjson';
import { afterEach, describe, expect, it } from 'vitest';
import { insertTenant, insertUser, TEST_PASSWORD } from '../../test/fixtures/auth.fixtures';
import { resetRouteServices, testContextForRouteHandlers } from '../../test/harness/harness';
import { ReadBuckets, readCost } from './read-limit';

/**
 * Limits and headers of the web API through the real route handlers: no-store on the health check and
 * on the 405s, the per-session cap of live streams, the per-user read limit (429 + Retry-After on both
 * the batched and the single-call path), and an out-of-range date answered as a field error.
 */
const t = testContextForRouteHandlers();
afterEach(async () => {
  delete process.env.READ_LIMIT_PER_SECOND;
  delete process.env.READ_LIMIT_BURST;
  await resetRouteServices();
});

const origin = { host: 'localhost', origin: 'http://localhost' };
async function signedIn(role: 'viewer' | 'pin_manager' | 'ops' = 'viewer'): Promise<string> {
  const { POST } = await import('@/app/api/trpc/[trpc]/route');
  const user = await insertUser(t.database.db, role, await insertTenant(t.database.db));
  const res = await POST(new Request('http://localhost/api/trpc/auth.signIn', {
    method: 'POST', headers: { ...origin, 'content-type': 'application/json' },
    body: JSON.stringify(superjson.serialize({ email: user.email, password: TEST_PASSWORD })),
  }));
  expect(res.status).toBe(200);
  return res.headers.get('set-cookie')!.split(';')[0]!;
}
const query = (path: string, input: unknown) => `http://localhost/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(superjson.serialize(input)))}`;

describe('Cache-Control on the answers outside tRPC', () => {
  it('/api/health, GET /api/auth/sign-in (405) and POST /api/events (405) are no-store', async () => {
    const { GET: health } = await import('@/app/api/health/route');
    const signIn = await import('@/app/api/auth/sign-in/route');
    const events = await import('@/app/api/events/route');
    expect((await health()).headers.get('cache-control')).toBe('no-store');
    for (const res of [signIn.GET(), events.POST()]) {
      expect(res.status).toBe(405);
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    expect(signIn.GET().headers.get('allow')).toBe('POST');
    expect(events.POST().headers.get('allow')).toBe('GET');
  });
});

describe('live streams per session', () => {
  it('8 open streams of one session; the 9th is a 429 with Retry-After; a closed one frees its place; another session is not affected', async () => {
    const { GET: events } = await import('@/app/api/events/route');
    const cookie = await signedIn();
    const open: AbortController[] = [];
    const openOne = async (c = cookie) => {
      const abort = new AbortController();
      const res = await events(new Request('http://localhost/api/events', { headers: { cookie: c }, signal: abort.signal }));
      if (res.status === 200) open.push(abort);
      else await res.body?.cancel();
      return res;
    };
    try {
      for (let i = 0; i < 8; i++) expect((await openOne()).status, `stream ${i + 1}`).toBe(200);
      const refused = await openOne();
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.get('cache-control')).toBe('no-store');
      expect((await openOne(await signedIn())).status).toBe(200);
      open.shift()!.abort();
      expect((await openOne()).status).toBe(200);
      expect((await openOne()).status).toBe(429);
    } finally {
      for (const a of open) a.abort();
    }
  });
});

describe('per-user read limit', () => {
  it('a token bucket: a burst, then refill at the rate; a call dearer than the bucket waits for a full one', () => {
    let now = 0;
    const b = new ReadBuckets(2, 10, () => now);
    expect(b.take('u', 10)).toBe(0);
    expect(b.take('u', 1)).toBeCloseTo(0.5);
    expect(b.take('other', 10)).toBe(0);
    now = 1000;
    expect(b.take('u', 2)).toBe(0);
    expect(b.take('u', 1)).toBeCloseTo(0.5);
    now = 10_000;
    expect(b.take('u', 50)).toBe(0);
    expect(readCost('ops.dashboard.overview')).toBe(10);
    expect(readCost('chessboard.projects')).toBe(1);
    expect(new ReadBuckets(0, 1, () => now).take('u', 1000)).toBe(0);
  });

  it('heavy read batches drain the bucket: 429 TOO_MANY_REQUESTS with Retry-After (batched and single calls); another user is not affected', async () => {
    process.env.READ_LIMIT_PER_SECOND = '0.5';
    process.env.READ_LIMIT_BURST = '25';
    await resetRouteServices();
    const { GET } = await import('@/app/api/trpc/[trpc]/route');
    const cookie = await signedIn('ops');
    const batch = () => GET(new Request('http://localhost/api/trpc/ops.dashboard.jobs,ops.dashboard.jobs?batch=1&input=%7B%7D', { headers: { ...origin, cookie } }));
    expect((await batch()).status).toBe(200);
    const refused = await batch();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect(JSON.stringify(await refused.json())).toContain('API_READ_RATE_LIMITED');
    // 5 tokens left: five single lookups pass, the sixth is refused on the single-call path as well
    for (let i = 0; i < 5; i++) expect((await GET(new Request('http://localhost/api/trpc/auth.me', { headers: { ...origin, cookie } }))).status).toBe(200);
    const single = await GET(new Request('http://localhost/api/trpc/auth.me', { headers: { ...origin, cookie } }));
    expect(single.status).toBe(429);
    expect(Number(single.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // mutations are not reads
    const { POST } = await import('@/app/api/trpc/[trpc]/route');
    expect((await POST(new Request('http://localhost/api/trpc/notifications.markAllRead', {
      method: 'POST', headers: { ...origin, cookie, 'content-type': 'application/json' }, body: JSON.stringify(superjson.serialize(undefined)),
    }))).status).toBe(200);
    const other = await signedIn('ops');
    expect((await GET(new Request('http://localhost/api/trpc/ops.dashboard.jobs', { headers: { ...origin, cookie: other } }))).status).toBe(200);
  });
});

describe('dates out of range in a read', () => {
  it('a year after 9999 is a 400 naming the field, not "A value of the request cannot be stored"', async () => {
    const { GET } = await import('@/app/api/trpc/[trpc]/route');
    const cookie = await signedIn('pin_manager');
    const far = new Date(Date.UTC(10_000, 0, 1));
    for (const [path, input, field] of [
      ['booking.list', { createdFrom: far }, 'createdFrom'],
      ['booking.list', { createdTo: '+010000-01-01T00:00:00.000Z' }, 'createdTo'],
      ['ops.dashboard.jobRuns', { job: 'booking-expiration', from: far }, 'from'],
      ['profile.list', { before: new Date(Date.UTC(1200, 0, 1)) }, 'before'],
    ] as const) {
      const res = await GET(new Request(query(path, input), { headers: { ...origin, cookie } }));
      const body = await res.json() as { error: { json: { message: string; data: { domainCode: string; fields: Array<{ field: string }> } } } };
      expect(res.status, path).toBe(400);
      expect(body.error.json.data.domainCode, path).toBe('VALIDATION_ERROR');
      expect(body.error.json.data.fields.map((f) => f.field), path).toEqual([field]);
      expect(body.error.json.message).toContain(field);
    }
  });
});
