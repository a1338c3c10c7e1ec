import type { FailureReason } from '@certwright/core';

/**
 * EST answers failures with HTTP statuses (RFC 7030 §4.2.3) and a short text body; this is
 * the one table from a failure reason to the status (docs/architecture.md, "Errors and
 * reasons"). 401 is special-cased by the handler: empty body and `WWW-Authenticate`.
 */
export function estStatus(reason: FailureReason): number {
  switch (reason) {
    case 'invalid_input':
    case 'key_rejected':
    case 'key_not_allowed':
    case 'runtime_unsupported':
    case 'signature_algorithm_not_allowed':
    case 'name_rejected':
    case 'name_not_allowed':
    case 'names_mismatch':
    case 'csr_attribute_missing':
    case 'eku_not_allowed':
    case 'extension_not_allowed':
    case 'validity_not_allowed':
    case 'time_invalid':
    case 'address_refused':
    case 'incorrect_response':
    case 'malformed':
    case 'csr_malformed':
    case 'csr_signature_invalid':
    case 'signature_invalid':
    case 'invalid_reference':
      return 400;
    case 'unauthenticated':
      return 401;
    case 'not_permitted':
    case 'issuer_disabled':
      return 403;
    case 'not_found':
      return 404;
    case 'conflict':
    case 'duplicate':
    case 'still_referenced':
    case 'invalid_state':
    case 'already_revoked':
    case 'revocation_unavailable':
      return 409;
    case 'gone':
      return 410;
    case 'too_large':
      // An oversized CSR is a bad CSR like a truncated one: 400 with the reason.
      return 400;
    case 'response_too_large':
      return 502;
    case 'rate_limited':
      return 429;
    case 'issuer_not_ready':
    case 'unavailable':
    case 'audit_head_missing':
    case 'dns_failed':
    case 'connection_failed':
    case 'tls_failed':
    case 'timed_out':
    case 'redirect_refused':
      return 503;
    case 'config_invalid':
    case 'internal':
      return 500;
  }
}
