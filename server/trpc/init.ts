import { initTRPC, TRPCError, type AnyTRPCRootTypes, type TRPCDefaultErrorShape, type TRPCRootConfig } from '@trpc/server';
import superjson from 'superjson';
import { ZodError } from 'zod';
import type { Actor, Role } from '../auth/actor';
import { AppError, isAppError, isDatabaseUnavailable, pgErrorCode } from '../platform/errors';
import { markSpanFailed, SpanKind, withSpan } from '../platform/tracing';
import type { Context } from './context';

/** Every error's shape: tRPC's default one with the domain code, the invalid fields and nothing internal. */
function errorFormatter({ shape, error }: { shape: TRPCDefaultErrorShape; error: TRPCError }) {
  const cause = error.cause;
  // an answer that failed its output schema is a 500 like any other: its fields are the server's, not the caller's
  const fields = cause instanceof ZodError && error.code !== 'INTERNAL_SERVER_ERROR' ? fieldErrors(cause) : undefined;
  const unreadable = !fields && unreadableInput(error.code, cause);
  return {
    ...shape,
    message: error.code === 'INTERNAL_SERVER_ERROR'
      // a 500 says nothing about the internals (the message of a failed query carries its SQL and parameters);
      // the detail is in the server log ('procedure failed')
      ? 'Internal server error'
      : fields
        ? `Invalid input: ${[...new Set(fields.map((f) => f.field))].join(', ')}`
        : unreadable ? UNREADABLE_INPUT : shape.message,
    data: {
      ...shape.data,
      // stable domain code for the UI's plain-words message (e.g. CRM_BOOKING_PROPERTY_OBJECT_BUSY)
      domainCode: isAppError(cause) ? cause.code : fields ? 'VALIDATION_ERROR' : unreadable ? 'UNREADABLE_INPUT' : null,
      // validation errors: field (dotted path, `(input)` for the whole input) → message
      fields,
      // the missed deadline of a booking the expiry worker closed (CRM_BOOKING_RESERVE_EXPIRED / _BOOKING_EXPIRED), ISO
      deadline: isAppError(cause) && typeof cause.details?.deadline === 'string' ? cause.details.deadline : undefined,
      // a refused transition: the status the booking / deal / object is in now, so the UI can say what
      // happened ("the booking is already Booked") instead of "impossible in the current status"
      currentStatus: isAppError(cause) && typeof cause.details?.status === 'string' ? cause.details.status : undefined,
      stack: undefined,
    },
  };
}

const t = initTRPC.context<Context>().create({ transformer: superjson, errorFormatter });

/**
 * The router's transformer and error formatter as tRPC's root config holds them (the transformer as its
 * input/output pair, isDev as tRPC's default), for the single-call path's getTRPCErrorShape and
 * transformTRPCResponse (single-call.ts): built here from the same two values `t` was made with.
 */
export const rootConfig = {
  transformer: { input: superjson, output: superjson },
  errorFormatter,
  isDev: process.env.NODE_ENV !== 'production',
} as unknown as TRPCRootConfig<AnyTRPCRootTypes>;

/** The one answer to a body that cannot be read as input (not JSON, `null`, too deep for the transformer). */
export const UNREADABLE_INPUT = 'The request body is not valid input';

/**
 * The adapter wraps whatever reading the input threw (JSON.parse, superjson on `null`, a stack overflow
 * on deep nesting) into a BAD_REQUEST whose message is that error's: internals, never shown.
 */
function unreadableInput(code: string, cause: unknown): boolean {
  return (code === 'BAD_REQUEST' || code === 'PARSE_ERROR') && cause instanceof Error && !isAppError(cause) && !(cause instanceof TRPCError);
}

function fieldErrors(e: ZodError): Array<{ field: string; message: string }> {
  return e.issues.map((i) => ({ field: i.path.map(String).join('.') || '(input)', message: i.message }));
}

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const mergeRouters = t.mergeRouters;
export const middleware = t.middleware;

/**
 * 503 SERVICE_UNAVAILABLE / DATABASE_UNAVAILABLE for a database that cannot be reached (see
 * isDatabaseUnavailable): raised by the procedures' error mapping and by the HTTP route when the
 * session lookup itself fails.
 */
export function databaseUnavailableError(cause: unknown): TRPCError {
  const message = 'The database is unavailable; nothing was changed. Retry shortly.';
  return new TRPCError({ code: 'SERVICE_UNAVAILABLE', message, cause: new AppError('DATABASE_UNAVAILABLE', 'SERVICE_UNAVAILABLE', message, { pgCode: pgErrorCode(cause) }) });
}

