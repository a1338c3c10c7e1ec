/** `@certwright/protocols/crl`: the CRL endpoint (RFC 5280, RFC 2585) and its mount. */

export {
  CA_ISSUERS_BASE_PATH,
  type CaCertificateSource,
  caIssuersMount,
  createCaIssuersHandler,
} from './ca-issuers.js';
export {
  CRL_BASE_PATH,
  type CrlHandlerOptions,
  type CrlSource,
  type CurrentCrl,
  createCrlHandler,
} from './handler.js';
export { type CrlMountOptions, crlMount } from './mount.js';
