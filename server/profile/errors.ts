import { domainErrors, type ErrorKind } from '../platform/errors';

// the same shape as crm/errors.ts on purpose: each context owns its table of codes, domainErrors() builds both
/** profile's domain errors. Messages and details carry ids only — never a requisite field's value. */
export const PROFILE_ERRORS = {
  PROFILE_REQUISITE_SET_NOT_FOUND: 'NOT_FOUND',
  PROFILE_REQUISITE_SET_VERSION_CONFLICT: 'CONFLICT',
  PROFILE_REQUISITE_SET_ERASED: 'PRECONDITION_FAILED',
  PROFILE_REQUISITE_SET_IN_USE: 'PRECONDITION_FAILED',
  PROFILE_BOOKING_NOT_FOUND: 'NOT_FOUND',
  PROFILE_KEY_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  PROFILE_CIPHERTEXT_INVALID: 'CONFLICT',
  PROFILE_FORBIDDEN: 'FORBIDDEN',
} as const satisfies Record<string, ErrorKind>;

export type ProfileErrorCode = keyof typeof PROFILE_ERRORS;

export const profileError = domainErrors(PROFILE_ERRORS);
