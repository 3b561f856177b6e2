import { histogram } from '../platform/metrics';

const requestDuration = histogram(
  'pin_http_request_duration_seconds',
  'tRPC HTTP request duration by procedure and HTTP status',
  ['procedure', 'status'],
  [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
);

/** `/api/trpc/booking.create,booking.list?batch=1` → one observation per procedure of the batch. */
export function observeTrpcRequest(url: string, status: number, seconds: number): void {
  const path = new URL(url).pathname.replace(/^\/api\/trpc\/?/, '');
  const procedures = path ? decodeURIComponent(path).split(',') : ['(none)'];
  for (const procedure of procedures) requestDuration.observe({ procedure: procedure.slice(0, 80), status: String(status) }, seconds);
}
