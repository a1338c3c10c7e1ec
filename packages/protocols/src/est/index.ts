/** `@certwright/protocols/est`: the EST server's wire (RFC 7030, RFC 8951) and its mounts. */
export type { EstAuthority } from './authority.js';
export {
  createEstHandler,
  EST_BASE_PATH,
  EST_MAX_BODY_BYTES,
  EST_MTLS_BASE_PATH,
  type EstHandlerOptions,
  parseEstPath,
} from './handler.js';
export { type EstMountOptions, estMounts } from './mount.js';
export { estStatus } from './status.js';
export {
  base64Lines,
  basicCredentials,
  CSRATTRS,
  multipartMixed,
  PKCS7_CERTS_ONLY,
  PKCS7_SERVER_KEY,
} from './wire.js';
