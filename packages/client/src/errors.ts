import type { components } from './generated/schema.js';

/** The RFC 9457 problem document every REST error answer carries. */
export type Problem = components['schemas']['Problem'];

export const UPGRADE_GUIDE = 'docs/clients/https-upgrade.md';

/** Base of every error this package throws, so callers can tell ours from their own. */
export class CertwrightClientError extends Error {
  override name = 'CertwrightClientError';
}

/** The client was configured wrongly: nothing was sent. */
export class ClientConfigError extends CertwrightClientError {
  override name = 'ClientConfigError';
}

/** A plaintext base URL: certwright serves HTTPS only, so sending the API key in clear is refused. */
export class InsecureBaseUrlError extends ClientConfigError {
  override name = 'InsecureBaseUrlError';
  constructor(readonly baseUrl: string) {
    super(
      `refusing the plaintext base URL ${baseUrl}: certwright serves HTTPS only (TLS 1.3); ` +
        `use https:// — see the upgrade guide ${UPGRADE_GUIDE}`,
    );
  }
}

/** The server answered with an error status; `problem` is its problem document. */
export class ProblemError extends CertwrightClientError {
  override name = 'ProblemError';
  readonly status: number;
  /** The stable snake_case code (`not_found`, `conflict`, `validation_failed` …). */
  readonly code: string;
  constructor(
    readonly operationId: string,
    readonly problem: Problem,
    /** Seconds from a Retry-After header, when the server sent one. */
    readonly retryAfterSeconds?: number,
  ) {
    const fields = problem.errors?.length
      ? `: ${problem.errors.map((e) => `${e.field} ${e.message}`).join('; ')}`
      : '';
    super(`${operationId}: ${problem.status} ${problem.title}: ${problem.detail}${fields}`);
    this.status = problem.status;
    this.code = problem.error;
  }
}

export type ConnectionFailure = 'unreachable' | 'tls-untrusted' | 'tls' | 'timeout' | 'aborted';

/** No HTTP answer at all: the server is down, unreachable, or its certificate is not trusted. */
export class ConnectionError extends CertwrightClientError {
  override name = 'ConnectionError';
  constructor(
    readonly kind: ConnectionFailure,
    readonly url: string,
    /** The system error code (ECONNREFUSED, UNABLE_TO_VERIFY_LEAF_SIGNATURE …), when there is one. */
    readonly code: string | undefined,
    options?: { cause?: unknown; detail?: string },
  ) {
    super(`${describe(kind, code ?? options?.detail)} (${url})`, options);
  }
}

function describe(kind: ConnectionFailure, code: string | undefined): string {
  switch (kind) {
    case 'unreachable':
      return `cannot reach the certwright server${code ? `: ${code}` : ''}`;
    case 'tls-untrusted':
      return `the server's TLS certificate is not trusted${code ? ` (${code})` : ''}; set SVC_SERVER_CA_BUNDLE_PATH to the CA that issued it`;
    case 'tls':
      return `TLS handshake with the server failed${code ? `: ${code}` : ''}`;
    case 'timeout':
      return 'the server did not answer in time';
    case 'aborted':
      return 'the request was aborted';
  }
}

const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Classifies what fetch threw; the system error hides in a chain of causes. */
export function connectionError(error: unknown, url: string): ConnectionError {
  let code: string | undefined;
  let name: string | undefined;
  let detail: string | undefined;
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    const candidate = e as { code?: unknown; name?: unknown; cause?: unknown; message?: unknown };
    if (typeof candidate.code === 'string' && code === undefined) code = candidate.code;
    // The innermost message says most ("bad port", "getaddrinfo ENOTFOUND …"); fetch's own is "fetch failed".
    if (typeof candidate.message === 'string' && candidate.message !== '' && depth > 0)
      detail = candidate.message;
    if (
      typeof candidate.name === 'string' &&
      (candidate.name === 'AbortError' || candidate.name === 'TimeoutError')
    )
      name = candidate.name;
    e = candidate.cause;
  }
  const kind: ConnectionFailure =
    name === 'TimeoutError' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT'
      ? 'timeout'
      : name === 'AbortError'
        ? 'aborted'
        : code && UNTRUSTED.has(code)
          ? 'tls-untrusted'
          : code?.startsWith('ERR_SSL') || code?.startsWith('ERR_TLS')
            ? 'tls'
            : 'unreachable';
  return new ConnectionError(kind, url, code, { cause: error, ...(detail ? { detail } : {}) });
}
