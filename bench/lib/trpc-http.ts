/**
 * tRPC over plain HTTP (what the browser's httpLink sends): POST /api/trpc/<path> with the superjson
 * envelope {"json": input}; the answer is {"result":{"data":{"json": …}}}. No batching.
 */
export class TrpcHttpError extends Error {
  constructor(readonly path: string, readonly status: number, readonly body: string) {
    super(`${path}: HTTP ${status} ${body.slice(0, 300)}`);
  }
}

/** fetch() rejects with "fetch failed" and the reason in `cause` (connection refused, reset, timeout …): keep it. */
async function send(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`${(e as Error).message}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})`.replace('( ', '(') : ''}`);
  }
}

export function trpcClient(baseUrl: string, cookie: string) {
  const headers = { 'content-type': 'application/json', cookie };
  return {
    async mutation<T>(path: string, input: unknown): Promise<T> {
      const res = await send(`${baseUrl}/api/trpc/${path}`, { method: 'POST', headers, body: JSON.stringify({ json: input }) });
      const text = await res.text();
      if (!res.ok) throw new TrpcHttpError(path, res.status, text);
      return (JSON.parse(text) as { result: { data: { json: T } } }).result.data.json;
    },
    async query<T>(path: string, input: unknown): Promise<T> {
      const res = await send(`${baseUrl}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`, { headers });
      const text = await res.text();
      if (!res.ok) throw new TrpcHttpError(path, res.status, text);
      return (JSON.parse(text) as { result: { data: { json: T } } }).result.data.json;
    },
  };
}

export interface BookingJson {
  id: string;
  status: string;
  version: number;
  dealId: string;
  propertyObjectId: string;
}
