import { AppError, type ErrorKind } from '../platform/errors';

/**
 * Every crm domain error by its stable code. The UI maps a code to plain words, so a code never
 * changes meaning; the kind is the tRPC/HTTP class of the answer.
 */
export const CRM_ERRORS = {
  CRM_BOOKING_PROPERTY_OBJECT_BUSY: 'CONFLICT',
  CRM_BOOKING_DEAL_NOT_ENGAGED: 'PRECONDITION_FAILED',
  CRM_BOOKING_DEAL_CLOSED: 'PRECONDITION_FAILED',
  CRM_BOOKING_RESERVE_EXPIRED: 'PRECONDITION_FAILED',
  CRM_BOOKING_BOOKING_EXPIRED: 'PRECONDITION_FAILED',
  CRM_BOOKING_PAYMENT_REQUIRED: 'PRECONDITION_FAILED',
  CRM_BOOKING_PROGRAM_NOT_PAID: 'PRECONDITION_FAILED',
  CRM_BOOKING_RECEIPT_MISSING: 'PRECONDITION_FAILED',
  CRM_BOOKING_INVALID_TRANSITION: 'CONFLICT',
  CRM_BOOKING_VERSION_CONFLICT: 'CONFLICT',
  CRM_BOOKING_NOT_FOUND: 'NOT_FOUND',
  CRM_BOOKING_NOT_OWNER: 'FORBIDDEN',
  CRM_DEAL_NOT_FOUND: 'NOT_FOUND',
  CRM_DEAL_INVALID_TRANSITION: 'CONFLICT',
  CRM_PROGRAM_NOT_FOUND: 'NOT_FOUND',
  CRM_IDEMPOTENCY_KEY_REUSED: 'CONFLICT',
  CRM_FORBIDDEN: 'FORBIDDEN',
} as const satisfies Record<string, ErrorKind>;

export type CrmErrorCode = keyof typeof CRM_ERRORS;

export function crmError(code: CrmErrorCode, message: string, details?: Record<string, unknown>): AppError {
  return new AppError(code, CRM_ERRORS[code], message, details);
}
