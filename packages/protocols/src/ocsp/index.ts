/** `@certwright/protocols/ocsp`: the OCSP responder's wire (RFC 6960, RFC 5019) and its mount. */
export {
  createOcspHandler,
  decodeGetRequest,
  maxGetPathLength,
  OCSP_BASE_PATH,
  OCSP_GET_MAX_REQUEST_BYTES,
  type OcspAnswer,
  type OcspHandler,
  type OcspHandlerOptions,
  type OcspSource,
  type SerialStatus,
} from './handler.js';
export { type OcspMountOptions, ocspMount } from './mount.js';
