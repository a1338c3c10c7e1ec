import { CertwrightError, fail } from '@certwright/core';

/** The CKR_ name of a pkcs11js error, or undefined for anything else. */
export function ckrName(error: unknown): string | undefined {
  const message = error instanceof Error ? error.message : '';
  return /^(CKR_[A-Z0-9_]+)/.exec(message)?.[1];
}

/** Return values after which the session or login is gone and re-opening may help. */
const RESET = new Set([
  'CKR_SESSION_HANDLE_INVALID',
  'CKR_SESSION_CLOSED',
  'CKR_USER_NOT_LOGGED_IN',
  'CKR_TOKEN_NOT_PRESENT',
  'CKR_TOKEN_NOT_RECOGNIZED',
  'CKR_DEVICE_REMOVED',
  'CKR_DEVICE_ERROR',
  'CKR_SLOT_ID_INVALID',
  'CKR_CRYPTOKI_NOT_INITIALIZED',
]);

export const isResetError = (error: unknown): boolean => RESET.has(ckrName(error) ?? '');

const LOGIN = new Set([
  'CKR_PIN_INCORRECT',
  'CKR_PIN_LEN_RANGE',
  'CKR_PIN_LOCKED',
  'CKR_PIN_EXPIRED',
  'CKR_PIN_INVALID',
]);
const UNSUPPORTED = new Set([
  'CKR_MECHANISM_INVALID',
  'CKR_MECHANISM_PARAM_INVALID',
  'CKR_KEY_TYPE_INCONSISTENT',
  'CKR_KEY_SIZE_RANGE',
  'CKR_TEMPLATE_INCONSISTENT',
  'CKR_ATTRIBUTE_VALUE_INVALID',
  'CKR_DOMAIN_PARAMS_INVALID',
  'CKR_CURVE_NOT_SUPPORTED',
  'CKR_KEY_FUNCTION_NOT_PERMITTED',
]);

/**
 * A token error as a domain failure: the CKR_ name is kept (it tells an operator what the
 * token said) but nothing else of the native message, which may carry paths.
 */
export function tokenFailure(error: unknown, doing: string, tokenLabel: string): CertwrightError {
  if (error instanceof CertwrightError) return error;
  const ckr = ckrName(error);
  if (ckr && LOGIN.has(ckr))
    return fail('config_invalid', `PKCS#11 login to token '${tokenLabel}' refused (${ckr})`);
  if (ckr && UNSUPPORTED.has(ckr))
    return fail('key_not_allowed', `the PKCS#11 token '${tokenLabel}' cannot ${doing} (${ckr})`, {
      cause: error,
    });
  if (ckr === 'CKR_KEY_HANDLE_INVALID' || ckr === 'CKR_OBJECT_HANDLE_INVALID')
    return fail('not_found', `the key to ${doing} is no longer on token '${tokenLabel}' (${ckr})`, {
      cause: error,
    });
  if (ckr && RESET.has(ckr))
    return fail('unavailable', `the PKCS#11 token '${tokenLabel}' is unavailable (${ckr})`, { cause: error });
  return fail('unavailable', `PKCS#11 token '${tokenLabel}' failed to ${doing}${ckr ? ` (${ckr})` : ''}`, {
    cause: error,
  });
}
