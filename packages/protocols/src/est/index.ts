/** `@certwright/protocols/est`: the EST server's wire (RFC 7030, RFC 8951) and its mounts. */

export { type EstMountOptions, estMounts } from './mount.js';
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
} from './server/enrollment.js';
export { createEstServer, type EstKernel, type EstServerOptions } from './server/est-server.js';
export type { EstAuthority } from './wire/authority.js';
export {
  base64Lines,
  basicCredentials,
  CSRATTRS,
  multipartMixed,
  PKCS7_CERTS_ONLY,
  PKCS7_SERVER_KEY,
} from './wire/encoding.js';
export {
  createEstHandler,
  EST_BASE_PATH,
  EST_MAX_BODY_BYTES,
  EST_MTLS_BASE_PATH,
  type EstHandlerOptions,
  parseEstPath,
} from './wire/handler.js';
export { estStatus } from './wire/status.js';
