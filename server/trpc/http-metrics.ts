import { histogram } from '../platform/metrics';
import { procedurePath, requestUrlParts } from './request-url';

const requestDuration = histogram(
  'pin_http_request_duration_seconds',
  'tRPC HTTP request duration by procedure and HTTP status',
  ['procedure', 'status'],
  [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
);

/** HTTP statuses the API answers with; anything else is counted as `other`. */
const STATUSES = new Set(['200', '204', '207', '400', '401', '403', '404', '405', '408', '409', '412', '413', '415', '422', '429', '499', '500', '501', '503', '504']);

/**
 * `/api/trpc/booking.create,booking.list?batch=1` → one observation per procedure of the batch.
 * Every label value comes from a closed set: a procedure that is not in `known` (the router's
 * procedures) is `unknown` and an unusual status is `other`, so no request can add series.
 */
export function observeTrpcRequest(url: string, status: number, seconds: number, known: ReadonlySet<string>): void {
  const path = procedurePath(requestUrlParts(url).pathname);
  let procedures: string[];
  try {
    procedures = path ? decodeURIComponent(path).split(',') : ['(none)'];
  } catch {
    procedures = ['unknown'];
  }
  const code = STATUSES.has(String(status)) ? String(status) : 'other';
  for (const p of procedures) requestDuration.observe({ procedure: known.has(p) ? p : 'unknown', status: code }, seconds);
}
