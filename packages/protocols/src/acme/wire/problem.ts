import {
  CertwrightError,
  type FailureReason,
  INTERNAL_ERROR_MESSAGE,
  isCertwrightError,
  publicMessage,
  REASON_CODES,
} from '@certwright/core';

/**
 * ACME problem documents (RFC 8555 §6.7, RFC 7807): one table from the domain's
 * {@link FailureReason} to a problem type and HTTP status (docs/architecture.md, "Errors and
 * reasons"), plus the problems only the protocol knows (a bad nonce, an unknown account key).
 */

export const ACME_ERROR_PREFIX = 'urn:ietf:params:acme:error:';

/** RFC 8555 §6.7 problem types, and RFC 9773's `alreadyReplaced`. */
export type AcmeProblemType =
  | 'accountDoesNotExist'
  | 'alreadyReplaced'
  | 'alreadyRevoked'
  | 'badCSR'
  | 'badNonce'
  | 'badPublicKey'
  | 'badRevocationReason'
  | 'badSignatureAlgorithm'
  | 'caa'
  | 'compound'
  | 'connection'
  | 'dns'
  | 'externalAccountRequired'
  | 'incorrectResponse'
  | 'invalidContact'
  | 'malformed'
  | 'orderNotReady'
  | 'rateLimited'
  | 'rejectedIdentifier'
  | 'serverInternal'
  | 'tls'
  | 'unauthorized'
  | 'unsupportedContact'
  | 'unsupportedIdentifier'
  | 'userActionRequired';

export interface AcmeProblemMapping {
  type: AcmeProblemType;
  status: number;
}

/** Where a failure happened, for the few reasons whose problem depends on the endpoint. */
export interface ProblemContext {
  /** The route (`order/:id/finalize`): `invalid_state` on finalize is `orderNotReady` (RFC 8555 §7.4). */
  endpoint?: 'finalize' | (string & {});
}

/**
 * The problem type and HTTP status of a domain failure. Exhaustive: a reason added to the
 * union fails to compile here until ACME decided what it means.
 */
export function problemForReason(reason: FailureReason, context: ProblemContext = {}): AcmeProblemMapping {
  switch (reason) {
    case 'invalid_input':
    case 'validity_not_allowed':
    case 'time_invalid':
    case 'malformed':
    case 'signature_invalid':
    case 'invalid_reference':
      return { type: 'malformed', status: 400 };
    case 'key_rejected':
    case 'key_not_allowed':
    case 'runtime_unsupported':
      return { type: 'badPublicKey', status: 400 };
    case 'signature_algorithm_not_allowed':
      return { type: 'badSignatureAlgorithm', status: 400 };
    case 'name_rejected':
    case 'name_not_allowed':
      return { type: 'rejectedIdentifier', status: 400 };
    case 'names_mismatch':
    case 'csr_attribute_missing':
    case 'eku_not_allowed':
    case 'extension_not_allowed':
    case 'csr_malformed':
    case 'csr_signature_invalid':
      return { type: 'badCSR', status: 400 };
    // 403 for both, as Boulder and Pebble answer: ACME has no HTTP authentication to retry.
    case 'unauthenticated':
    case 'not_permitted':
    case 'issuer_disabled':
    case 'gone':
      return { type: 'unauthorized', status: 403 };
    case 'not_found':
      return { type: 'malformed', status: 404 };
    case 'conflict':
    case 'duplicate':
    case 'still_referenced':
      return { type: 'malformed', status: 409 };
    case 'invalid_state':
      return context.endpoint?.endsWith('finalize')
        ? { type: 'orderNotReady', status: 403 }
        : { type: 'malformed', status: 409 };
    case 'already_revoked':
      return { type: 'alreadyRevoked', status: 400 };
    // RFC 8555 has no type for a certificate that cannot be revoked (RFC 9608); the detail says why.
    case 'revocation_unavailable':
      return { type: 'malformed', status: 409 };
    case 'too_large':
      return { type: 'malformed', status: 413 };
    case 'rate_limited':
      return { type: 'rateLimited', status: 429 };
    case 'issuer_not_ready':
    case 'unavailable':
    case 'audit_head_missing':
      return { type: 'serverInternal', status: 503 };
    // Outbound failures (challenge validation): the failure classes a client is told.
    case 'address_refused':
    case 'connection_failed':
    case 'timed_out':
    case 'redirect_refused':
      return { type: 'connection', status: 400 };
    case 'dns_failed':
      return { type: 'dns', status: 400 };
    case 'tls_failed':
      return { type: 'tls', status: 400 };
    case 'incorrect_response':
    case 'response_too_large':
      return { type: 'incorrectResponse', status: 400 };
    case 'config_invalid':
    case 'internal':
      return { type: 'serverInternal', status: 500 };
  }
}

