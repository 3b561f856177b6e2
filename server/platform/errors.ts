/**
 * Domain errors carry a stable code (e.g. CRM_BOOKING_PROPERTY_OBJECT_BUSY) and a kind that maps to a
 * tRPC/HTTP code. Procedures never let anything else escape as a 500 for a user mistake.
 */
export type ErrorKind = 'BAD_REQUEST' | 'NOT_FOUND' | 'CONFLICT' | 'PRECONDITION_FAILED' | 'FORBIDDEN' | 'UNAUTHORIZED' | 'TOO_MANY_REQUESTS' | 'SERVICE_UNAVAILABLE';

export class AppError extends Error {
  constructor(
    public readonly code: string,
    public readonly kind: ErrorKind,
    message: string,
    public readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

/**
 * A context's error factory from its code → kind table (crm, profile): the table is the one place a
 * code's kind is set, so a context cannot raise a code with a kind other than the one the UI expects.
 */
export function domainErrors<M extends Record<string, ErrorKind>>(kinds: M) {
  return (code: keyof M & string, message: string, details?: Record<string, unknown>): AppError =>
    new AppError(code, kinds[code], message, details);
}

/** Raised by validation of job/consumer settings (e.g. DelistedRetention BatchSize out of range). */
export class ValidationError extends AppError {
  constructor(field: string, message: string) {
    super('VALIDATION_ERROR', 'BAD_REQUEST', `${field}: ${message}`, { field });
    this.name = 'ValidationError';
  }
}

/** PostgreSQL error code helpers (postgres.js exposes `code` and `constraint_name`). */
export function pgErrorCode(e: unknown): string | undefined {
  const cause = (e as { cause?: unknown })?.cause ?? e;
  return (cause as { code?: string })?.code ?? (e as { code?: string })?.code;
}
export function pgConstraint(e: unknown): string | undefined {
  const cause = (e as { cause?: unknown })?.cause ?? e;
  return (cause as { constraint_name?: string })?.constraint_name ?? (e as { constraint_name?: string })?.constraint_name;
}

/**
 * The database could not be reached or dropped the connection (a restart, a failover, a network cut):
 * SQLSTATE class 08 (connection exception), 57P01–57P03 (shutdown, crash, not accepting connections yet),
 * postgres.js's own connection codes, or the socket's. The request did nothing (its transaction, if any,
 * rolled back with the connection) and may be retried as it is — a 503, not a 500.
 *
 * 25006 (read_only_sql_transaction) belongs here too: the app only ever writes to the primary, so a
 * write refused as read-only means the session is on a server that is (still or again) a standby — a
 * failover in progress, not a bad request. The refused statement changed nothing.
 */
export function isDatabaseUnavailable(e: unknown): boolean {
  const code = pgErrorCode(e);
  if (!code) return false;
  return code.startsWith('08') || ['57P01', '57P02', '57P03', '25006'].includes(code)
    || ['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(code);
}
