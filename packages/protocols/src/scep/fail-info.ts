import type { FailureReason } from '@certwright/core';
import type { ScepFailInfo } from '@certwright/core/pki';

/**
 * SCEP answers a refused request with a CertRep FAILURE and a failInfo (RFC 8894 §3.2.1.4);
 * this is the one table from a failure reason to the failInfo (docs/architecture.md, "Errors
 * and reasons"). The reason itself goes to the audit trail and the log, never on the wire.
 */
export function scepFailInfo(reason: FailureReason): ScepFailInfo {
  switch (reason) {
    case 'signature_algorithm_not_allowed':
      return 'badAlg';
    case 'signature_invalid':
    case 'csr_signature_invalid':
      return 'badMessageCheck';
    case 'time_invalid':
    case 'validity_not_allowed':
      return 'badTime';
    case 'not_found':
    case 'gone':
      return 'badCertId';
    case 'invalid_input':
    case 'key_rejected':
    case 'key_not_allowed':
    case 'name_rejected':
    case 'name_not_allowed':
    case 'names_mismatch':
    case 'csr_attribute_missing':
    case 'eku_not_allowed':
    case 'extension_not_allowed':
    case 'address_refused':
    case 'incorrect_response':
    case 'malformed':
    case 'csr_malformed':
    case 'invalid_reference':
    case 'unauthenticated':
    case 'not_permitted':
    case 'issuer_disabled':
    case 'conflict':
    case 'duplicate':
    case 'still_referenced':
    case 'invalid_state':
    case 'already_revoked':
    case 'too_large':
    case 'response_too_large':
    case 'rate_limited':
    case 'issuer_not_ready':
    case 'unavailable':
    case 'dns_failed':
    case 'connection_failed':
    case 'tls_failed':
    case 'timed_out':
    case 'redirect_refused':
    case 'config_invalid':
    case 'internal':
      return 'badRequest';
  }
}
