/**
 * Domain errors. Every error the library throws is a {@link CertwrightError} with two stable,
 * machine-readable words:
 *
 * - `code`, the coarse family of the failure (the REST layer maps it to an HTTP status);
 * - `reason`, the precise cause, from the closed union {@link FailureReason}. Protocol mappers
 *   `switch` on it to choose an ACME problem type, an EST status, a SCEP failInfo or an OCSP
 *   response status. Adding a reason makes every exhaustive mapper fail to compile until it
 *   decides what the reason means on its wire.
 *
 * HTTP words (405, 415 …) are not domain failures: they live at the edge that speaks HTTP.
 * Callers match errors with {@link isCertwrightError} (by name and code), never `instanceof`
 * alone, so that duplicate copies of this package still agree.
 */
export type ErrorCode =
  | 'validation_failed'
  | 'bad_request'
  | 'invalid_reference'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'gone'
  | 'payload_too_large'
  | 'rate_limited'
  | 'unavailable'
  | 'config_invalid'
  | 'internal';

/**
 * Why an operation failed, precisely. Each reason belongs to exactly one {@link ErrorCode}
 * ({@link REASON_CODES}); the first reason listed under a code is that code's default.
 */
export const REASON_CODES = {
  // validation_failed: well-formed input that the rules refuse.
  invalid_input: 'validation_failed',
  /** A public key that is unsafe or unsupported whatever the profile says (RSA < 2048, a point not on its curve, DSA). */
  key_rejected: 'validation_failed',
  /** A key algorithm or size that the certificate's profile does not allow. */
  key_not_allowed: 'validation_failed',
  /**
   * An algorithm the service does not accept: a signature or digest algorithm (on a CSR, a JWS,
   * a CMS message), or a CMS content-encryption or key-transport algorithm.
   */
  signature_algorithm_not_allowed: 'validation_failed',
  /** A name that can never be on a certificate (bare wildcard, public suffix, control characters …). */
  name_rejected: 'validation_failed',
  /** A name the profile or a policy rule does not allow. */
  name_not_allowed: 'validation_failed',
  /** The names of a request differ from what was authorized (an order's identifiers, a challenge's claims). */
  names_mismatch: 'validation_failed',
  /** A CSR lacks an attribute the profile requires. */
  csr_attribute_missing: 'validation_failed',
  /** A certificate usage the profile does not allow: an extended key usage, or a CA certificate. */
  eku_not_allowed: 'validation_failed',
  /** A certificate extension certwright does not understand or allow (an unknown critical extension in a CSR). */
  extension_not_allowed: 'validation_failed',
  /** A requested validity the profile or the issuer cannot give. */
  validity_not_allowed: 'validation_failed',
  /** A time outside what is acceptable (a message signed too far in the past or future, an expired challenge). */
  time_invalid: 'validation_failed',
  /**
   * An outbound destination the address guard refuses: it resolves to a private address no
   * allowlist admits, or to loopback, link-local, cloud metadata, multicast, reserved … space.
   */
  address_refused: 'validation_failed',
  /** A destination answered, but not what was required (an ACME challenge's response did not match). */
  incorrect_response: 'validation_failed',
  /** A feature this Node.js runtime lacks (post-quantum keys before Node.js 24 with OpenSSL 3.5). */
  runtime_unsupported: 'validation_failed',

  // bad_request: input that cannot be read at all.
  malformed: 'bad_request',
  /** A PKCS#10 request that does not parse. */
  csr_malformed: 'bad_request',
  /** A CSR whose self-signature does not verify (no proof of possession). */
  csr_signature_invalid: 'bad_request',
  /**
   * A signed message (CMS, JWS) whose signature does not verify, or an enveloped one (CMS) whose
   * content does not decrypt: both are a failed integrity check.
   */
  signature_invalid: 'bad_request',

  invalid_reference: 'invalid_reference',
  unauthenticated: 'unauthorized',
  not_permitted: 'forbidden',
  not_found: 'not_found',

  conflict: 'conflict',
  /** A unique value (name, key, serial) is taken. */
  duplicate: 'conflict',
  /** A delete would orphan records that still point at the target. */
  still_referenced: 'conflict',
  /** The record's state does not allow the operation now (wrong status, already issued …). */
  invalid_state: 'conflict',
  already_revoked: 'conflict',
  /**
   * The certificate is short-lived (noRevAvail, RFC 9608): no CRL or OCSP covers it, so a
   * revocation could reach no relying party; it ends by expiring.
   */
  revocation_unavailable: 'conflict',
  /** The issuer is disabled: it signs nothing (it still publishes CRL/OCSP for what it issued). */
  issuer_disabled: 'conflict',
  /** The issuer cannot sign: its CA material is missing or was never created. */
  issuer_not_ready: 'conflict',

  gone: 'gone',
  too_large: 'payload_too_large',
  rate_limited: 'rate_limited',
  unavailable: 'unavailable',
  /**
   * The audit trail's stored head (its newest position and MAC) is gone from the database: no
   * event can be chained, so every audited change is refused until an operator restores it.
   */
  audit_head_missing: 'unavailable',
  // Outbound connections (ACME validation, webhooks, probes): why a destination gave no usable
  // answer. Protocol surfaces map them to their own failure classes.
  /** The destination's name did not resolve (no such name, no address, resolver failure). */
  dns_failed: 'unavailable',
  /** No TCP connection could be made or it broke before a complete answer. */
  connection_failed: 'unavailable',
  /** The TLS handshake failed, or the peer's certificate was not accepted. */
  tls_failed: 'unavailable',
  /** The destination did not answer within the time allowed. */
  timed_out: 'unavailable',
  /** The destination's answer was larger than the caller accepts. */
  response_too_large: 'unavailable',
  /** The destination redirected and the request's policy does not follow that redirect. */
  redirect_refused: 'unavailable',
  config_invalid: 'config_invalid',
  internal: 'internal',
} as const satisfies Record<string, ErrorCode>;

