import { ZodError } from 'zod';
import { readCookie, resolveSession, SESSION_COOKIE } from '../auth/session';
import { isAppError, isDatabaseUnavailable } from '../platform/errors';
import type { Database } from '../platform/db';
import type { Logger } from '../platform/logger';
import { bookingsCsv, csvFileName, CSV_SEPARATORS } from './bookings-csv';
import { reportInput } from './input';

const NO_STORE = { 'cache-control': 'no-store' } as const;

/** An error answer in the shape of the tRPC errors' data (`domainCode`, `fields`), never a stack or SQL. */
function refuse(status: number, domainCode: string, message: string, fields?: Array<{ field: string; message: string }>): Response {
  return Response.json({ error: { message, domainCode, ...(fields ? { fields } : {}) } }, { status, headers: NO_STORE });
}

/**
 * GET /api/reports/bookings.csv?from=&to=[&projectId=][&tenantId=][&sep=comma|semicolon]: the session cookie, the roles and the
 * input of `reports.funnel` (the same 401 / 403 / 400 answers), then the CSV streamed as it is read.
 * `from` / `to` are ISO date-times with an offset (`to` exclusive). Never cached: it is a tenant's data.
 */
export async function bookingsCsvResponse(database: Database, logger: Logger, request: Request): Promise<Response> {
  let session;
  try {
    session = await resolveSession(database.db, readCookie(request.headers.get('cookie'), SESSION_COOKIE));
  } catch (e) {
    if (isDatabaseUnavailable(e)) return refuse(503, 'DATABASE_UNAVAILABLE', 'The database is unavailable. Retry shortly.');
    throw e;
  }
  if (!session) return refuse(401, 'UNAUTHORIZED', 'Sign in first');

  const params = new URL(request.url).searchParams;
  const sep = params.get('sep') ?? 'comma';
  if (!Object.hasOwn(CSV_SEPARATORS, sep)) {
    return refuse(400, 'VALIDATION_ERROR', 'Invalid input: sep', [{ field: 'sep', message: 'comma or semicolon' }]);
  }
  const parsed = reportInput.safeParse({
    from: params.get('from') ?? undefined,
    to: params.get('to') ?? undefined,
    projectId: params.get('projectId') || undefined,
    tenantId: params.get('tenantId') || undefined,
  });
  if (!parsed.success) {
    const fields = (parsed.error as ZodError).issues.map((i) => ({ field: i.path.map(String).join('.') || '(input)', message: i.message }));
    return refuse(400, 'VALIDATION_ERROR', `Invalid input: ${[...new Set(fields.map((f) => f.field))].join(', ')}`, fields);
  }

  let lines: AsyncGenerator<string>;
  try {
    lines = bookingsCsv(database.db, session.actor, parsed.data, CSV_SEPARATORS[sep as keyof typeof CSV_SEPARATORS]);
  } catch (e) {
    if (isAppError(e) && e.kind === 'FORBIDDEN') return refuse(403, e.code, e.message);
    throw e;
  }
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await lines.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      } catch (e) {
        // the header is sent: the only honest signal left is a broken download (a truncated file would look complete)
        logger.error({ err: { message: (e as Error).message } }, 'bookings CSV failed while streaming');
        controller.error(e);
      }
    },
    async cancel() {
      await lines.return(undefined);
    },
  });
  return new Response(body, {
    status: 200,
    headers: {
      ...NO_STORE,
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="${csvFileName(parsed.data)}"`,
      'x-content-type-options': 'nosniff',
    },
  });
}
