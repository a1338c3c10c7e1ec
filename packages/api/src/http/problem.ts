import { type CertwrightError, DEFAULT_REASONS, type ErrorCode, publicMessage } from '@certwright/core';

/** REST mapping of the stable error codes; the domain never chooses an HTTP status. */
export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  validation_failed: 400,
  bad_request: 400,
  invalid_reference: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  rate_limited: 429,
  unavailable: 503,
  config_invalid: 500,
  internal: 500,
};

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/**
 * Words only HTTP has (the router's 405, a body's media type): they describe the request's
 * shape, not a domain failure, so they never appear in the core's ErrorCode.
 */
export type EdgeCode = ErrorCode | 'method_not_allowed' | 'unsupported_media_type';

export interface ProblemInit {
  status: number;
  code: EdgeCode;
  /** The domain's precise reason, when it says more than the code. */
  reason?: string;
  detail: string;
  requestId: string;
  fields?: { field: string; message: string }[];
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** RFC 9457 problem document with the members certwright adds (`error`, `request_id`, `errors`). */
export function problem(init: ProblemInit): Response {
  const body: Record<string, unknown> = {
    ...init.extra,
    type: `urn:certwright:error:${init.code}`,
    title: TITLES[init.status] ?? 'Error',
    status: init.status,
    detail: init.detail,
    error: init.code,
    request_id: init.requestId,
  };
  if (init.reason) body.reason = init.reason;
  if (init.fields && init.fields.length > 0) body.errors = init.fields;
  return new Response(JSON.stringify(body), {
    status: init.status,
    headers: { 'content-type': 'application/problem+json', ...init.headers },
  });
}

export function problemFromError(error: CertwrightError, requestId: string): Response {
  const status = STATUS_BY_CODE[error.code] ?? 500;
  const headers: Record<string, string> = {};
  if (status === 401) headers['www-authenticate'] = 'Bearer';
  return problem({
    status,
    code: error.code,
    // A code's default reason adds nothing to `error`.
    ...(error.exposed && error.reason !== DEFAULT_REASONS[error.code] ? { reason: error.reason } : {}),
    detail: publicMessage(error),
    requestId,
    fields: error.fields,
    extra: error.exposed ? error.extra : {},
    headers,
  });
}
