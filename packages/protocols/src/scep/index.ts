/** `@certwright/protocols/scep`: the SCEP server's wire (RFC 8894) and its mounts. */
export type { ScepAuthority } from './authority.js';
export { type ScepHttpFailure, scepFailInfo } from './fail-info.js';
export {
  createScepHandler,
  parseScepPath,
  SCEP_BASE_PATH,
  SCEP_CA_CERT,
  SCEP_CA_RA_CERT,
  SCEP_MAX_BODY_BYTES,
  SCEP_MTLS_BASE_PATH,
  SCEP_OPERATIONS,
  SCEP_PKI_MESSAGE,
  type ScepDirect,
  type ScepHandler,
  type ScepHandlerOptions,
  type ScepOperation,
} from './handler.js';
export { type ScepMountOptions, scepMounts } from './mount.js';
