export { type CsrAttributes, csrAttributesFor } from './csr-attributes.js';
export {
  DEFAULT_EST_RATE_LIMIT,
  EST_AUDIT_ACTIONS,
  EST_COUNTERS,
  EST_OPERATIONS,
  type EstAuditAction,
  type EstClient,
  type EstEnrollResult,
  type EstIssuance,
  type EstOperation,
  type EstOptions,
  type EstPrincipal,
  type EstProfileStats,
  EstService,
  serverKeygenAlgorithm,
  TLS_EXPORTER_LABEL,
} from './enrollment.js';
