/**
 * Stable error codes. Callers switch on `code`, never on message text. Each surface (REST,
 * ACME, EST, SCEP, OCSP) maps codes to its own wire format; the domain never knows HTTP.
 */
export type ErrorCode =
  | 'validation_failed'
  | 'bad_request'
  | 'invalid_reference'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'gone'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'unavailable'
  | 'config_invalid'
  | 'internal';

export interface FieldIssue {
  /** Dotted path of the offending field, e.g. `alert_thresholds_days.2`. */
  field: string;
  message: string;
}

export interface CertwrightErrorOptions {
  cause?: unknown;
  /** Per-field problems; set for `validation_failed` and `invalid_reference`. */
  fields?: FieldIssue[];
  /** Extra members a surface adds to its error body (e.g. agent-retirement counts). */
  extra?: Record<string, unknown>;
}

export class CertwrightError extends Error {
  override readonly name = 'CertwrightError';
  readonly code: ErrorCode;
  readonly fields: FieldIssue[];
  readonly extra: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: CertwrightErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.fields = options.fields ?? [];
    this.extra = options.extra ?? {};
  }
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
