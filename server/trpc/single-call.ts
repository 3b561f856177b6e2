/**
 * The one hand-written piece on the hot path: a single tRPC mutation (every console command) answered
 * from the node:http request without the whatwg Request, Response, Headers, AbortSignals and web
 * streams that tRPC's fetch adapter builds around it. Measured side by side in one run, those cost more
 * than 15 % of the web's CPU per booking command (docs/decisions/0033-single-call-path.md). Everything
 * that decides the answer is tRPC's own public API — callTRPCProcedure, getTRPCErrorFromUnknown,
 * getTRPCErrorShape, transformTRPCResponse, getHTTPStatusCode — and the route's own CSRF check, session
 * and context (http-handler.ts); single-call.int.test.ts sends the same requests through both and
 * compares status, headers and body.
 *
 * Anything else — a query, a batch, a stream, another content type or method, a query string, a path
 * that is not one known mutation — goes through the fetch adapter as before.
 */
import {
  callTRPCProcedure, getTRPCErrorFromUnknown, getTRPCErrorShape, transformTRPCResponse, TRPCError,
} from '@trpc/server';
import { getHTTPStatusCode } from '@trpc/server/http';
import superjson from 'superjson';
import { appRouter } from '../main/app-router';
import { getServices } from '../main/web-services';
import { isCrossOrigin } from '../auth/same-origin';
import type { Context } from './context';
import { contextOf, CROSS_ORIGIN_REFUSAL, KNOWN_PROCEDURES, logInternalError, TRPC_PREFIX, type RequestHead } from './http-handler';
import { observeTrpcRequest } from './http-metrics';
import { rootConfig } from './init';

/** The router's mutations by path (a path tRPC's URL parsing or percent-decoding would not change). */
const MUTATIONS: ReadonlySet<string> = new Set(
  Object.entries(appRouter._def.procedures as unknown as Record<string, { _def: { type: string } }>)
    .filter(([path, p]) => p._def.type === 'mutation' && /^[A-Za-z0-9_.]+$/.test(path))
    .map(([path]) => path),
);

/** A request's answer as plain values for node-http.ts to write; headers sorted by name, as a Response's iterate. */
export interface PlainAnswer {
  status: number;
  headers: Array<[string, string]>;
  cookies: string[];
  body: Buffer;
}

/**
 * The mutation a request calls, when the single-call path answers it: POST, no query string, one known
 * mutation's path, `Content-Type: application/json` as tRPC matches it, no streaming accept. Decided from
 * the method, URL and headers only, before anything runs; null sends the request to the fetch adapter.
 */
export function singleCallMutation(method: string, url: string, headers: Pick<Headers, 'get'>): string | null {
  if (method !== 'POST' || !url.startsWith(TRPC_PREFIX) || url.includes('?')) return null;
  const path = url.slice(TRPC_PREFIX.length);
  if (!MUTATIONS.has(path)) return null;
  if (headers.get('content-type')?.toLowerCase().split(';', 1)[0]!.trim() !== 'application/json') return null;
  if (headers.get('trpc-accept') !== null || headers.get('accept')?.split(',').some((t) => t.trim() === 'application/jsonl')) return null;
  return path;
}

/** The fetch adapter's headers of a single call, with the route's Cache-Control, in a Response's order. */
const HEADERS: Array<[string, string]> = [['cache-control', 'no-store'], ['content-type', 'application/json'], ['vary', 'trpc-accept, accept']];
const CROSS_ORIGIN: PlainAnswer = {
  status: 403, cookies: [],
  headers: [['cache-control', 'no-store'], ['content-type', 'application/json']],
  body: Buffer.from(CROSS_ORIGIN_REFUSAL),
};

/**
 * What the route answers a call that singleCallMutation accepted, whose body (within API_MAX_BODY_BYTES)
 * has been read: CSRF, context (session), the procedure, the error shape and status, the metric — the
 * steps of tRPC's resolveResponse for a call that is not batched, in its order.
 */
export async function answerSingleCall(head: RequestHead & { url: string }, path: string, body: Buffer): Promise<PlainAnswer> {
  const started = performance.now();
  const answer = await singleCall(head, path, body);
  observeTrpcRequest(head.url, answer.status, (performance.now() - started) / 1000, KNOWN_PROCEDURES);
  return answer;
}

async function singleCall(head: RequestHead, path: string, body: Buffer): Promise<PlainAnswer> {
  const services = getServices();
  if (isCrossOrigin(head, services.env)) return CROSS_ORIGIN;
  const cookies: string[] = [];
  let ctx: Context | undefined;
  let input: unknown;
  let read: Promise<unknown> | undefined;
  // as tRPC's JSON content type reads it (Request.json(): UTF-8 without its BOM, JSON.parse; then the
  // transformer), once: what it throws is a BAD_REQUEST with the thrown error's message
  const getRawInput = () => (read ??= (async () => {
    try {
      input = superjson.deserialize(JSON.parse(body.toString('utf8').replace(/^\uFEFF/, '')));
      return input;
    } catch (cause) {
      if (cause instanceof TRPCError) throw cause;
      throw new TRPCError({ code: 'BAD_REQUEST', message: cause instanceof Error ? cause.message : 'Invalid input', cause });
    }
  })());
  let response: { error: ReturnType<typeof getTRPCErrorShape> } | { result: { data: unknown } };
  try {
    // the session lookup runs in the context, as the adapter's createContext: its failure is the call's error
    ctx = await contextOf(services, head, cookies, false, [path], []);
    response = { result: { data: await callTRPCProcedure({ router: appRouter, path, getRawInput, ctx, type: 'mutation', signal: undefined, batchIndex: 0 }) } };
  } catch (cause) {
    const error: TRPCError = getTRPCErrorFromUnknown(cause);
    logInternalError(services, error, path);
    response = { error: getTRPCErrorShape({ config: rootConfig, ctx, error, input, path, type: 'mutation' }) };
  }
  return {
    status: getHTTPStatusCode(response),
    headers: HEADERS,
    cookies,
    body: Buffer.from(JSON.stringify(transformTRPCResponse(rootConfig, response))),
  };
}
