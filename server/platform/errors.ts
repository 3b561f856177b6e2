/**
 * Domain errors carry a stable code (e.g. CRM_BOOKING_PROPERTY_OBJECT_BUSY) and a kind that maps to a
 * tRPC/HTTP code. Procedures never let anything else escape as a 500 for a user mistake.
 */
export type ErrorKind = 'BAD_REQUEST' | 'NOT_FOUND' | 'CONFLICT' | 'PRECONDITION_FAILED' | 'FORBIDDEN' | 'UNAUTHORIZED' | 'TOO_MANY_REQUESTS';

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
