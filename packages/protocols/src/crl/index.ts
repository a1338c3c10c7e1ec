/** `@certwright/protocols/crl`: the CRL endpoint (RFC 5280, RFC 2585) and its mount. */
export {
  CRL_BASE_PATH,
  type CrlHandlerOptions,
  type CrlSource,
  type CurrentCrl,
  createCrlHandler,
} from './handler.js';
export { type CrlMountOptions, crlMount } from './mount.js';
