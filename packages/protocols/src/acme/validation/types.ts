/**
 * The contract between the ACME server and its challenge validators (RFC 8555 §8, RFC 8737,
 * RFC 8738). The ACME protocol layer maps the reasons to problem types: `address_refused`,
 * `connection_failed`, `timed_out` → connection; `dns_failed` → dns; `tls_failed` → tls;
 * `incorrect_response` → incorrectResponse.
 */

export type AcmeChallengeType = 'http-01' | 'dns-01' | 'tls-alpn-01';

export interface ChallengeToValidate {
  type: AcmeChallengeType;
  /** As in the order; a wildcard dns identifier keeps its '*.' (only dns-01 is offered for it). */
  identifier: { type: 'dns' | 'ip'; value: string };
  token: string;
  /** token + '.' + base64url(RFC 7638 thumbprint of the account key). */
  keyAuthorization: string;
}

/**
 * Resolves when the challenge is satisfied; otherwise rejects with a CertwrightError whose reason is one of
 * address_refused | dns_failed | connection_failed | timed_out | tls_failed | incorrect_response,
 * with a message that is safe to show the ACME client (what was expected and what was seen, no internal detail).
 * A challenge the caller built wrongly (unknown type, a token that is not base64url, a key
 * authorization that does not start with the token, a wildcard or IP identifier with a type not
 * offered for it) is refused with `invalid_input` before any connection: it is a bug of the
 * caller, never an outcome of the client's server.
 */
export type ChallengeValidator = (challenge: ChallengeToValidate, signal?: AbortSignal) => Promise<void>;

export interface ChallengeValidatorOptions {
  /** Default 80 (SVC_ACME_SERVER_HTTP01_PORT). */
  httpPort?: number;
  /** Default 443 (SVC_ACME_SERVER_TLSALPN01_PORT). */
  tlsAlpnPort?: number;
  /** 'ip:port', default '8.8.8.8:53' (SVC_ACME_SERVER_DNS01_RESOLVER) — TXT lookups never use the system resolver. */
  dns01Resolver?: string;
  /** Optional 'ip:port' used to resolve identifiers for http-01 and tls-alpn-01 (SVC_ACME_SERVER_VALIDATION_RESOLVER); default the system resolver. */
  validationResolver?: string;
  /** The guard's allowlist for validation connections (SVC_ACME_SERVER_VALIDATION_ALLOWED_RANGES); loopback only when listed explicitly. */
  allowedRanges?: string[];
  /** Default 30_000 per challenge: every phase (lookups, connects, redirects, reads) within it. */
  timeoutMs?: number;
  /** Test seam, overrides validationResolver. */
  resolver?: (name: string) => Promise<string[]>;
  /** Test seam, overrides dns01Resolver: the TXT records of `name`, each as its strings. */
  txtResolver?: (name: string) => Promise<string[][]>;
}