export type FailureReason = keyof typeof REASON_CODES;

/** The reason an error of `code` carries when its thrower names none. */
export const DEFAULT_REASONS: Readonly<Record<ErrorCode, FailureReason>> = Object.freeze({
  validation_failed: 'invalid_input',
  bad_request: 'malformed',
  invalid_reference: 'invalid_reference',
  unauthorized: 'unauthenticated',
  forbidden: 'not_permitted',
  not_found: 'not_found',
  conflict: 'conflict',
  gone: 'gone',
  payload_too_large: 'too_large',
  rate_limited: 'rate_limited',
  unavailable: 'unavailable',
  config_invalid: 'config_invalid',
  internal: 'internal',
});

export interface FieldIssue {
  /** Dotted path of the offending field, e.g. `alert_thresholds_days.2`. */
  field: string;
  message: string;
}

export interface CertwrightErrorOptions {
  cause?: unknown;
  /** The precise cause; defaults to the code's default reason. Must belong to `code`. */
  reason?: FailureReason;
  /** Per-field problems; set for `validation_failed` and `invalid_reference`. */
  fields?: FieldIssue[];
  /** Extra members a surface adds to its error body (e.g. agent-retirement counts). */
  extra?: Record<string, unknown>;
}

export class CertwrightError extends Error {
  override readonly name = 'CertwrightError';
  readonly code: ErrorCode;
  readonly reason: FailureReason;
  readonly fields: FieldIssue[];
  readonly extra: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: CertwrightErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const reason = options.reason ?? DEFAULT_REASONS[code];
    if (REASON_CODES[reason] !== code) {
      // A programming error, caught by the first test that throws it.
      throw new TypeError(`failure reason '${reason}' does not belong to code '${code}'`);
    }
    this.code = code;
    this.reason = reason;
    this.fields = options.fields ?? [];
    this.extra = options.extra ?? {};
  }

  /** Whether the message may be shown to a caller: internal causes never are. */
  get exposed(): boolean {
    return !HIDDEN_CODES.has(this.code);
  }
}

const HIDDEN_CODES: ReadonlySet<ErrorCode> = new Set(['internal', 'config_invalid']);

/** An error for `reason`, its code derived from the reason. */
export function fail(
  reason: FailureReason,
  message: string,
  options: Omit<CertwrightErrorOptions, 'reason'> = {},
): CertwrightError {
  return new CertwrightError(REASON_CODES[reason], message, { ...options, reason });
}

/** Matches by name and code so that duplicate copies of this package still agree. */
export function isCertwrightError(value: unknown): value is CertwrightError {
  return (
    value instanceof CertwrightError ||
    (typeof value === 'object' &&
      value !== null &&
      (value as { name?: unknown }).name === 'CertwrightError' &&
      typeof (value as { code?: unknown }).code === 'string')
  );
}

/** The fixed sentence shown in place of an internal cause. */
export const INTERNAL_ERROR_MESSAGE = 'internal error';

/**
 * The text a user may see for `error`: the message of an exposed CertwrightError, otherwise a
 * fixed sentence. Use it wherever an error reaches a response, a job, an audit event or a
 * notification; log the error itself (with the request or job id) for operators.
 */
export function publicMessage(error: unknown, max = 2000): string {
  if (isCertwrightError(error) && error.exposed) return error.message.slice(0, max);
  return INTERNAL_ERROR_MESSAGE;
}

export const validationError = (fields: FieldIssue[], message?: string): CertwrightError =>
  new CertwrightError(
    'validation_failed',
    message ?? fields.map((f) => `${f.field}: ${f.message}`).join('; '),
    { fields },
  );

export const notFound = (what: string, id: string): CertwrightError =>
  new CertwrightError('not_found', `${what} '${id}' does not exist`, { extra: { resource: what, id } });

export const conflict = (message: string, extra?: Record<string, unknown>): CertwrightError =>
  new CertwrightError('conflict', message, extra ? { extra } : {});

/** A 409 because the record's state does not allow the operation now (reason `invalid_state`). */
export const invalidState = (message: string, extra?: Record<string, unknown>): CertwrightError =>
  fail('invalid_state', message, extra ? { extra } : {});
