import superjson from 'superjson';
import { afterEach, describe, expect, it } from 'vitest';
import { resetRouteServices, testContextForRouteHandlers } from '../../test/harness/harness';

/**
 * Limits of the API in front of tRPC (app/api/trpc/[trpc]/route.ts, through the real route handler):
 * a body over API_MAX_BODY_BYTES (1 MiB) is a 413 before anything is parsed, a batch over
 * API_MAX_BATCH_CALLS (10) is a 400 before any call runs, a body that cannot be read as input gets a
 * fixed plain message, and a validation error lists field → message.
 */
// the route handlers run against this file's own database and topics
testContextForRouteHandlers();

afterEach(async () => {
  delete process.env.API_MAX_BODY_BYTES;
  delete process.env.API_MAX_BATCH_CALLS;
  await resetRouteServices();
});

const origin = { host: 'localhost', origin: 'http://localhost' };

async function post(path: string, body: BodyInit, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const { POST } = await import('@/app/api/trpc/[trpc]/route');
  const res = await POST(new Request(`http://localhost/api/trpc/${path}`, {
    method: 'POST', headers: { ...origin, 'content-type': 'application/json', ...headers }, body, duplex: 'half',
  } as RequestInit));
  return { status: res.status, text: await res.text() };
}
async function get(path: string): Promise<{ status: number; text: string }> {
  const { GET } = await import('@/app/api/trpc/[trpc]/route');
  const res = await GET(new Request(`http://localhost/api/trpc/${path}`, { headers: origin }));
  return { status: res.status, text: await res.text() };
}
const messageOf = (text: string) => {
  const body = JSON.parse(text) as { error?: { message?: string; json?: { message: string } } } | Array<{ error: { json: { message: string } } }>;
  return Array.isArray(body) ? body[0]!.error.json.message : body.error?.json?.message ?? body.error?.message;
};

/** A body whose reading is counted: how many bytes the server pulled before answering. */
function countedStream(total: number): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let sent = 0;
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  return {
    stream: new ReadableStream({
      pull(c) {
        if (sent >= total) return c.close();
        sent += chunk.length;
        c.enqueue(chunk);
      },
    }, { highWaterMark: 0 }),
    pulled: () => sent,
  };
}

describe('body size', () => {
  it('a declared body over 1 MiB is a 413 before it is read', async () => {
    const { stream, pulled } = countedStream(10 * 1024 * 1024);
    const res = await post('auth.signIn', stream, { 'content-length': String(10 * 1024 * 1024) });
    expect(res.status).toBe(413);
    expect(messageOf(res.text)).toBe('The request body is larger than 1048576 bytes');
    expect(pulled()).toBe(0);
  });

  it('an undeclared (chunked) body is cut at the limit: the rest is never read', async () => {
    const { stream, pulled } = countedStream(10 * 1024 * 1024);
    const res = await post('auth.signIn', stream);
    expect(res.status).toBe(413);
    expect(pulled()).toBeLessThanOrEqual(1024 * 1024 + 2 * 64 * 1024);
  });

  it('a body under the limit passes, and the limit is configurable (API_MAX_BODY_BYTES)', async () => {
    const input = JSON.stringify(superjson.serialize({ email: 'x@test.local', password: 'p'.repeat(150), pad: 'x'.repeat(1000) }));
    expect((await post('auth.signIn', input)).status).toBe(401);
    process.env.API_MAX_BODY_BYTES = '1024';
    await resetRouteServices();
    const res = await post('auth.signIn', input);
    expect(res.status).toBe(413);
    expect(messageOf(res.text)).toBe('The request body is larger than 1024 bytes');
  });
});

describe('batch size', () => {
  const batch = (n: number) => `${Array(n).fill('auth.me').join(',')}?batch=1&input=${encodeURIComponent('{}')}`;

  it('10 calls run; 11 are refused whole with 400 before any runs; configurable (API_MAX_BATCH_CALLS)', async () => {
    const ten = await get(batch(10));
    expect(JSON.parse(ten.text)).toHaveLength(10); // each answered (UNAUTHORIZED: nobody signed in)
    const eleven = await get(batch(11));
    expect(eleven.status).toBe(400);
    expect(messageOf(eleven.text)).toBe('A batch may carry at most 10 calls');
    process.env.API_MAX_BATCH_CALLS = '2';
    await resetRouteServices();
    expect((await get(batch(3))).status).toBe(400);
    expect(JSON.parse((await get(batch(2))).text)).toHaveLength(2);
  });
});

describe('unreadable input: fixed plain messages, nothing of the internals', () => {
  it.each([
    ['null', 'null'],
    ['not JSON', '{"json": '],
    ['deep nesting', '{"json":' + '['.repeat(20_000) + ']'.repeat(20_000) + '}'],
  ])('%s', async (_, body) => {
    const res = await post('auth.signIn', body);
    expect(res.status).toBe(400);
    expect(messageOf(res.text)).toBe('The request body is not valid input');
    expect(res.text).not.toMatch(/destructure|Maximum call|Unexpected|position|\.js/i);
    expect((JSON.parse(res.text) as { error: { json: { data: { domainCode: string } } } }).error.json.data.domainCode).toBe('UNREADABLE_INPUT');
  });

  it('a body that is not an object is a validation error of the whole input', async () => {
    const res = await post('auth.signIn', '"hello"');
    expect(res.status).toBe(400);
    expect(messageOf(res.text)).toBe('Invalid input: (input)');
  });

  it('a validation error lists field → message (no raw zod dump)', async () => {
    const res = await post('auth.signIn', JSON.stringify(superjson.serialize({ email: 'x', password: '' })));
    expect(res.status).toBe(400);
    const body = JSON.parse(res.text) as { error: { json: { message: string; data: { domainCode: string; fields: Array<{ field: string; message: string }> } } } };
    expect(body.error.json.message).toBe('Invalid input: email, password');
    expect(body.error.json.data.domainCode).toBe('VALIDATION_ERROR');
    expect(body.error.json.data.fields.map((f) => f.field)).toEqual(['email', 'password']);
    for (const f of body.error.json.data.fields) expect(f.message).toMatch(/^[A-Z][^\n{}[\]]+$/);
  });
});