/**
 * Domain errors → tRPC codes; anything unexpected is logged and surfaces as a plain 500 without internals.
 *
 * A query (a read: it changes nothing, so running it twice is harmless) that lost its database
 * connection is run once more before it is answered 503: on a restart or a failover the connection
 * that failed was the old server's, and the pool's next one goes to whichever host is the primary now
 * (the multi-host DATABASE_URL). A mutation is never re-run here — its client retries it with the same
 * idempotency key once the 503 tells it nothing was changed.
 */
const errorMapping = t.middleware(async ({ ctx, next, path, type }) => {
  let result = await next();
  if (!result.ok && type === 'query' && result.error.code === 'INTERNAL_SERVER_ERROR' && isDatabaseUnavailable(result.error.cause)) {
    ctx.logger.warn({ path, code: pgErrorCode(result.error.cause) }, 'database unavailable: read retried once');
    result = await next();
  }
  if (!result.ok) {
    const cause = result.error.cause;
    if (isAppError(cause)) {
      throw new TRPCError({ code: cause.kind, message: cause.message, cause });
    }
    if (result.error.code === 'INTERNAL_SERVER_ERROR' && pgErrorCode(cause)?.startsWith('22')) {
      // PostgreSQL refused a value that came with the request (SQLSTATE class 22, data exception: a NUL
      // character in a text, a year beyond 9999, a number out of range). The transaction rolled back; it is
      // the request that is bad, not the server.
      ctx.logger.warn({ path, pgCode: pgErrorCode(cause) }, 'request value refused by PostgreSQL');
      throw new TRPCError({
        code: 'BAD_REQUEST', message: 'A value of the request cannot be stored',
        cause: new AppError('INVALID_INPUT_VALUE', 'BAD_REQUEST', 'A value of the request cannot be stored', { pgCode: pgErrorCode(cause) }),
      });
    }
    if (result.error.code === 'INTERNAL_SERVER_ERROR' && isDatabaseUnavailable(cause)) {
      // nothing was done (the transaction went with the connection); the client may retry as it is
      ctx.logger.warn({ path, code: pgErrorCode(cause), err: { message: (cause as Error)?.message } }, 'database unavailable');
      throw databaseUnavailableError(cause);
    }
    if (result.error.code === 'INTERNAL_SERVER_ERROR') {
      ctx.logger.error({ path, err: { message: result.error.message, stack: result.error.stack } }, 'procedure failed');
    }
  }
  return result;
});

/**
 * The command's span (its outbox rows carry it as traceparent, so the relay and the consumers continue
 * this trace) and a logger whose lines carry the request's correlationId. No-op spans when tracing is off.
 */
const traced = t.middleware(({ ctx, path, type, next }) =>
  withSpan(`trpc ${path}`, {
    kind: SpanKind.SERVER,
    attributes: {
      'rpc.system': 'trpc', 'rpc.method': path, 'pin.trpc.type': type, 'pin.correlation_id': ctx.correlationId,
      ...(ctx.actor?.tenantId ? { 'pin.tenant_id': ctx.actor.tenantId } : {}),
    },
  }, async (span) => {
    const result = await next({ ctx: { logger: ctx.logger.child({ correlationId: ctx.correlationId }) } });
    if (!result.ok) markSpanFailed(span, result.error.code);
    return result;
  }));

export const publicProcedure = t.procedure.use(traced).use(errorMapping);

/** The caller must be signed in (UNAUTHORIZED otherwise); the resolver sees `ctx.actor` as an Actor. */
function requireActor(actor: Actor | null): Actor {
  if (!actor) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Sign in first' });
  return actor;
}

export const authedProcedure = publicProcedure.use(({ ctx, next }) => next({ ctx: { actor: requireActor(ctx.actor) } }));

/**
 * Signed in (UNAUTHORIZED) and of one of `roles` (FORBIDDEN), in one middleware that hands on only
 * `{ actor }` (tRPC merges it into the context): it was authedProcedure's middleware, which re-spread
 * the whole context, and a second one for the role — a closure, a spread and a `next` per command.
 * Tenant scope is applied again inside every query.
 */
export function roleProcedure(...roles: Role[]) {
  return publicProcedure.use(({ ctx, next }) => {
    const actor = requireActor(ctx.actor);
    if (!roles.includes(actor.role as Role)) {
      throw new TRPCError({ code: 'FORBIDDEN', message: 'Your role does not allow this action' });
    }
    return next({ ctx: { actor } });
  });
}
