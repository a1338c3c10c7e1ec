import type { FailureReason } from '@certwright/core';
import type { ScepFailInfo } from '@certwright/core/pki';

/** A refusal answered with an HTTP status instead of a CertRep: the server's trouble, not the request's. */
export interface ScepHttpFailure {
  http: 413 | 500 | 503;
}

/**
 * SCEP answers a refused request with a CertRep FAILURE and a failInfo (RFC 8894 §3.2.1.4);
 * this is the one table from a failure reason to the failInfo, or to an HTTP status where a
 * FAILURE would blame the client for the server's state (docs/architecture.md, "Errors and
 * reasons"). The reason itself goes to the audit trail and the log, never on the wire.
 */
export function scepFailInfo(reason: FailureReason): ScepFailInfo | ScepHttpFailure {
  switch (reason) {
    case 'key_rejected':
    case 'key_not_allowed':
    case 'runtime_unsupported':
    case 'signature_algorithm_not_allowed':
      return 'badAlg';
    case 'signature_invalid':
    case 'csr_signature_invalid':
      return 'badMessageCheck';
    case 'time_invalid':
      return 'badTime';
    case 'not_found':
      return 'badCertId';
    case 'invalid_input':
    case 'name_rejected':
    case 'name_not_allowed':
    case 'names_mismatch':
    case 'csr_attribute_missing':
    case 'eku_not_allowed':
    case 'extension_not_allowed':
    case 'validity_not_allowed':
    case 'address_refused':
    case 'incorrect_response':
    case 'malformed':
    case 'csr_malformed':
    case 'invalid_reference':
    case 'unauthenticated':
    case 'not_permitted':
    case 'conflict':
    case 'duplicate':
    case 'still_referenced':
    case 'invalid_state':
    case 'already_revoked':
    case 'revocation_unavailable':
    case 'issuer_disabled':
    case 'gone':
      return 'badRequest';
    case 'too_large':
    case 'response_too_large':
      return { http: 413 };
    case 'issuer_not_ready':
    case 'rate_limited':
    case 'unavailable':
    case 'audit_head_missing':
    case 'dns_failed':
    case 'connection_failed':
    case 'tls_failed':
    case 'timed_out':
    case 'redirect_refused':
      return { http: 503 };
    case 'config_invalid':
    case 'internal':
      return { http: 500 };
  }
}