/** The reason each protocol-only problem carries, so code that only knows reasons still reads it. */
const PROTOCOL_REASONS: Readonly<Record<AcmeProblemType, FailureReason>> = {
  accountDoesNotExist: 'unauthenticated',
  alreadyReplaced: 'conflict',
  alreadyRevoked: 'already_revoked',
  badCSR: 'csr_malformed',
  badNonce: 'malformed',
  badPublicKey: 'key_rejected',
  badRevocationReason: 'invalid_input',
  badSignatureAlgorithm: 'signature_algorithm_not_allowed',
  caa: 'not_permitted',
  compound: 'invalid_input',
  connection: 'connection_failed',
  dns: 'dns_failed',
  externalAccountRequired: 'not_permitted',
  incorrectResponse: 'incorrect_response',
  invalidContact: 'invalid_input',
  malformed: 'malformed',
  orderNotReady: 'invalid_state',
  rateLimited: 'rate_limited',
  rejectedIdentifier: 'name_rejected',
  serverInternal: 'internal',
  tls: 'tls_failed',
  unauthorized: 'not_permitted',
  unsupportedContact: 'invalid_input',
  unsupportedIdentifier: 'invalid_input',
  userActionRequired: 'not_permitted',
};

/** Default HTTP status of each protocol-only problem. */
const PROTOCOL_STATUS: Partial<Record<AcmeProblemType, number>> = {
  accountDoesNotExist: 400,
  badNonce: 400,
  externalAccountRequired: 400,
  unauthorized: 403,
  userActionRequired: 403,
  orderNotReady: 403,
  rateLimited: 429,
  serverInternal: 500,
};

/**
 * The HTTP status a stored problem (a challenge's or an order's `error`) states in its `status`
 * member (RFC 7807 §3.1): the protocol's status of that type, 400 for the validation failures.
 */
export function storedProblemStatus(type: string): number {
  return PROTOCOL_STATUS[type as AcmeProblemType] ?? 400;
}

/**
 * A failure that names its ACME problem type itself (badNonce, accountDoesNotExist …). A
 * {@link CertwrightError} like any other, so `isCertwrightError` and `publicMessage` apply.
 */
export class AcmeProblemError extends CertwrightError {
  readonly acmeType: AcmeProblemType;
  readonly status: number;
  /** Members added to the problem document (`algorithms`, `subproblems` …). */
  readonly members: Record<string, unknown>;
  /** Response headers the problem needs (Location of a conflicting account, Retry-After). */
  readonly headers: Record<string, string>;

  constructor(
    type: AcmeProblemType,
    detail: string,
    options: {
      status?: number;
      members?: Record<string, unknown>;
      headers?: Record<string, string>;
      cause?: unknown;
    } = {},
  ) {
    const reason = PROTOCOL_REASONS[type];
    super(REASON_CODES[reason], detail, { reason, cause: options.cause });
    this.acmeType = type;
    this.status = options.status ?? PROTOCOL_STATUS[type] ?? 400;
    this.members = options.members ?? {};
    this.headers = options.headers ?? {};
  }
}

/** Throwable shorthand: `throw acmeProblem('badNonce', 'the nonce was used before')`. */
export function acmeProblem(
  type: AcmeProblemType,
  detail: string,
  options?: ConstructorParameters<typeof AcmeProblemError>[2],
): AcmeProblemError {
  return new AcmeProblemError(type, detail, options);
}

export function isAcmeProblemError(value: unknown): value is AcmeProblemError {
  return isCertwrightError(value) && typeof (value as { acmeType?: unknown }).acmeType === 'string';
}

/** An RFC 8555 §6.7 problem document, ready to serialize. */
export interface AcmeProblemDocument {
  type: string;
  detail: string;
  status: number;
  [member: string]: unknown;
}

export interface ProblemAnswer {
  status: number;
  body: AcmeProblemDocument;
  headers: Record<string, string>;
  /** Whether the cause must be logged (internal failures, unavailable storage). */
  log: boolean;
}

/**
 * What to answer for any thrown value: its problem document with the public message only.
 * Internal causes never reach the client (`publicMessage`).
 */
export function problemFromError(error: unknown, context: ProblemContext = {}): ProblemAnswer {
  if (isAcmeProblemError(error)) {
    return {
      status: error.status,
      body: {
        ...error.members,
        type: `${ACME_ERROR_PREFIX}${error.acmeType}`,
        detail: publicMessage(error),
        status: error.status,
      },
      headers: error.headers,
      log: error.acmeType === 'serverInternal',
    };
  }
  if (isCertwrightError(error)) {
    const mapping = problemForReason(error.reason, context);
    const retryAfter = error.extra.retry_after_seconds;
    return {
      status: mapping.status,
      body: {
        type: `${ACME_ERROR_PREFIX}${mapping.type}`,
        detail: publicMessage(error),
        status: mapping.status,
      },
      headers: typeof retryAfter === 'number' ? { 'retry-after': String(retryAfter) } : {},
      log: mapping.type === 'serverInternal',
    };
  }
  return {
    status: 500,
    body: { type: `${ACME_ERROR_PREFIX}serverInternal`, detail: INTERNAL_ERROR_MESSAGE, status: 500 },
    headers: {},
    log: true,
  };
}
