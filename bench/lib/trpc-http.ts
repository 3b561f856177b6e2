import http from 'node:http';

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

/**
 * POST over node:http through a keep-alive agent of at most `maxSockets` connections: a request beyond
 * them waits in the agent's queue (what a reverse proxy's bounded upstream pool does) instead of
 * opening one more connection to a server that is already behind.
 */
function poolPost(agent: http.Agent, url: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', (e: NodeJS.ErrnoException) => reject(new Error(`request failed (${e.code ?? ''} ${e.message})`)));
    req.end(body);
  });
}

/**
 * `maxConnections`: mutations go through a bounded connection pool (poolPost) instead of fetch, whose
 * default agent opens a new connection for every request that finds the others busy.
 */
export function trpcClient(baseUrl: string, cookie: string, opts: { maxConnections?: number } = {}) {
  const headers = { 'content-type': 'application/json', cookie };
  const agent = opts.maxConnections ? new http.Agent({ keepAlive: true, maxSockets: opts.maxConnections }) : undefined;
  return {
    close: () => agent?.destroy(),
    async mutation<T>(path: string, input: unknown): Promise<T> {
      if (agent) {
        const { status, text } = await poolPost(agent, `${baseUrl}/api/trpc/${path}`, headers, JSON.stringify({ json: input }));
        if (status < 200 || status >= 300) throw new TrpcHttpError(path, status, text);
        return (JSON.parse(text) as { result: { data: { json: T } } }).result.data.json;
      }
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
